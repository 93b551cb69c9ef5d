//! The expression language: its tree, its precedence-climbing parser
//! written once (`parser!`) and out twice, [`plain`] as it stands and
//! [`batched`] with `#[batch_alloc]` on the methods whose loops box, and
//! the generated input ([`generate`]).

// A program holds its lines boxed, which is the point of the example.
#![allow(clippy::vec_box)]

use std::fmt;

#[derive(Debug, PartialEq)]
pub enum Expr {
    Num(i64),
    /// The value of an earlier line: `x12`.
    Var(u32),
    Neg(Box<Expr>),
    Bin(Op, Box<Expr>, Box<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
}

impl Op {
    fn from_byte(byte: u8) -> Option<Op> {
        Some(match byte {
            b'+' => Op::Add,
            b'-' => Op::Sub,
            b'*' => Op::Mul,
            b'/' => Op::Div,
            b'%' => Op::Rem,
            b'^' => Op::Pow,
            _ => return None,
        })
    }

    fn precedence(self) -> u8 {
        match self {
            Op::Add | Op::Sub => 1,
            Op::Mul | Op::Div | Op::Rem => 2,
            Op::Pow => 3,
        }
    }

    fn right_associative(self) -> bool {
        self == Op::Pow
    }

    fn symbol(self) -> char {
        match self {
            Op::Add => '+',
            Op::Sub => '-',
            Op::Mul => '*',
            Op::Div => '/',
            Op::Rem => '%',
            Op::Pow => '^',
        }
    }

    fn apply(self, a: i64, b: i64) -> i64 {
        match self {
            Op::Add => a.wrapping_add(b),
            Op::Sub => a.wrapping_sub(b),
            Op::Mul => a.wrapping_mul(b),
            Op::Div if b == 0 => 0,
            Op::Div => a.wrapping_div(b),
            Op::Rem if b == 0 => 0,
            Op::Rem => a.wrapping_rem(b),
            Op::Pow if b < 0 => 0,
            Op::Pow => a.wrapping_pow(b.min(u32::MAX as i64) as u32),
        }
    }
}

/// Fully parenthesized, so that printing and parsing again gives the same
/// tree.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Expr::Num(n) => write!(f, "{n}"),
            Expr::Var(v) => write!(f, "x{v}"),
            Expr::Neg(e) => write!(f, "-({e})"),
            Expr::Bin(op, a, b) => write!(f, "({a} {} {b})", op.symbol()),
        }
    }
}

/// A parsed program: line `n` defines `x<n>`.
#[derive(Debug, PartialEq)]
pub struct Program {
    pub lines: Vec<Box<Expr>>,
}

impl Program {
    /// The value of every line, in order.
    pub fn eval(&self) -> Vec<i64> {
        let mut values = Vec::with_capacity(self.lines.len());
        for line in &self.lines {
            let value = eval(line, &values);
            values.push(value);
        }
        values
    }

    /// Boxes in the program: one per line, one per operand of each
    /// operator.
    pub fn boxes(&self) -> u64 {
        fn boxes(e: &Expr) -> u64 {
            match e {
                Expr::Num(_) | Expr::Var(_) => 0,
                Expr::Neg(e) => 1 + boxes(e),
                Expr::Bin(_, a, b) => 2 + boxes(a) + boxes(b),
            }
        }
        self.lines.iter().map(|l| 1 + boxes(l)).sum()
    }
}

/// `expr`'s value, given the values of the lines before it.
pub fn eval(expr: &Expr, values: &[i64]) -> i64 {
    match expr {
        Expr::Num(n) => *n,
        Expr::Var(v) => values[*v as usize],
        Expr::Neg(e) => eval(e, values).wrapping_neg(),
        Expr::Bin(op, a, b) => op.apply(eval(a, values), eval(b, values)),
    }
}

#[derive(Debug, PartialEq)]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// How deeply parentheses may nest: the parser recurses once per level.
pub const MAX_NESTING: usize = 200;

