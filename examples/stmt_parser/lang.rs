//! The code under test in `examples/stmt_parser.rs`: a lexer, a
//! recursive-descent parser and a checker for a Lua-like language, in the
//! shape of a real language front end.
//!
//! - [`plain::lex`] makes a `Vec<Token>`, with every name and string
//!   literal copied into a `Box<str>` of its own;
//! - [`plain::parse`] builds the tree: statements over `Vec<Stmt>` blocks,
//!   expressions by precedence climbing into `Box<Expr>` nodes, argument
//!   lists of `Box<Expr>`, table constructors as `Vec<Field>`, and every
//!   name and string copied again, into a `String`;
//! - [`plain::check`] walks the tree: it resolves names to locals or
//!   globals through a scope stack, folds constant operators and counts
//!   what it saw into a [`Summary`].
//!
//! The code is written once, in `front_end!`, and written out twice:
//! [`plain`] as it stands, [`batched`] with `#[batch_alloc]` on every
//! function and every `impl` block, as a user who annotates everything
//! would. The types are shared, so trees and summaries of the two compare
//! equal. A harness that wants this program under other global allocators
//! includes this file alone, by path (it names `batch_alloc` and nothing
//! else outside `std`).
//!
//! The language, a subset of Lua 5.3 (`lex` and `parse` take no more):
//!
//! ```text
//! block    = { stat [";"] } [ "return" [exprs] [";"] ]
//! stat     = "local" name {"," name} ["=" exprs]
//!          | "local" "function" name body
//!          | "function" name {"." name} [":" name] body
//!          | "if" expr "then" block {"elseif" expr "then" block} ["else" block] "end"
//!          | "while" expr "do" block "end"
//!          | "for" name "=" expr "," expr ["," expr] "do" block "end"
//!          | "for" name {"," name} "in" exprs "do" block "end"
//!          | "do" block "end" | "break"
//!          | suffixed {"," suffixed} "=" exprs      (names, fields, indexes)
//!          | suffixed                               (a call)
//! body     = "(" [name {"," name}] ")" block "end"
//! expr     = unop expr | expr binop expr | "nil" | "true" | "false"
//!          | number | string | "function" body | table | suffixed
//! suffixed = (name | "(" expr ")") { "." name | "[" expr "]" | ":" name args | args }
//! args     = "(" [expr {"," expr}] ")"
//! table    = "{" [field {("," | ";") field} [","| ";"]] "}"
//! field    = "[" expr "]" "=" expr | name "=" expr | expr
//! ```
//!
//! Binary operators, loosest first: `or`; `and`; `< > <= >= ~= ==`; `..`
//! (to the right); `+ -`; `* / // %`; then the unary `not # -`; then `^`
//! (to the right, and tighter than a unary operator on its left). Numbers
//! are decimal or `0x` integers (`i64`) and decimal floats; strings are
//! quoted with `"` or `'`, with the escapes `\n \t \r \a \b \f \v \\ \" \'`,
//! `\ddd` and `\xhh` (a code point up to 255) and `\` before a newline;
//! `--` starts a comment that runs to the end of the line.

// Argument lists hold boxed expressions, as many front ends' do.
#![allow(clippy::vec_box)]

use std::borrow::Cow;
use std::fmt;

/// How deeply expressions and blocks may nest together: the parser recurses
/// once per level, and so do the checker and the drop of the tree.
pub const MAX_DEPTH: u32 = 200;

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: Tok,
    /// Where the token starts: line and column (in bytes), from 1.
    pub line: u32,
    pub column: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Name(Box<str>),
    /// A string literal's value, escapes decoded.
    Str(Box<str>),
    Int(i64),
    Float(f64),
    Kw(Kw),
    Sym(Sym),
    /// The last token of every `lex` result.
    Eof,
}

/// The token `parse` sees past the end of a token list that has no
/// [`Tok::Eof`] of its own.
static EOF: Token = Token {
    kind: Tok::Eof,
    line: 0,
    column: 0,
};

macro_rules! spelled {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name {
            $($variant,)*
        }

        impl $name {
            pub fn text(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }
        }
    };
}

spelled! {
    /// Reserved words.
    Kw {
        And = "and", Break = "break", Do = "do", Else = "else", Elseif = "elseif",
        End = "end", False = "false", For = "for", Function = "function",
        If = "if", In = "in", Local = "local", Nil = "nil", Not = "not",
        Or = "or", Return = "return", Then = "then", True = "true",
        While = "while",
    }
}

spelled! {
    /// Operators and punctuation.
    Sym {
        Plus = "+", Minus = "-", Star = "*", Slash = "/", SlashSlash = "//",
        Percent = "%", Caret = "^", Hash = "#", DotDot = "..", Eq = "==",
        Ne = "~=", Le = "<=", Ge = ">=", Lt = "<", Gt = ">", Assign = "=",
        LParen = "(", RParen = ")", LBrace = "{", RBrace = "}",
        LBracket = "[", RBracket = "]", Semi = ";", Colon = ":",
        Comma = ",", Dot = ".",
    }
}

impl Kw {
    pub fn from_word(word: &str) -> Option<Kw> {
        Some(match word {
            "and" => Kw::And,
            "break" => Kw::Break,
            "do" => Kw::Do,
            "else" => Kw::Else,
            "elseif" => Kw::Elseif,
            "end" => Kw::End,
            "false" => Kw::False,
            "for" => Kw::For,
            "function" => Kw::Function,
            "if" => Kw::If,
            "in" => Kw::In,
            "local" => Kw::Local,
            "nil" => Kw::Nil,
            "not" => Kw::Not,
            "or" => Kw::Or,
            "return" => Kw::Return,
            "then" => Kw::Then,
            "true" => Kw::True,
            "while" => Kw::While,
            _ => return None,
        })
    }
}

/// How a token is named in an error message.
impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Tok::Name(name) => write!(f, "`{name}`"),
            Tok::Str(_) => f.write_str("a string"),
            Tok::Int(_) | Tok::Float(_) => f.write_str("a number"),
            Tok::Kw(kw) => write!(f, "`{}`", kw.text()),
            Tok::Sym(sym) => write!(f, "`{}`", sym.text()),
            Tok::Eof => f.write_str("the end of the input"),
        }
    }
}

/// A block: the statements of a chunk, a function body or a branch.
pub type Block = Vec<Stmt>;

