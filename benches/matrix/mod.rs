//! The size × count × strategy matrix: criterion groups (`groups`) over
//! the ways of making objects (`strategies`), in five bench binaries, one
//! per global allocator: `matrix_system` (glibc, with the arenas and the
//! `Vec` limit), `matrix_mimalloc`, `matrix_jemalloc`, `matrix_batch_system`
//! (`BatchAlloc<System>`) and `matrix_batch_mimalloc` (`BatchAlloc<MiMalloc>`).
//!
//! `python3 benches/run.py matrix` runs them in interleaved rounds, each
//! round a criterion baseline (`r0`, `r1`, ...), and writes
//! docs/benchmarks.md; one binary alone is a criterion bench
//! (`cargo bench -p batch-alloc-benches --bench matrix_system -- alloc_drop/64B`).

pub mod groups;
pub mod strategies;

use criterion::Criterion;
use strategies::{Batched, Boxes, BumpFresh, BumpReset, Item, Limit, Strategy, Typed, TypedArena};

/// One bench binary's global allocator.
#[allow(dead_code)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allocator {
    System,
    Mimalloc,
    Jemalloc,
    BatchSystem,
    BatchMimalloc,
}

/// Something done once per strategy a binary runs (registering its bench).
pub trait Visit<T: Item> {
    fn strategy<S: Strategy<T>>(&mut self, label: &str);
}

/// Visits every strategy the binary of `allocator` runs. The arenas and the
/// limit, which take a few large blocks from the global allocator, run in
/// the glibc binary only; the wrapped binaries run the annotated loop
/// (`batch-*`) and `Box::new` through the wrapper with no scope open
/// (`wrap-*`); `BatchAlloc<System>`'s also a `Batch<T>` per loop (`typed`).
pub fn each_strategy<T: Item, V: Visit<T>>(allocator: Allocator, visit: &mut V) {
    match allocator {
        Allocator::System => {
            visit.strategy::<Boxes<T>>("box-glibc");
            visit.strategy::<Limit<T>>("vec");
            visit.strategy::<BumpFresh<T>>("bumpalo");
            visit.strategy::<BumpReset<T>>("bumpalo-reset");
            visit.strategy::<TypedArena<T>>("typed-arena");
        }
        Allocator::Mimalloc => visit.strategy::<Boxes<T>>("box-mimalloc"),
        Allocator::Jemalloc => visit.strategy::<Boxes<T>>("box-jemalloc"),
        Allocator::BatchSystem => {
            visit.strategy::<Batched<T>>("batch-glibc");
            visit.strategy::<Boxes<T>>("wrap-glibc");
            visit.strategy::<Typed<T>>("typed");
        }
        Allocator::BatchMimalloc => {
            visit.strategy::<Batched<T>>("batch-mimalloc");
            visit.strategy::<Boxes<T>>("wrap-mimalloc");
        }
    }
}

/// The entry point of every matrix binary.
pub fn main(allocator: Allocator) {
    // glibc runs slower once a process has had a second thread, and the
    // cross-thread benches spawn one: spawn one first, so that every
    // figure is measured in the same mode.
    std::thread::spawn(|| {}).join().unwrap();
    assert_eq!(
        batch_alloc::is_active(),
        matches!(allocator, Allocator::BatchSystem | Allocator::BatchMimalloc),
        "BatchAlloc active where it should not be, or not where it should"
    );
    let mut c = Criterion::default().configure_from_args();
    groups::register(allocator, &mut c);
    c.final_summary();
}
