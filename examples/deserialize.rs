//! The main demonstration: one attribute on hand-written serde visitors,
//! on work that looks like a real deserializer's.
//!
//! ```text
//! cargo run --release --example deserialize
//! cargo run --release --example deserialize -- --records 500000
//! cargo run --release --example deserialize -- --input your-file.json
//! cargo run --release --example deserialize -- --allocator mimalloc
//! ```
//!
//! It generates a customer export (nested objects, arrays, optional
//! fields; 100,000 records by default, about 65 MB) and deserializes it
//! through the visitors of `deserialize/visitors.rs`, once as written and
//! once with `#[batch_alloc]` on their `visit_seq` and `visit_map` methods,
//! into types that hold `Vec<Box<Record>>` and boxed children; then, the
//! same text into a document tree that boxes every value. It checks that
//! both versions give equal results and prints, for each: parse and drop
//! time (medians of alternating runs), the boxes made, how many of them
//! batches served, and the peak resident memory of a fresh process that
//! parses once.
//!
//! `--input FILE` runs the document tree on your own JSON file instead.
//!
//! The allocator `BatchAlloc` wraps is chosen at compile time, by the
//! `#[global_allocator]` below; `--allocator mimalloc` runs
//! `examples/deserialize_mimalloc.rs`, the same program with mimalloc
//! underneath.
//!
//! Files: `deserialize/model.rs` (the types), `deserialize/visitors.rs`
//! (the code under test), `deserialize/generate.rs` (the input),
//! `deserialize/run.rs` (options, timing, memory, the table),
//! `shared/timing.rs` (the clock and the table, shared by the examples).

#![forbid(unsafe_code)]
// The types box what they hold, which is the point of the example.
#![allow(clippy::vec_box)]

use batch_alloc::BatchAlloc;

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

// The argument reader; `run::main` has modes of its own instead of `cli::main`.
#[allow(dead_code)]
#[path = "shared/cli.rs"]
mod cli;
#[path = "deserialize/generate.rs"]
pub mod generate;
#[path = "deserialize/model.rs"]
pub mod model;
#[path = "deserialize/run.rs"]
pub mod run;
#[path = "shared/timing.rs"]
pub mod timing;
#[path = "shared/versions.rs"]
pub mod versions;
#[path = "deserialize/visitors.rs"]
pub mod visitors;

fn main() -> std::process::ExitCode {
    run::main(run::Allocator::System)
}
