//! The comparison suite under mimalloc: per-item boxes. See
//! `benches/suite/mod.rs`; run the whole suite with `benches/suite/run.sh`.

mod suite;

// A module of the mimalloc binaries alone, kept beside the suite.
#[path = "suite/mimalloc_version.rs"]
mod mimalloc_version;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Bin;

impl suite::Binary for Bin {
    const ALLOCATOR: suite::Allocator = suite::Allocator::Mimalloc;

    fn version() -> String {
        mimalloc_version::mimalloc_version()
    }
}

fn main() {
    suite::main::<Bin>();
}
