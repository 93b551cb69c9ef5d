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

use batch_alloc::BatchAlloc;
use mimalloc::MiMalloc;
use workloads::deserialize::run::{self, Allocator};

#[global_allocator]
static GLOBAL: BatchAlloc<MiMalloc> = BatchAlloc::new(MiMalloc);

fn main() -> std::process::ExitCode {
    run::main(Allocator::Mimalloc)
}
