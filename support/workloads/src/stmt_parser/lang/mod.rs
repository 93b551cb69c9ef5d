//! The front end of `examples/stmt_parser.rs`: a lexer, a
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
//! The code is written once, as three macros (`lexer!` in `lex.rs`,
//! `parser!` in `parse.rs`, `checker!` in `check.rs`), and written out
//! twice: [`plain`] as it stands, [`batched`] with `#[batch_alloc]` on every
//! function and every `impl` block, as a user who annotates everything
//! would. The types (`ast.rs`) are shared, so tokens, trees and summaries
//! of the twins compare equal.
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

mod ast;
#[macro_use]
mod check;
mod fold;
#[macro_use]
mod lex;
#[macro_use]
mod parse;

pub use ast::*;
use fold::Value;

/// The front end as written.
pub mod plain {
    use super::*;

    lexer!();
    parser!();
    checker!();
}

/// The same front end with `#[batch_alloc]` on every function and `impl`.
/// (`quiet`: a user who annotates everything does not want to hear about
/// the functions without loops or boxes, such as `parse` and `check`.)
pub mod batched {
    use super::*;

    lexer!(#[batch_alloc::batch_alloc]);
    parser!(#[batch_alloc::batch_alloc]);
    checker!(#[batch_alloc::batch_alloc]);
}
