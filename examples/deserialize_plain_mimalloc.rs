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

// The modules, the same in every build.
#[path = "deserialize/demo.rs"]
mod demo;
pub use demo::*;

fn main() -> std::process::ExitCode {
    run::main(run::Allocator::PlainMimalloc)
}
