//! `examples/deserialize.rs` with mimalloc under `BatchAlloc` instead of the
//! system allocator: same code, same options. A global allocator is chosen
//! at compile time, hence a second binary. The demonstration runs it as a
//! child process for its "#[batch_alloc], BatchAlloc<MiMalloc>" row, and
//! `cargo run --release --example deserialize -- --allocator mimalloc`
//! makes it the main process (both build it first).
//!
//! ```text
//! cargo run --release --example deserialize_mimalloc
//! ```

#![forbid(unsafe_code)]
#![allow(clippy::vec_box)]

use batch_alloc::BatchAlloc;
use mimalloc::MiMalloc;

#[global_allocator]
static GLOBAL: BatchAlloc<MiMalloc> = BatchAlloc::new(MiMalloc);

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
    run::main(run::Allocator::Mimalloc)
}