#[derive(Debug, PartialEq)]
pub enum Stmt {
    /// `local a, b = 1, 2` (`values` may be empty).
    Local {
        names: Vec<String>,
        values: Vec<Expr>,
    },
    /// `a, t.x, t[i] = 1, 2, 3`: every target a name, field or index.
    Assign {
        targets: Vec<Expr>,
        values: Vec<Expr>,
    },
    /// A call or method call, for its effects.
    Call(Expr),
    /// `local function f(a) ... end`
    LocalFunction {
        name: String,
        func: Box<Function>,
    },
    /// `function m.sub.f(a) ... end`, or with `method`, `function m:f(a)`.
    Function {
        path: Vec<String>,
        method: Option<String>,
        func: Box<Function>,
    },
    /// `if c then ... elseif c then ... else ... end`
    If {
        arms: Vec<(Expr, Block)>,
        otherwise: Option<Block>,
    },
    While {
        cond: Box<Expr>,
        body: Block,
    },
    NumericFor(Box<NumericFor>),
    /// `for k, v in pairs(t) do ... end`
    GenericFor {
        names: Vec<String>,
        exprs: Vec<Expr>,
        body: Block,
    },
    Do(Block),
    Break,
    Return(Vec<Expr>),
}

/// `for i = start, end, step do ... end`
#[derive(Debug, PartialEq)]
pub struct NumericFor {
    pub var: String,
    pub start: Expr,
    pub end: Expr,
    pub step: Option<Expr>,
    pub body: Block,
}

/// A function's parameters and body (for a method, `self` is implicit).
#[derive(Debug, PartialEq)]
pub struct Function {
    pub params: Vec<String>,
    pub body: Block,
}

#[derive(Debug, PartialEq)]
pub enum Expr {
    Nil,
    True,
    False,
    Int(i64),
    Float(f64),
    Str(String),
    Name(String),
    Function(Box<Function>),
    Table(Vec<Field>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `e.name`
    Field(Box<Expr>, String),
    /// `e[key]`
    Index(Box<Expr>, Box<Expr>),
    Call(Box<Expr>, Vec<Box<Expr>>),
    /// `e:name(args)`
    Method(Box<Expr>, String, Vec<Box<Expr>>),
}

/// One entry of a table constructor.
#[derive(Debug, PartialEq)]
pub enum Field {
    /// `value`: the next array slot.
    Pos(Expr),
    /// `name = value`
    Named(String, Expr),
    /// `[key] = value`
    Keyed(Box<Expr>, Expr),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
    Len,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Or,
    And,
    Lt,
    Gt,
    Le,
    Ge,
    Ne,
    Eq,
    Concat,
    Add,
    Sub,
    Mul,
    Div,
    IDiv,
    Mod,
    Pow,
}

/// Binding power of a unary operator: tighter than any binary operator
/// but `^`.
const UNARY_PRIORITY: u8 = 12;

impl BinOp {
    fn from_tok(tok: &Tok) -> Option<BinOp> {
        Some(match tok {
            Tok::Kw(Kw::Or) => BinOp::Or,
            Tok::Kw(Kw::And) => BinOp::And,
            Tok::Sym(sym) => match sym {
                Sym::Lt => BinOp::Lt,
                Sym::Gt => BinOp::Gt,
                Sym::Le => BinOp::Le,
                Sym::Ge => BinOp::Ge,
                Sym::Ne => BinOp::Ne,
                Sym::Eq => BinOp::Eq,
                Sym::DotDot => BinOp::Concat,
                Sym::Plus => BinOp::Add,
                Sym::Minus => BinOp::Sub,
                Sym::Star => BinOp::Mul,
                Sym::Slash => BinOp::Div,
                Sym::SlashSlash => BinOp::IDiv,
                Sym::Percent => BinOp::Mod,
                Sym::Caret => BinOp::Pow,
                _ => return None,
            },
            _ => return None,
        })
    }

    /// Lua's binding powers, (left, right): an operator takes a right
    /// operand of the operators that bind tighter than its right power; a
    /// right power below the left one makes it right-associative.
    fn priority(self) -> (u8, u8) {
        match self {
            BinOp::Or => (1, 1),
            BinOp::And => (2, 2),
            BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge | BinOp::Ne | BinOp::Eq => (3, 3),
            BinOp::Concat => (9, 8),
            BinOp::Add | BinOp::Sub => (10, 10),
            BinOp::Mul | BinOp::Div | BinOp::IDiv | BinOp::Mod => (11, 11),
            BinOp::Pow => (14, 13),
        }
    }
}

impl UnOp {
    fn from_tok(tok: &Tok) -> Option<UnOp> {
        match tok {
            Tok::Sym(Sym::Minus) => Some(UnOp::Neg),
            Tok::Kw(Kw::Not) => Some(UnOp::Not),
            Tok::Sym(Sym::Hash) => Some(UnOp::Len),
            _ => None,
        }
    }
}

/// The kinds of statement, in the order of [`Summary::statements`].
pub const STMT_KINDS: [&str; 12] = [
    "local",
    "assign",
    "call",
    "local function",
    "function",
    "if",
    "while",
    "numeric for",
    "generic for",
    "do",
    "break",
    "return",
];

/// The kinds of expression, in the order of [`Summary::expressions`].
pub const EXPR_KINDS: [&str; 15] = [
    "nil",
    "true",
    "false",
    "integer",
    "float",
    "string",
    "name",
    "function",
    "table",
    "unary",
    "binary",
    "field",
    "index",
    "call",
    "method call",
];

impl Stmt {
    /// Index into [`STMT_KINDS`].
    pub fn kind(&self) -> usize {
        match self {
            Stmt::Local { .. } => 0,
            Stmt::Assign { .. } => 1,
            Stmt::Call(_) => 2,
            Stmt::LocalFunction { .. } => 3,
            Stmt::Function { .. } => 4,
            Stmt::If { .. } => 5,
            Stmt::While { .. } => 6,
            Stmt::NumericFor(_) => 7,
            Stmt::GenericFor { .. } => 8,
            Stmt::Do(_) => 9,
            Stmt::Break => 10,
            Stmt::Return(_) => 11,
        }
    }
}

impl Expr {
    /// Index into [`EXPR_KINDS`].
    pub fn kind(&self) -> usize {
        match self {
            Expr::Nil => 0,
            Expr::True => 1,
            Expr::False => 2,
            Expr::Int(_) => 3,
            Expr::Float(_) => 4,
            Expr::Str(_) => 5,
            Expr::Name(_) => 6,
            Expr::Function(_) => 7,
            Expr::Table(_) => 8,
            Expr::Unary(..) => 9,
            Expr::Binary(..) => 10,
            Expr::Field(..) => 11,
            Expr::Index(..) => 12,
            Expr::Call(..) => 13,
            Expr::Method(..) => 14,
        }
    }
}

/// A lexical or syntax error, where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for ParseError {}

/// What [`plain::check`] saw in a tree. Equal trees give equal summaries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Statements of each kind of [`STMT_KINDS`].
    pub statements: [u64; 12],
    /// Expressions of each kind of [`EXPR_KINDS`].
    pub expressions: [u64; 15],
    /// Entries of table constructors.
    pub fields: u64,
    /// Function bodies, named and anonymous.
    pub functions: u64,
    /// Locals declared: by `local`, parameters, loop variables, `self`.
    pub locals: u64,
    /// Names that resolved to a local in scope, and those that did not.
    pub local_refs: u64,
    pub global_refs: u64,
    /// The deepest nesting of blocks (the chunk is 1).
    pub max_depth: u64,
    /// FNV-1a of every name declared or used, in order.
    pub names_hash: u64,
    /// Bytes in string literals, and FNV-1a of their values.
    pub string_bytes: u64,
    pub strings_hash: u64,
    /// Unary and binary operators whose value is known without running
    /// the program, and a hash of those values.
    pub folded: u64,
    pub folded_hash: u64,
    /// `Box`es in the tree.
    pub boxes: u64,
    /// Heap blocks the tree holds: its boxes, non-empty strings and
    /// non-empty vectors.
    pub heap_blocks: u64,
}

