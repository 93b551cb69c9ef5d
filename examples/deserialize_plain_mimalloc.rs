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

use mimalloc::MiMalloc;
use workloads::deserialize::run::{self, Allocator};

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

fn main() -> std::process::ExitCode {
    run::main(Allocator::PlainMimalloc)
}
