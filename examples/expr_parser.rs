//! A precedence-climbing expression parser whose loops build `Box<Expr>`
//! nodes, with and without `#[batch_alloc]`.
//!
//! ```text
//! cargo run --release --example expr_parser
//! cargo run --release --example expr_parser -- --lines 100000 --reps 5
//! ```
//!
//! It generates a program of `let` lines, such as
//! `let x7 = 3 * x2 - (x5 + 41) ^ 2 + 8;`, parses it into trees of boxed
//! nodes, evaluates every line and drops the trees: once through the
//! parser as written (`plain`), once through the same parser under the
//! attribute (`batched`). It checks
//! that both give equal trees and equal values, and prints the time of
//! each phase, the boxes made and how many of them batches served.
//!
//! The language: integers, `x<n>` for the value of an earlier line, the
//! operators `+ - * / % ^` with the usual precedence (`^` binds tightest and to the
//! right), unary `-` (tighter than any binary operator), parentheses.
//! Arithmetic wraps on overflow; `x / 0`, `x % 0` and a negative exponent
//! give 0, so every program has a value.
//!
//! The program is `workloads::expr_parser` (`support/workloads/src/
//! expr_parser/`: `lang.rs` holds the tree, the parser written out both
//! ways and the generated input), which the tests and benches run too.

#![forbid(unsafe_code)]

use batch_alloc::BatchAlloc;
use workloads::{cli, expr_parser};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

fn main() -> std::process::ExitCode {
    cli::main(
        expr_parser::USAGE,
        expr_parser::parse_args,
        expr_parser::run,
    )
}
