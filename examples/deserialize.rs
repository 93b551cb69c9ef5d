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
//! fields; 30,000 records by default, about 33 MB) and deserializes it
//! through the visitors of `visitors.rs` (see the files below), once as written and
//! once with `#[batch_alloc]` on their `visit_seq` and `visit_map` methods,
//! into types that hold `Vec<Box<Record>>` and boxed children. It does so
//! under glibc, in this process (`BatchAlloc<System>`, below), and under
//! mimalloc, in two child processes: `examples/deserialize_plain_mimalloc.rs`
//! (the code as written on plain mimalloc, what switching allocators gives)
//! and `examples/deserialize_mimalloc.rs` (`#[batch_alloc]` on
//! `BatchAlloc<MiMalloc>`), both built first when run through cargo. It
//! checks that every version gives the same result and prints, for each:
//! parse and drop time (medians of runs in rotation), the allocations
//! batch-alloc served, the peak resident memory of a fresh process that
//! parses once, and the speed-ups over the code as written on glibc.
//!
//! `--input FILE` deserializes your own JSON file into a document tree that
//! boxes every value instead.
//!
//! A global allocator is chosen at compile time, hence one binary per
//! allocator; `--allocator mimalloc` makes `examples/deserialize_mimalloc.rs`
//! the main process and compares its versions with plain mimalloc.
//!
//! The program is `workloads::deserialize`, which the tests and benches
//! run too. Its files, in `support/workloads/src/deserialize/`: `model.rs`
//! (the types), `visitors.rs` (the code under test), `generate.rs` (the
//! input), `run.rs` (options, timing, memory, the table) and
//! `run/builds.rs` (the builds with other allocators, as child processes).

#![forbid(unsafe_code)]

use batch_alloc::BatchAlloc;
use workloads::deserialize::run::{self, Allocator};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

fn main() -> std::process::ExitCode {
    run::main(Allocator::System)
}
