//! `examples/deserialize.rs` with mimalloc as the global allocator and no
//! `BatchAlloc`: the code as written on plain mimalloc, what a user who
//! switches allocators instead of annotating gets. The demonstration runs
//! it as a child process for its "as written, mimalloc" row (built first
//! when run through cargo); run alone, it compares its two versions,
//! the annotated one with nothing to batch them.
//!
//! ```text
//! cargo run --release --example deserialize_plain_mimalloc
//! ```

#![forbid(unsafe_code)]
#![allow(clippy::vec_box)]

use mimalloc::MiMalloc;

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

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
    run::main(run::Allocator::PlainMimalloc)
}
