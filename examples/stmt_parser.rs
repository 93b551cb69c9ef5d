//! A statement parser in the shape of a real language front end, with and
//! without `#[batch_alloc]`.
//!
//! ```text
//! cargo run --release --example stmt_parser
//! cargo run --release --example stmt_parser -- --bytes 1000000 --seed 7 --reps 5
//! cargo run --release --example stmt_parser -- --only batched --reps 1
//! ```
//!
//! It generates a Lua-like program (about 4 MB by default: a module of
//! functions with `local`s, assignments, calls, `if`/`elseif`/`else`,
//! `while` and `for` loops, `return`s, table constructors, strings with
//! escapes, numbers, operators of eight precedence levels; see `lang/`
//! for the grammar and `generate.rs` for the shape, both listed below),
//! then runs a front end over it in four phases: `lex` makes a
//! `Vec<Token>` with every name and string in a `Box<str>` of its own;
//! `parse` builds the tree by recursive descent, with precedence climbing
//! for expressions, into `Vec<Stmt>` blocks, `Box<Expr>` nodes, argument
//! and field lists and `String` names; `check` walks it, resolving names
//! to locals or globals and folding constants, into a summary; `drop`
//! frees the tree and the tokens. That is the allocation profile of a real
//! front end: many small allocations of several sizes, few of them boxes.
//!
//! The front end runs once as written (`lang::plain`) and once with
//! `#[batch_alloc]` on every function and `impl` block (`lang::batched`),
//! as a user who annotates everything would. The program checks that both
//! give equal tokens, trees and summaries, then prints the time of each
//! phase for each version (medians of alternating runs), the boxes in the
//! tree and how many of them batches served, and what the tree holds.
//!
//! `--only plain|batched` runs one version alone, for a profiler or
//! `valgrind --tool=callgrind`; `--seed S` picks another program;
//! `--emit` prints the program instead of running anything (`luac -p`
//! accepts it).
//!
//! The program is `workloads::stmt_parser`, which the tests and benches
//! run too. Its files, in `support/workloads/src/stmt_parser/`: `lang/`
//! (`mod.rs`: the grammar, and both versions written out; `ast.rs`:
//! tokens, tree, summary; `lex.rs`, `parse.rs` and `check.rs`: the code
//! under test; `fold.rs`: the checker's constant folding) and
//! `generate.rs` (the input).

#![forbid(unsafe_code)]

use batch_alloc::BatchAlloc;
use workloads::{cli, stmt_parser};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

fn main() -> std::process::ExitCode {
    cli::main(
        stmt_parser::USAGE,
        stmt_parser::parse_args,
        stmt_parser::run,
    )
}