/// A value known at compile time.
#[derive(Clone, Debug, PartialEq)]
enum Value<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Cow<'a, str>),
}

impl<'a> Value<'a> {
    fn truthy(&self) -> bool {
        !matches!(self, Value::Nil | Value::Bool(false))
    }

    fn number(&self) -> Option<f64> {
        match *self {
            Value::Int(n) => Some(n as f64),
            Value::Float(x) => Some(x),
            _ => None,
        }
    }

    fn text(&self) -> Option<Cow<'a, str>> {
        match self {
            Value::Str(s) => Some(s.clone()),
            Value::Int(n) => Some(Cow::Owned(n.to_string())),
            Value::Float(x) => Some(Cow::Owned(format!("{x:?}"))),
            _ => None,
        }
    }

    fn unary(op: UnOp, v: Value<'a>) -> Option<Value<'a>> {
        Some(match (op, v) {
            (UnOp::Not, v) => Value::Bool(!v.truthy()),
            (UnOp::Neg, Value::Int(n)) => Value::Int(n.wrapping_neg()),
            (UnOp::Neg, Value::Float(x)) => Value::Float(-x),
            (UnOp::Len, Value::Str(s)) => Value::Int(s.len() as i64),
            _ => return None,
        })
    }

    /// Lua's semantics, but for what only runs (a comparison of a number
    /// with a string, arithmetic on a string, integer division by zero):
    /// those are not folded.
    fn binary(op: BinOp, a: Value<'a>, b: Value<'a>) -> Option<Value<'a>> {
        use std::cmp::Ordering;
        let order = || match (&a, &b) {
            (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
            _ => a.number()?.partial_cmp(&b.number()?),
        };
        Some(match op {
            BinOp::Or => match a.truthy() {
                true => a,
                false => b,
            },
            BinOp::And => match a.truthy() {
                true => b,
                false => a,
            },
            BinOp::Eq | BinOp::Ne => {
                let equal = match (a.number(), b.number()) {
                    (Some(x), Some(y)) => x == y,
                    _ => a == b,
                };
                Value::Bool(equal == (op == BinOp::Eq))
            }
            BinOp::Lt => Value::Bool(order()? == Ordering::Less),
            BinOp::Gt => Value::Bool(order()? == Ordering::Greater),
            BinOp::Le => Value::Bool(order()? != Ordering::Greater),
            BinOp::Ge => Value::Bool(order()? != Ordering::Less),
            BinOp::Concat => {
                let mut text = a.text()?.into_owned();
                text.push_str(&b.text()?);
                Value::Str(Cow::Owned(text))
            }
            _ => match (a, b) {
                (Value::Int(x), Value::Int(y)) => Value::Int(match op {
                    BinOp::Add => x.wrapping_add(y),
                    BinOp::Sub => x.wrapping_sub(y),
                    BinOp::Mul => x.wrapping_mul(y),
                    BinOp::IDiv if y == 0 => return None,
                    BinOp::IDiv => x.wrapping_sub(floor_rem(x, y)).wrapping_div(y),
                    BinOp::Mod if y == 0 => return None,
                    BinOp::Mod => floor_rem(x, y),
                    _ => return Value::float(op, x as f64, y as f64),
                }),
                (a, b) => return Value::float(op, a.number()?, b.number()?),
            },
        })
    }

    fn float(op: BinOp, x: f64, y: f64) -> Option<Value<'a>> {
        Some(Value::Float(match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
            BinOp::IDiv => (x / y).floor(),
            BinOp::Mod => x - (x / y).floor() * y,
            BinOp::Pow => x.powf(y),
            _ => return None,
        }))
    }
}

/// Lua's `%` on integers (`y` not 0): the remainder takes the divisor's
/// sign.
fn floor_rem(x: i64, y: i64) -> i64 {
    let rem = x.wrapping_rem(y);
    match rem != 0 && (rem < 0) != (y < 0) {
        true => rem + y,
        false => rem,
    }
}

/// FNV-1a, continued from `hash`, over `bytes` and a separator.
fn fnv(hash: &mut u64, bytes: &[u8]) {
    for &byte in bytes.iter().chain(&[0xff]) {
        *hash = (*hash ^ byte as u64).wrapping_mul(0x0100_0000_01b3);
    }
}