/// The parser, written once; `plain` and `batched` below differ only by the
/// attribute on the methods whose loops box.
macro_rules! parser {
    ($(#[$batch:meta])*) => {
        use super::{Expr, Op, ParseError, Program, MAX_NESTING};

        /// Parses a whole program.
        pub fn parse(source: &str) -> Result<Program, ParseError> {
            let mut parser = Parser {
                src: source.as_bytes(),
                pos: 0,
                line: 1,
                line_start: 0,
                defined: 0,
                nesting: 0,
            };
            parser.program()
        }

        struct Parser<'a> {
            src: &'a [u8],
            pos: usize,
            /// Line number of `pos`, and where that line starts.
            line: usize,
            line_start: usize,
            /// Lines parsed so far: the variables that may be used.
            defined: u32,
            nesting: usize,
        }

        impl Parser<'_> {
            $(#[$batch])*
            fn program(&mut self) -> Result<Program, ParseError> {
                let mut lines = Vec::new();
                while let Some(expr) = self.statement()? {
                    lines.push(Box::new(expr));
                    self.defined += 1;
                }
                Ok(Program { lines })
            }

            /// `let x<n> = <expr>;`, where `n` counts the lines before;
            /// `None` at the end of the input.
            fn statement(&mut self) -> Result<Option<Expr>, ParseError> {
                self.skip_space();
                if self.pos == self.src.len() {
                    return Ok(None);
                }
                for &byte in b"let" {
                    self.expect(byte, "expected `let`")?;
                }
                if self.peek().is_some_and(|b| b.is_ascii_alphanumeric()) {
                    return Err(self.error("expected a space after `let`"));
                }
                self.skip_space();
                let column = self.pos;
                let name = self.variable()?;
                if name != self.defined {
                    self.pos = column;
                    return Err(self.error(&format!("expected `x{}`", self.defined)));
                }
                self.skip_space();
                self.expect(b'=', "expected `=`")?;
                let expr = self.expr(0)?;
                self.skip_space();
                self.expect(b';', "expected an operator or `;`")?;
                Ok(Some(expr))
            }

            /// Precedence climbing: an operand, then every operator of
            /// precedence `min` or more with its right-hand side, folded
            /// to the left (to the right for `^`).
            $(#[$batch])*
            fn expr(&mut self, min: u8) -> Result<Expr, ParseError> {
                let mut lhs = self.unary()?;
                while let Some(op) = self.peek_op().filter(|op| op.precedence() >= min) {
                    self.pos += 1;
                    let next = match op.right_associative() {
                        true => op.precedence(),
                        false => op.precedence() + 1,
                    };
                    let rhs = self.expr(next)?;
                    lhs = Expr::Bin(op, Box::new(lhs), Box::new(rhs));
                }
                Ok(lhs)
            }

            /// Any number of `-`, then an atom.
            $(#[$batch])*
            fn unary(&mut self) -> Result<Expr, ParseError> {
                let mut negations = 0;
                loop {
                    self.skip_space();
                    if self.peek() != Some(b'-') {
                        break;
                    }
                    self.pos += 1;
                    negations += 1;
                }
                let mut expr = self.atom()?;
                for _ in 0..negations {
                    expr = Expr::Neg(Box::new(expr));
                }
                Ok(expr)
            }

            fn atom(&mut self) -> Result<Expr, ParseError> {
                match self.peek() {
                    Some(b'0'..=b'9') => self.number(),
                    Some(b'x') => {
                        let column = self.pos;
                        let v = self.variable()?;
                        if v >= self.defined {
                            self.pos = column;
                            return Err(self.error(&format!("`x{v}` is not defined yet")));
                        }
                        Ok(Expr::Var(v))
                    }
                    Some(b'(') => {
                        if self.nesting == MAX_NESTING {
                            return Err(self.error("parentheses nested too deeply"));
                        }
                        self.pos += 1;
                        self.nesting += 1;
                        let inner = self.expr(0)?;
                        self.nesting -= 1;
                        self.skip_space();
                        self.expect(b')', "expected an operator or `)`")?;
                        Ok(inner)
                    }
                    _ => Err(self.error("expected a number, a variable or `(`")),
                }
            }

            fn number(&mut self) -> Result<Expr, ParseError> {
                let start = self.pos;
                let mut n: i64 = 0;
                while let Some(digit @ b'0'..=b'9') = self.peek() {
                    n = n
                        .checked_mul(10)
                        .and_then(|n| n.checked_add((digit - b'0') as i64))
                        .ok_or_else(|| {
                            self.pos = start;
                            self.error("number too large")
                        })?;
                    self.pos += 1;
                }
                Ok(Expr::Num(n))
            }

            /// `x` and a line number.
            fn variable(&mut self) -> Result<u32, ParseError> {
                self.expect(b'x', "expected a variable")?;
                let start = self.pos;
                let mut n: u32 = 0;
                while let Some(digit @ b'0'..=b'9') = self.peek() {
                    n = n.saturating_mul(10).saturating_add((digit - b'0') as u32);
                    self.pos += 1;
                }
                if self.pos == start {
                    return Err(self.error("expected a line number after `x`"));
                }
                Ok(n)
            }

            fn peek_op(&mut self) -> Option<Op> {
                self.skip_space();
                self.peek().and_then(Op::from_byte)
            }

            fn peek(&self) -> Option<u8> {
                self.src.get(self.pos).copied()
            }

            fn expect(&mut self, byte: u8, message: &str) -> Result<(), ParseError> {
                match self.peek() == Some(byte) {
                    true => {
                        self.pos += 1;
                        Ok(())
                    }
                    false => Err(self.error(message)),
                }
            }

            fn skip_space(&mut self) {
                while let Some(byte) = self.peek() {
                    match byte {
                        b'\n' => {
                            self.line += 1;
                            self.line_start = self.pos + 1;
                        }
                        b' ' | b'\t' | b'\r' => {}
                        _ => return,
                    }
                    self.pos += 1;
                }
            }

            fn error(&self, message: &str) -> ParseError {
                ParseError {
                    line: self.line,
                    column: self.pos - self.line_start + 1,
                    message: message.to_string(),
                }
            }
        }
    };
}

/// The parser as written.
pub mod plain {
    parser!();
}

/// The same parser under `#[batch_alloc]`.
pub mod batched {
    use batch_alloc::batch_alloc;

    parser!(#[batch_alloc]);
}

/// The generated input.
pub mod generate {
    use std::fmt::Write as _;

    use crate::rng::SplitMix64 as Rng;

    /// A program of `lines` lines. A line is a sum of 2 to 24 terms; a
    /// term, a product of 1 to 3 factors; a factor, a number, an earlier
    /// line's variable, a parenthesized sum (at most three deep), a
    /// negation or a small power.
    pub fn program(lines: u64) -> String {
        let mut rng = Rng::new(0x5eed_e4b2);
        let mut out = String::with_capacity(lines as usize * 480);
        for n in 0..lines {
            let _ = write!(out, "let x{n} = ");
            sum(&mut rng, &mut out, n, 0);
            out.push_str(";\n");
        }
        out
    }

    fn sum(rng: &mut Rng, out: &mut String, defined: u64, depth: u32) {
        let terms = match depth {
            0 => 2 + rng.below(23),
            _ => 2 + rng.below(4),
        };
        for i in 0..terms {
            if i > 0 {
                out.push_str([" + ", " - "][rng.below(2) as usize]);
            }
            let factors = 1 + rng.below(3);
            for j in 0..factors {
                if j > 0 {
                    out.push_str([" * ", " / ", " % "][rng.below(3) as usize]);
                }
                factor(rng, out, defined, depth);
            }
        }
    }

    fn factor(rng: &mut Rng, out: &mut String, defined: u64, depth: u32) {
        match rng.below(20) {
            0..=10 => {
                let _ = write!(out, "{}", rng.below(1000));
            }
            11..=15 if defined > 0 => {
                // Mostly recent lines, as in real code.
                let back = 1 + rng.below(defined.min(50));
                let _ = write!(out, "x{}", defined - back);
            }
            16 | 17 if depth < 3 => {
                out.push('(');
                sum(rng, out, defined, depth + 1);
                out.push(')');
            }
            18 => {
                out.push('-');
                factor(rng, out, defined, depth);
            }
            _ => {
                let _ = write!(out, "{} ^ {}", rng.below(10), rng.below(4));
            }
        }
    }
}
