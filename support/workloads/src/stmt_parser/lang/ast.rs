//! The types of `lang.rs`, shared by both versions of the front end:
//! tokens, the tree, errors and the checker's summary.

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
pub(crate) static EOF: Token = Token {
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
pub(crate) const UNARY_PRIORITY: u8 = 12;

impl BinOp {
    pub(crate) fn from_tok(tok: &Tok) -> Option<BinOp> {
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
    pub(crate) fn priority(self) -> (u8, u8) {
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
    pub(crate) fn from_tok(tok: &Tok) -> Option<UnOp> {
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

/// What [`plain::check`](super::plain::check) saw in a tree. Equal trees give equal summaries.
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

/// FNV-1a, continued from `hash`, over `bytes` and a separator.
pub(crate) fn fnv(hash: &mut u64, bytes: &[u8]) {
    for &byte in bytes.iter().chain(&[0xff]) {
        *hash = (*hash ^ byte as u64).wrapping_mul(0x0100_0000_01b3);
    }
}

pub(crate) const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;
