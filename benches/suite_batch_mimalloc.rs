//! The comparison suite under `BatchAlloc<MiMalloc>`: `#[batch_alloc]`
//! loops on mimalloc. See `benches/suite/mod.rs`; run the whole suite with
//! `benches/suite/run.sh`.

mod suite;

// A module of the mimalloc binaries alone, kept beside the suite.
#[path = "suite/mimalloc_version.rs"]
mod mimalloc_version;

#[global_allocator]
static GLOBAL: batch_alloc::BatchAlloc<mimalloc::MiMalloc> =
    batch_alloc::BatchAlloc::new(mimalloc::MiMalloc);

struct Bin;

impl suite::Binary for Bin {
    const ALLOCATOR: suite::Allocator = suite::Allocator::BatchMimalloc;

    fn version() -> String {
        format!("batch-alloc over {}", mimalloc_version::mimalloc_version())
    }
}

fn main() {
    suite::main::<Bin>();
}
