//! The runtime of [batch-alloc]: spans of individually freeable slots behind a
//! global-allocator wrapper. Use it through the `batch-alloc` crate.
//!
//! # Glossary
//!
//! - **region**: one range of address space the runtime reserves at first
//!   use. A pointer is a batch slot exactly when it lies inside it, which
//!   `dealloc` checks with one comparison before reading anything else.
//! - **frame**: the region is cut into frames of 64 KiB (8 pages of 8 KiB).
//!   Each frame's metadata lives in an array beside the frames, not in it.
//! - **span**: a frame assigned to one size class and one owner heap, cut
//!   into equal slots from its first byte.
//! - **slot**: room for one object. Handed out in a `Box<T>`, a slot is
//!   freed by the global allocator's `dealloc` like any box.
//! - **size class**: one of the slot sizes (8 B to 4 KiB); see
//!   [`size_classes`].
//! - **batch**: a loop-scoped [`Batch`] holding a run of slots reserved from
//!   one span; allocation is a pointer bump or a list pop.
//! - **reservation** (refill): one call that hands a batch up to the slots it
//!   asked for, or the rest of the span when little would remain.
//! - **heap**: per-thread owner state: queues of spans by class, a mailbox,
//!   counters.
//! - **owner thread**: the thread whose heap holds a span; it frees into the
//!   span's own free list with no atomic instruction.
//! - **remote free**: a free on any other thread. The freeing thread chains
//!   its frees per span in its **outbox** and pushes each chain onto the
//!   span's remote list with one compare-and-swap (a thread that has no
//!   heap gets one at its first remote free; only an exiting thread pushes
//!   each free); the owner takes the list back in one exchange.
//! - **scope**: while an annotated loop runs, its thread's allocations come
//!   from **runs**, per-class stretches of slots the thread keeps between
//!   scopes; see [`scope`].
//! - **abandoned span**: a span whose owner thread exited while boxes from it
//!   were alive. Frees still work; the last one returns the span to the pool.
//! - **pool**: empty frames shared by all threads; past a limit they decay:
//!   a frame not reused within 100 ms goes back to the
//!   operating system.
//!
//! [batch-alloc]: https://docs.rs/batch-alloc

// The modules in layers, each importing only from the layers above it in
// this list (rt/tests/layers.rs checks it):
//
// 0. config, fatal, settings  constants; the abort path; the environment
// 1. os, class             the OS; the size-class table
// 2. sync                  atomics, the spin lock, the index stack, windows
// 3. types, locks          the shared structures: spans, heap records, runs;
//                          the process-wide locks in their order, across fork
// 4. link, growth          free-list links and their hardening; refill growth
// 5. region                address space, frames, span reset
// 6. pool                  empty frames: single ones and whole extents
// 7. remote, record, large  the cross-thread word protocol; the heap registry; large blocks
// 8. queues                a heap's spans: queues, slots coming back
// 9. outbox                remote frees, collected and sent in chains
// 10. heap                 this thread's heap and scope state; thread exit
// 11. reserve, free        refills; frees
// 12. runs                 the runs scopes allocate from
// 13. global, stats        the allocator wrapper and its probe; statistics
// 14. batch, scope         loop-scoped batches; batch scopes
mod batch;
mod class;
mod config;
mod fatal;
mod free;
mod global;
mod growth;
mod heap;
mod large;
mod link;
mod locks;
mod os;
mod outbox;
mod pool;
mod queues;
mod record;
mod region;
mod remote;
mod reserve;
mod runs;
mod scope;
mod settings;
mod stats;
mod sync;
mod types;

pub use batch::Batch;
pub use class::SizeClass;
pub use global::{is_active, BatchAlloc};
pub use growth::{default_growth, set_default_growth, Growth};
pub use heap::trim;
pub use scope::{capture, scope, set_capture, Capture};
pub use stats::{stats, Stats};

/// Not public API: what the `batch-alloc` facade, the code `#[batch_alloc]`
/// generates and this crate's tests call, gathered here so that the root
/// holds the public API only.
#[doc(hidden)]
pub mod __private {
    pub use crate::batch::RawBatch;
    #[cfg(batch_alloc_no_panic)]
    pub use crate::global::no_panic_proof;
    pub use crate::scope::{
        at_exit, batchable, boxed, entered, outside_scope, scope_on_this_thread, scope_would_join,
        try_boxed, Scope, ScopedFuture,
    };
    pub use crate::settings::{settings, Settings};
    pub use crate::stats::scoped_allocations_on_this_thread;

    /// The size classes without the rule that grows each class to fill its
    /// span, for comparing the two tables (the `policy-study` feature).
    #[cfg(feature = "policy-study")]
    pub fn size_classes_before_growth() -> Vec<crate::SizeClass> {
        let (table, len) = crate::class::build_table(false);
        table[..len].to_vec()
    }

    #[cfg(feature = "policy-study")]
    pub use crate::reserve::set_exact_refills;
}

/// The size classes batches serve, smallest first.
pub fn size_classes() -> &'static [SizeClass] {
    &class::CLASSES
}

/// Constants the allocator is built with.
pub mod limits {
    pub use crate::config::{FRAME_SIZE, MAX_SMALL_SIZE, MIN_SPAN_PAGES, PAGE_SIZE, REGION_BYTES};

    /// Bytes of span metadata per frame, kept beside the frames.
    pub const SPAN_METADATA_BYTES: usize = size_of::<crate::types::Span>();

    /// The largest allocation a capturing scope serves, past the size
    /// classes as a large block of whole frames (aligned up to a frame);
    /// larger ones go to the inner allocator. So do those between the
    /// classes and this that whole frames would fit badly: a block is
    /// served as frames when rounding it up to them wastes at most an
    /// eighth of it (from 56.9 KiB to 64 KiB, from 113.8 KiB to 128 KiB,
    /// and everything from 448 KiB on).
    pub const MAX_LARGE_SIZE: usize = crate::large::LARGE_MAX;
}

#[cfg(all(test, loom))]
mod loom_model;

#[cfg(test)]
#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();
