//! The comparison suite under jemalloc (tikv-jemallocator): per-item boxes
//! and jemalloc's own batch API. See `benches/suite/mod.rs`; run the whole
//! suite with `benches/suite/run.sh`.

mod suite;

// A module of this binary alone, kept beside the suite it extends.
#[path = "suite/jemalloc_batch.rs"]
mod jemalloc_batch;

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

struct Bin;

impl suite::Binary for Bin {
    const ALLOCATOR: suite::Allocator = suite::Allocator::Jemalloc;

    fn version() -> String {
        format!("jemalloc {}", jemalloc_batch::version())
    }

    fn extra<T: suite::strategies::Item, V: suite::Visit<T>>(visit: &mut V) {
        visit.strategy::<jemalloc_batch::JemallocBatch<T>>("jemalloc-batch");
    }
}

fn main() {
    suite::main::<Bin>();
}