const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// The lexer, parser and checker, written once; `plain` and `batched`
/// below differ only by `#[batch_alloc]` on each function and `impl`.
macro_rules! front_end {
    ($(#[$batch:meta])*) => {
        use std::borrow::Cow;
        use std::collections::HashMap;

        use super::{
            fnv, BinOp, Block, Expr, Field, Function, Kw, NumericFor, ParseError, Stmt, Summary,
            Sym, Tok, Token, UnOp, Value, EOF, FNV_START, MAX_DEPTH, UNARY_PRIORITY,
        };

        /// Splits `source` into tokens, the last one [`Tok::Eof`].
        $(#[$batch])*
        pub fn lex(source: &str) -> Result<Vec<Token>, ParseError> {
            let mut lexer = Lexer {
                src: source,
                bytes: source.as_bytes(),
                pos: 0,
                line: 1,
                line_start: 0,
            };
            let mut tokens = Vec::new();
            loop {
                let token = lexer.token()?;
                let end = token.kind == Tok::Eof;
                tokens.push(token);
                if end {
                    return Ok(tokens);
                }
            }
        }

        struct Lexer<'a> {
            src: &'a str,
            bytes: &'a [u8],
            /// Always on a character boundary of `src`.
            pos: usize,
            /// Line number of `pos`, and where that line starts.
            line: u32,
            line_start: usize,
        }

        $(#[$batch])*
        impl Lexer<'_> {
            fn token(&mut self) -> Result<Token, ParseError> {
                self.skip_space();
                let (line, column) = (self.line, self.column());
                let Some(&byte) = self.bytes.get(self.pos) else {
                    return Ok(Token { kind: Tok::Eof, line, column });
                };
                let kind = match byte {
                    b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                        let start = self.pos;
                        while self.peek().is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
                            self.pos += 1;
                        }
                        let word = &self.src[start..self.pos];
                        match Kw::from_word(word) {
                            Some(kw) => Tok::Kw(kw),
                            None => Tok::Name(Box::from(word)),
                        }
                    }
                    b'0'..=b'9' => self.number()?,
                    b'"' | b'\'' => self.string(byte)?,
                    _ => Tok::Sym(self.symbol()?),
                };
                Ok(Token { kind, line, column })
            }

            fn skip_space(&mut self) {
                while let Some(byte) = self.peek() {
                    match byte {
                        b'\n' => {
                            self.pos += 1;
                            self.line += 1;
                            self.line_start = self.pos;
                        }
                        b' ' | b'\t' | b'\r' => self.pos += 1,
                        b'-' if self.bytes.get(self.pos + 1) == Some(&b'-') => {
                            while self.peek().is_some_and(|b| b != b'\n') {
                                self.pos += 1;
                            }
                        }
                        _ => return,
                    }
                }
            }

            /// A decimal or `0x` integer, or a decimal float.
            fn number(&mut self) -> Result<Tok, ParseError> {
                let start = self.pos;
                let rest = &self.src[start..];
                let hex = rest.starts_with("0x") || rest.starts_with("0X");
                let token = if hex {
                    self.pos += 2;
                    let mut n: i64 = 0;
                    while let Some(digit) = self.peek().and_then(|b| (b as char).to_digit(16)) {
                        n = n
                            .checked_mul(16)
                            .and_then(|n| n.checked_add(digit as i64))
                            .ok_or_else(|| self.error_at(start, "number too large"))?;
                        self.pos += 1;
                    }
                    if self.pos == start + 2 {
                        return Err(self.error_at(start, "malformed number"));
                    }
                    Tok::Int(n)
                } else {
                    self.digits();
                    let mut float = false;
                    if self.peek() == Some(b'.') && self.peek_digit(1) {
                        self.pos += 1;
                        self.digits();
                        float = true;
                    }
                    if matches!(self.peek(), Some(b'e' | b'E')) {
                        let sign = matches!(self.bytes.get(self.pos + 1), Some(b'+' | b'-'));
                        if !self.peek_digit(1 + sign as usize) {
                            return Err(self.error_at(start, "malformed number"));
                        }
                        self.pos += 1 + sign as usize;
                        self.digits();
                        float = true;
                    }
                    let text = &self.src[start..self.pos];
                    match float {
                        true => Tok::Float(
                            text.parse().map_err(|_| self.error_at(start, "malformed number"))?,
                        ),
                        false => Tok::Int(
                            text.parse().map_err(|_| self.error_at(start, "number too large"))?,
                        ),
                    }
                };
                let next = self.peek().unwrap_or(b' ');
                if next.is_ascii_alphanumeric() || next == b'_' || next == b'.' {
                    return Err(self.error_at(start, "malformed number"));
                }
                Ok(token)
            }

            fn digits(&mut self) {
                while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    self.pos += 1;
                }
            }

            fn peek_digit(&self, ahead: usize) -> bool {
                self.bytes.get(self.pos + ahead).is_some_and(u8::is_ascii_digit)
            }

            /// A literal quoted with `quote`: its text as it stands, or,
            /// where it has escapes, decoded into a new string.
            fn string(&mut self, quote: u8) -> Result<Tok, ParseError> {
                let start = self.pos;
                self.pos += 1;
                let mut run = self.pos;
                let mut decoded: Option<String> = None;
                loop {
                    match self.peek() {
                        None | Some(b'\n' | b'\r') => {
                            return Err(self.error_at(start, "unfinished string"));
                        }
                        Some(b'\\') => {
                            let text = decoded.get_or_insert_with(String::new);
                            text.push_str(&self.src[run..self.pos]);
                            self.pos += 1;
                            text.push(self.escape()?);
                            run = self.pos;
                        }
                        Some(b) if b == quote => break,
                        Some(_) => self.pos += 1,
                    }
                }
                let rest = &self.src[run..self.pos];
                self.pos += 1;
                Ok(Tok::Str(match decoded {
                    None => Box::from(rest),
                    Some(mut text) => {
                        text.push_str(rest);
                        text.into_boxed_str()
                    }
                }))
            }

            /// The character an escape stands for; `pos` is just past the
            /// backslash.
            fn escape(&mut self) -> Result<char, ParseError> {
                let at = self.pos - 1;
                let Some(byte) = self.peek() else {
                    return Err(self.error_at(at, "unfinished string"));
                };
                self.pos += 1;
                Ok(match byte {
                    b'n' => '\n',
                    b't' => '\t',
                    b'r' => '\r',
                    b'a' => '\x07',
                    b'b' => '\x08',
                    b'f' => '\x0c',
                    b'v' => '\x0b',
                    b'\\' | b'"' | b'\'' => byte as char,
                    b'\n' => {
                        self.line += 1;
                        self.line_start = self.pos;
                        '\n'
                    }
                    b'x' => {
                        let mut code = 0;
                        for _ in 0..2 {
                            let digit = self.peek().and_then(|b| (b as char).to_digit(16));
                            let digit = digit
                                .ok_or_else(|| self.error_at(at, "`\\x` needs two hex digits"))?;
                            code = code * 16 + digit;
                            self.pos += 1;
                        }
                        char::from(code as u8)
                    }
                    b'0'..=b'9' => {
                        let mut code = (byte - b'0') as u32;
                        for _ in 0..2 {
                            match self.peek() {
                                Some(digit @ b'0'..=b'9') => {
                                    code = code * 10 + (digit - b'0') as u32;
                                    self.pos += 1;
                                }
                                _ => break,
                            }
                        }
                        match u8::try_from(code) {
                            Ok(code) => char::from(code),
                            Err(_) => return Err(self.error_at(at, "escape too large")),
                        }
                    }
                    _ => return Err(self.error_at(at, "invalid escape")),
                })
            }

            fn symbol(&mut self) -> Result<Sym, ParseError> {
                let two = |second: u8| self.bytes.get(self.pos + 1) == Some(&second);
                let (sym, len) = match self.bytes[self.pos] {
                    b'=' if two(b'=') => (Sym::Eq, 2),
                    b'~' if two(b'=') => (Sym::Ne, 2),
                    b'<' if two(b'=') => (Sym::Le, 2),
                    b'>' if two(b'=') => (Sym::Ge, 2),
                    b'/' if two(b'/') => (Sym::SlashSlash, 2),
                    b'.' if two(b'.') => (Sym::DotDot, 2),
                    b'=' => (Sym::Assign, 1),
                    b'<' => (Sym::Lt, 1),
                    b'>' => (Sym::Gt, 1),
                    b'/' => (Sym::Slash, 1),
                    b'.' => (Sym::Dot, 1),
                    b'+' => (Sym::Plus, 1),
                    b'-' => (Sym::Minus, 1),
                    b'*' => (Sym::Star, 1),
                    b'%' => (Sym::Percent, 1),
                    b'^' => (Sym::Caret, 1),
                    b'#' => (Sym::Hash, 1),
                    b'(' => (Sym::LParen, 1),
                    b')' => (Sym::RParen, 1),
                    b'{' => (Sym::LBrace, 1),
                    b'}' => (Sym::RBrace, 1),
                    b'[' => (Sym::LBracket, 1),
                    b']' => (Sym::RBracket, 1),
                    b';' => (Sym::Semi, 1),
                    b':' => (Sym::Colon, 1),
                    b',' => (Sym::Comma, 1),
                    _ => {
                        let c = self.src[self.pos..].chars().next().unwrap_or('?');
                        return Err(self.error_at(self.pos, &format!("unexpected character {c:?}")));
                    }
                };
                self.pos += len;
                Ok(sym)
            }

            fn peek(&self) -> Option<u8> {
                self.bytes.get(self.pos).copied()
            }

            fn column(&self) -> u32 {
                (self.pos - self.line_start + 1) as u32
            }

            /// An error at `at`, a byte of the current line.
            fn error_at(&self, at: usize, message: &str) -> ParseError {
                ParseError {
                    line: self.line,
                    column: (at - self.line_start + 1) as u32,
                    message: message.to_string(),
                }
            }
        }

        /// Parses a chunk: a block that runs to the end of the tokens.
        $(#[$batch])*
        pub fn parse(tokens: &[Token]) -> Result<Block, ParseError> {
            let mut parser = Parser {
                tokens,
                pos: 0,
                depth: 0,
            };
            let chunk = parser.block()?;
            match parser.peek() {
                Tok::Eof => Ok(chunk),
                _ => Err(parser.error("expected a statement")),
            }
        }

        struct Parser<'t> {
            tokens: &'t [Token],
            pos: usize,
            /// Blocks and expressions open around `pos`.
            depth: u32,
        }

        $(#[$batch])*
        impl<'t> Parser<'t> {
            /// Statements up to the end of the input or a keyword that
            /// ends a block (`end`, `else`, `elseif`), or up to and with a
            /// `return`.
            fn block(&mut self) -> Result<Block, ParseError> {
                self.enter()?;
                let mut stmts = Vec::new();
                loop {
                    match self.peek() {
                        Tok::Sym(Sym::Semi) => self.bump(),
                        Tok::Kw(Kw::Return) => {
                            self.bump();
                            let values = match self.block_ends() || self.at_sym(Sym::Semi) {
                                true => Vec::new(),
                                false => self.exprs()?,
                            };
                            self.eat_sym(Sym::Semi);
                            stmts.push(Stmt::Return(values));
                            if !self.block_ends() {
                                let message = "expected the end of the block after `return`";
                                return Err(self.error(message));
                            }
                            break;
                        }
                        _ if self.block_ends() => break,
                        _ => stmts.push(self.statement()?),
                    }
                }
                self.depth -= 1;
                Ok(stmts)
            }

            fn block_ends(&self) -> bool {
                matches!(self.peek(), Tok::Eof | Tok::Kw(Kw::End | Kw::Else | Kw::Elseif))
            }

            fn statement(&mut self) -> Result<Stmt, ParseError> {
                let opener = self.token();
                match self.peek() {
                    Tok::Kw(Kw::Local) => {
                        self.bump();
                        if self.eat_kw(Kw::Function) {
                            let name = self.name()?;
                            let func = self.body(opener)?;
                            return Ok(Stmt::LocalFunction { name, func });
                        }
                        let mut names = vec![self.name()?];
                        while self.eat_sym(Sym::Comma) {
                            names.push(self.name()?);
                        }
                        let values = match self.eat_sym(Sym::Assign) {
                            true => self.exprs()?,
                            false => Vec::new(),
                        };
                        Ok(Stmt::Local { names, values })
                    }
                    Tok::Kw(Kw::Function) => {
                        self.bump();
                        let mut path = vec![self.name()?];
                        while self.eat_sym(Sym::Dot) {
                            path.push(self.name()?);
                        }
                        let method = match self.eat_sym(Sym::Colon) {
                            true => Some(self.name()?),
                            false => None,
                        };
                        let func = self.body(opener)?;
                        Ok(Stmt::Function { path, method, func })
                    }
                    Tok::Kw(Kw::If) => {
                        self.bump();
                        let mut arms = Vec::new();
                        loop {
                            let cond = self.expr()?;
                            self.expect_kw(Kw::Then)?;
                            arms.push((cond, self.block()?));
                            if !self.eat_kw(Kw::Elseif) {
                                break;
                            }
                        }
                        let otherwise = match self.eat_kw(Kw::Else) {
                            true => Some(self.block()?),
                            false => None,
                        };
                        self.close(opener)?;
                        Ok(Stmt::If { arms, otherwise })
                    }
                    Tok::Kw(Kw::While) => {
                        self.bump();
                        let cond = Box::new(self.expr()?);
                        let body = self.loop_body(opener)?;
                        Ok(Stmt::While { cond, body })
                    }
                    Tok::Kw(Kw::For) => {
                        self.bump();
                        let var = self.name()?;
                        if self.eat_sym(Sym::Assign) {
                            let start = self.expr()?;
                            self.expect_sym(Sym::Comma)?;
                            let end = self.expr()?;
                            let step = match self.eat_sym(Sym::Comma) {
                                true => Some(self.expr()?),
                                false => None,
                            };
                            let body = self.loop_body(opener)?;
                            return Ok(Stmt::NumericFor(Box::new(NumericFor {
                                var,
                                start,
                                end,
                                step,
                                body,
                            })));
                        }
                        let mut names = vec![var];
                        while self.eat_sym(Sym::Comma) {
                            names.push(self.name()?);
                        }
                        if !self.eat_kw(Kw::In) {
                            return Err(self.error("expected `=` or `in`"));
                        }
                        let exprs = self.exprs()?;
                        let body = self.loop_body(opener)?;
                        Ok(Stmt::GenericFor { names, exprs, body })
                    }
                    Tok::Kw(Kw::Do) => {
                        self.bump();
                        let body = self.block()?;
                        self.close(opener)?;
                        Ok(Stmt::Do(body))
                    }
                    Tok::Kw(Kw::Break) => {
                        self.bump();
                        Ok(Stmt::Break)
                    }
                    _ => self.expr_statement(),
                }
            }

            /// `do block end`, closing the loop that `opener` opened.
            fn loop_body(&mut self, opener: &Token) -> Result<Block, ParseError> {
                self.expect_kw(Kw::Do)?;
                let body = self.block()?;
                self.close(opener)?;
                Ok(body)
            }

            /// An assignment or a call.
            fn expr_statement(&mut self) -> Result<Stmt, ParseError> {
                let first = self.target()?;
                if !self.at_sym(Sym::Assign) && !self.at_sym(Sym::Comma) {
                    return match first {
                        Expr::Call(..) | Expr::Method(..) => Ok(Stmt::Call(first)),
                        _ => Err(self.error("expected `=` or a call")),
                    };
                }
                let mut targets = vec![first];
                while self.eat_sym(Sym::Comma) {
                    targets.push(self.target()?);
                }
                self.expect_sym(Sym::Assign)?;
                let values = self.exprs()?;
                Ok(Stmt::Assign { targets, values })
            }

            /// A suffixed expression that, if more follows, must be
            /// something one can assign to.
            fn target(&mut self) -> Result<Expr, ParseError> {
                let start = self.token();
                let expr = self.suffixed()?;
                let assignable = matches!(expr, Expr::Name(_) | Expr::Field(..) | Expr::Index(..));
                if !assignable && (self.at_sym(Sym::Assign) || self.at_sym(Sym::Comma)) {
                    return Err(error_at(start, "cannot assign to this expression"));
                }
                Ok(expr)
            }

            /// `(params) block end`, closing what `opener` opened.
            fn body(&mut self, opener: &Token) -> Result<Box<Function>, ParseError> {
                self.expect_sym(Sym::LParen)?;
                let mut params = Vec::new();
                if !self.eat_sym(Sym::RParen) {
                    loop {
                        params.push(self.name()?);
                        if !self.eat_sym(Sym::Comma) {
                            break;
                        }
                    }
                    self.expect_sym(Sym::RParen)?;
                }
                let body = self.block()?;
                self.close(opener)?;
                Ok(Box::new(Function { params, body }))
            }

            fn exprs(&mut self) -> Result<Vec<Expr>, ParseError> {
                let mut exprs = vec![self.expr()?];
                while self.eat_sym(Sym::Comma) {
                    exprs.push(self.expr()?);
                }
                Ok(exprs)
            }

            fn expr(&mut self) -> Result<Expr, ParseError> {
                self.subexpr(0)
            }

            /// Precedence climbing: an operand (a unary operator and its
            /// operand, or a simple expression), then every binary
            /// operator whose left binding power is above `limit`, with
            /// its right-hand side, folded to the left.
            fn subexpr(&mut self, limit: u8) -> Result<Expr, ParseError> {
                self.enter()?;
                let mut lhs = match UnOp::from_tok(self.peek()) {
                    Some(op) => {
                        self.bump();
                        let operand = self.subexpr(UNARY_PRIORITY)?;
                        Expr::Unary(op, Box::new(operand))
                    }
                    None => self.simple()?,
                };
                let binary = |tok| BinOp::from_tok(tok).filter(|op| op.priority().0 > limit);
                while let Some(op) = binary(self.peek()) {
                    self.bump();
                    let rhs = self.subexpr(op.priority().1)?;
                    lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs));
                }
                self.depth -= 1;
                Ok(lhs)
            }

            fn simple(&mut self) -> Result<Expr, ParseError> {
                let token = self.token();
                let expr = match &token.kind {
                    Tok::Int(n) => Expr::Int(*n),
                    Tok::Float(x) => Expr::Float(*x),
                    Tok::Str(s) => Expr::Str(s.to_string()),
                    Tok::Kw(Kw::Nil) => Expr::Nil,
                    Tok::Kw(Kw::True) => Expr::True,
                    Tok::Kw(Kw::False) => Expr::False,
                    Tok::Kw(Kw::Function) => {
                        self.bump();
                        return Ok(Expr::Function(self.body(token)?));
                    }
                    Tok::Sym(Sym::LBrace) => return self.table(),
                    _ => return self.suffixed(),
                };
                self.bump();
                Ok(expr)
            }

            /// A name or a parenthesized expression, then any number of
            /// field accesses, indexes, calls and method calls.
            fn suffixed(&mut self) -> Result<Expr, ParseError> {
                let mut expr = match self.peek() {
                    Tok::Name(_) => Expr::Name(self.name()?),
                    Tok::Sym(Sym::LParen) => {
                        let opener = self.token();
                        self.bump();
                        let inner = self.expr()?;
                        self.close_sym(Sym::RParen, opener)?;
                        inner
                    }
                    _ => return Err(self.error("expected an expression")),
                };
                loop {
                    match self.peek() {
                        Tok::Sym(Sym::Dot) => {
                            self.bump();
                            let name = self.name()?;
                            expr = Expr::Field(Box::new(expr), name);
                        }
                        Tok::Sym(Sym::LBracket) => {
                            let opener = self.token();
                            self.bump();
                            let key = self.expr()?;
                            self.close_sym(Sym::RBracket, opener)?;
                            expr = Expr::Index(Box::new(expr), Box::new(key));
                        }
                        Tok::Sym(Sym::Colon) => {
                            self.bump();
                            let name = self.name()?;
                            let args = self.args()?;
                            expr = Expr::Method(Box::new(expr), name, args);
                        }
                        Tok::Sym(Sym::LParen) => {
                            let args = self.args()?;
                            expr = Expr::Call(Box::new(expr), args);
                        }
                        _ => return Ok(expr),
                    }
                }
            }

            fn args(&mut self) -> Result<Vec<Box<Expr>>, ParseError> {
                let opener = self.token();
                self.expect_sym(Sym::LParen)?;
                let mut args = Vec::new();
                if !self.eat_sym(Sym::RParen) {
                    loop {
                        args.push(Box::new(self.expr()?));
                        if !self.eat_sym(Sym::Comma) {
                            break;
                        }
                    }
                    self.close_sym(Sym::RParen, opener)?;
                }
                Ok(args)
            }

            fn table(&mut self) -> Result<Expr, ParseError> {
                let opener = self.token();
                self.bump();
                let mut fields = Vec::new();
                while !self.at_sym(Sym::RBrace) {
                    let field = match self.peek() {
                        Tok::Sym(Sym::LBracket) => {
                            let bracket = self.token();
                            self.bump();
                            let key = self.expr()?;
                            self.close_sym(Sym::RBracket, bracket)?;
                            self.expect_sym(Sym::Assign)?;
                            Field::Keyed(Box::new(key), self.expr()?)
                        }
                        Tok::Name(_) if self.peek_at(1) == &Tok::Sym(Sym::Assign) => {
                            let name = self.name()?;
                            self.bump();
                            Field::Named(name, self.expr()?)
                        }
                        _ => Field::Pos(self.expr()?),
                    };
                    fields.push(field);
                    if !self.eat_sym(Sym::Comma) && !self.eat_sym(Sym::Semi) {
                        break;
                    }
                }
                self.close_sym(Sym::RBrace, opener)?;
                Ok(Expr::Table(fields))
            }

            /// A name, copied into the tree.
            fn name(&mut self) -> Result<String, ParseError> {
                match self.peek() {
                    Tok::Name(name) => {
                        let name = name.to_string();
                        self.bump();
                        Ok(name)
                    }
                    _ => Err(self.error("expected a name")),
                }
            }

            fn token(&self) -> &'t Token {
                self.tokens.get(self.pos).unwrap_or(&EOF)
            }

            fn peek(&self) -> &'t Tok {
                &self.token().kind
            }

            fn peek_at(&self, ahead: usize) -> &'t Tok {
                self.tokens.get(self.pos + ahead).map_or(&Tok::Eof, |t| &t.kind)
            }

            fn bump(&mut self) {
                self.pos = (self.pos + 1).min(self.tokens.len());
            }

            fn at_sym(&self, sym: Sym) -> bool {
                self.peek() == &Tok::Sym(sym)
            }

            fn eat_sym(&mut self, sym: Sym) -> bool {
                let at = self.at_sym(sym);
                if at {
                    self.bump();
                }
                at
            }

            fn eat_kw(&mut self, kw: Kw) -> bool {
                let at = self.peek() == &Tok::Kw(kw);
                if at {
                    self.bump();
                }
                at
            }

            fn expect_sym(&mut self, sym: Sym) -> Result<(), ParseError> {
                match self.eat_sym(sym) {
                    true => Ok(()),
                    false => Err(self.error(&format!("expected `{}`", sym.text()))),
                }
            }

            fn expect_kw(&mut self, kw: Kw) -> Result<(), ParseError> {
                match self.eat_kw(kw) {
                    true => Ok(()),
                    false => Err(self.error(&format!("expected `{}`", kw.text()))),
                }
            }

            /// The `end` of what `opener` opened.
            fn close(&mut self, opener: &Token) -> Result<(), ParseError> {
                match self.eat_kw(Kw::End) {
                    true => Ok(()),
                    false => Err(self.unclosed("end", opener)),
                }
            }

            /// The bracket `sym` that closes `opener`.
            fn close_sym(&mut self, sym: Sym, opener: &Token) -> Result<(), ParseError> {
                match self.eat_sym(sym) {
                    true => Ok(()),
                    false => Err(self.unclosed(sym.text(), opener)),
                }
            }

            fn unclosed(&self, closer: &str, opener: &Token) -> ParseError {
                self.error(&format!(
                    "expected `{closer}` to close {} at line {}",
                    opener.kind, opener.line
                ))
            }

            /// One more level of nesting, within [`MAX_DEPTH`].
            fn enter(&mut self) -> Result<(), ParseError> {
                if self.depth == MAX_DEPTH {
                    return Err(self.error("nested too deeply"));
                }
                self.depth += 1;
                Ok(())
            }

            /// `message`, at the current token, which it names.
            fn error(&self, message: &str) -> ParseError {
                let token = self.token();
                error_at(token, &format!("{message}, found {}", token.kind))
            }
        }

        fn error_at(token: &Token, message: &str) -> ParseError {
            ParseError {
                line: token.line,
                column: token.column,
                message: message.to_string(),
            }
        }

        /// Walks a chunk: resolves names, folds constants, counts.
        $(#[$batch])*
        pub fn check(chunk: &[Stmt]) -> Summary {
            let mut checker = Checker {
                summary: Summary {
                    names_hash: FNV_START,
                    strings_hash: FNV_START,
                    folded_hash: FNV_START,
                    ..Summary::default()
                },
                declared: Vec::new(),
                live: HashMap::new(),
                depth: 0,
            };
            checker.block(chunk);
            checker.summary
        }

        struct Checker<'a> {
            summary: Summary,
            /// Locals in scope, innermost last.
            declared: Vec<&'a str>,
            /// How many locals in scope have each name.
            live: HashMap<&'a str, u32>,
            /// Blocks open.
            depth: u64,
        }

        $(#[$batch])*
        impl<'a> Checker<'a> {
            fn block(&mut self, block: &'a [Stmt]) {
                self.vec(block);
                self.depth += 1;
                self.summary.max_depth = self.summary.max_depth.max(self.depth);
                let scope = self.declared.len();
                for stmt in block {
                    self.stmt(stmt);
                }
                self.end_scope(scope);
                self.depth -= 1;
            }

            fn stmt(&mut self, stmt: &'a Stmt) {
                self.summary.statements[stmt.kind()] += 1;
                match stmt {
                    Stmt::Local { names, values } => {
                        self.exprs(values);
                        self.vec(names);
                        for name in names {
                            self.declare(name);
                        }
                    }
                    Stmt::Assign { targets, values } => {
                        self.exprs(targets);
                        self.exprs(values);
                    }
                    Stmt::Call(call) => {
                        self.expr(call);
                    }
                    Stmt::LocalFunction { name, func } => {
                        self.declare(name);
                        self.function(func, false);
                    }
                    Stmt::Function { path, method, func } => {
                        self.vec(path);
                        if let Some((first, rest)) = path.split_first() {
                            self.reference(first);
                            for name in rest.iter().chain(method) {
                                self.name(name);
                            }
                        }
                        self.function(func, method.is_some());
                    }
                    Stmt::If { arms, otherwise } => {
                        self.vec(arms);
                        for (cond, body) in arms {
                            self.expr(cond);
                            self.block(body);
                        }
                        if let Some(body) = otherwise {
                            self.block(body);
                        }
                    }
                    Stmt::While { cond, body } => {
                        self.summary.boxes += 1;
                        self.expr(cond);
                        self.block(body);
                    }
                    Stmt::NumericFor(for_) => {
                        self.summary.boxes += 1;
                        self.expr(&for_.start);
                        self.expr(&for_.end);
                        if let Some(step) = &for_.step {
                            self.expr(step);
                        }
                        let scope = self.declared.len();
                        self.declare(&for_.var);
                        self.block(&for_.body);
                        self.end_scope(scope);
                    }
                    Stmt::GenericFor { names, exprs, body } => {
                        self.exprs(exprs);
                        self.vec(names);
                        let scope = self.declared.len();
                        for name in names {
                            self.declare(name);
                        }
                        self.block(body);
                        self.end_scope(scope);
                    }
                    Stmt::Do(body) => self.block(body),
                    Stmt::Break => {}
                    Stmt::Return(values) => self.exprs(values),
                }
            }

            fn function(&mut self, func: &'a Function, method: bool) {
                self.summary.functions += 1;
                self.summary.boxes += 1;
                self.vec(&func.params);
                let scope = self.declared.len();
                if method {
                    self.bind("self");
                }
                for param in &func.params {
                    self.declare(param);
                }
                self.block(&func.body);
                self.end_scope(scope);
            }

            fn exprs(&mut self, exprs: &'a [Expr]) {
                self.vec(exprs);
                for expr in exprs {
                    self.expr(expr);
                }
            }

            fn args(&mut self, args: &'a [Box<Expr>]) {
                self.vec(args);
                self.summary.boxes += args.len() as u64;
                for arg in args {
                    self.expr(arg);
                }
            }

            /// Counts `expr` and what it holds; its value, if it is known
            /// without running the program.
            fn expr(&mut self, expr: &'a Expr) -> Option<Value<'a>> {
                self.summary.expressions[expr.kind()] += 1;
                match expr {
                    Expr::Nil => Some(Value::Nil),
                    Expr::True => Some(Value::Bool(true)),
                    Expr::False => Some(Value::Bool(false)),
                    Expr::Int(n) => Some(Value::Int(*n)),
                    Expr::Float(x) => Some(Value::Float(*x)),
                    Expr::Str(s) => {
                        self.string(s);
                        self.summary.string_bytes += s.len() as u64;
                        fnv(&mut self.summary.strings_hash, s.as_bytes());
                        Some(Value::Str(Cow::Borrowed(s)))
                    }
                    Expr::Name(name) => {
                        self.reference(name);
                        None
                    }
                    Expr::Function(func) => {
                        self.function(func, false);
                        None
                    }
                    Expr::Table(fields) => {
                        self.vec(fields);
                        self.summary.fields += fields.len() as u64;
                        for field in fields {
                            match field {
                                Field::Pos(value) => {
                                    self.expr(value);
                                }
                                Field::Named(name, value) => {
                                    self.name(name);
                                    self.expr(value);
                                }
                                Field::Keyed(key, value) => {
                                    self.summary.boxes += 1;
                                    self.expr(key);
                                    self.expr(value);
                                }
                            }
                        }
                        None
                    }
                    Expr::Unary(op, operand) => {
                        self.summary.boxes += 1;
                        let value = Value::unary(*op, self.expr(operand)?);
                        self.folded(value)
                    }
                    Expr::Binary(op, lhs, rhs) => {
                        self.summary.boxes += 2;
                        let (lhs, rhs) = (self.expr(lhs), self.expr(rhs));
                        let value = Value::binary(*op, lhs?, rhs?);
                        self.folded(value)
                    }
                    Expr::Field(object, name) => {
                        self.summary.boxes += 1;
                        self.expr(object);
                        self.name(name);
                        None
                    }
                    Expr::Index(object, key) => {
                        self.summary.boxes += 2;
                        self.expr(object);
                        self.expr(key);
                        None
                    }
                    Expr::Call(callee, args) => {
                        self.summary.boxes += 1;
                        self.expr(callee);
                        self.args(args);
                        None
                    }
                    Expr::Method(object, name, args) => {
                        self.summary.boxes += 1;
                        self.expr(object);
                        self.name(name);
                        self.args(args);
                        None
                    }
                }
            }

            fn folded(&mut self, value: Option<Value<'a>>) -> Option<Value<'a>> {
                let value = value?;
                self.summary.folded += 1;
                let hash = &mut self.summary.folded_hash;
                match &value {
                    Value::Nil => fnv(hash, b"nil"),
                    Value::Bool(b) => fnv(hash, &[*b as u8]),
                    Value::Int(n) => fnv(hash, &n.to_le_bytes()),
                    Value::Float(x) => fnv(hash, &x.to_bits().to_le_bytes()),
                    Value::Str(s) => fnv(hash, s.as_bytes()),
                }
                Some(value)
            }

            /// A local declared by name in the tree.
            fn declare(&mut self, name: &'a str) {
                self.name(name);
                self.bind(name);
            }

            /// A local in scope from here to the end of the scope.
            fn bind(&mut self, name: &'a str) {
                self.summary.locals += 1;
                self.declared.push(name);
                *self.live.entry(name).or_insert(0) += 1;
            }

            fn end_scope(&mut self, scope: usize) {
                for name in self.declared.drain(scope..) {
                    if let Some(count) = self.live.get_mut(name) {
                        *count -= 1;
                    }
                }
            }

            fn reference(&mut self, name: &str) {
                match self.live.get(name).is_some_and(|&count| count > 0) {
                    true => self.summary.local_refs += 1,
                    false => self.summary.global_refs += 1,
                }
                self.name(name);
            }

            /// A name in the tree.
            fn name(&mut self, name: &str) {
                fnv(&mut self.summary.names_hash, name.as_bytes());
                self.string(name);
            }

            fn string(&mut self, s: &str) {
                self.summary.heap_blocks += !s.is_empty() as u64;
            }

            fn vec<T>(&mut self, v: &[T]) {
                self.summary.heap_blocks += !v.is_empty() as u64;
            }
        }
    };
}

/// The front end as written.
pub mod plain {
    front_end!();
}

/// The same front end with `#[batch_alloc]` on every function and `impl`.
pub mod batched {
    front_end!(#[batch_alloc::batch_alloc]);
}
