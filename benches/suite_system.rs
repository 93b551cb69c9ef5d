//! The comparison suite under the system allocator (glibc): per-item boxes,
//! the `Vec` limit and the arenas. See `benches/suite/mod.rs`; run the whole
//! suite with `benches/suite/run.sh`.

mod suite;

#[global_allocator]
static GLOBAL: std::alloc::System = std::alloc::System;

struct Bin;

impl suite::Binary for Bin {
    const ALLOCATOR: suite::Allocator = suite::Allocator::System;

    fn version() -> String {
        format!("glibc {}", suite::glibc_version())
    }
}

fn main() {
    suite::main::<Bin>();
}
