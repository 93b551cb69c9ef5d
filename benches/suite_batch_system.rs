//! The comparison suite under `BatchAlloc<System>`: `#[batch_alloc]` loops
//! on glibc. See `benches/suite/mod.rs`; run the whole suite with
//! `benches/suite/run.sh`.

mod suite;

#[global_allocator]
static GLOBAL: batch_alloc::BatchAlloc = batch_alloc::BatchAlloc::system();

struct Bin;

impl suite::Binary for Bin {
    const ALLOCATOR: suite::Allocator = suite::Allocator::BatchSystem;

    fn version() -> String {
        format!("batch-alloc over glibc {}", suite::glibc_version())
    }
}

fn main() {
    suite::main::<Bin>();
}
