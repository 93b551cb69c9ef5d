//! The runtime's tests with `BatchAlloc<System>` as the global allocator,
//! in one binary: one module per subject, named as the file it was
//! (`cargo test -p batch-alloc-rt --test installed -- stress` runs the
//! stress test alone).
//!
//! Nearly every test here counts slots and spans in the process-wide
//! `stats()`, reads the process's memory, or moves them, so every test runs
//! through the binary's one serial lock (`serially` of
//! `workloads::testing`): one at a time, each on a thread of its own. The
//! tests whose expected outcome is an abort (`double_free`, `hardened`)
//! run that part in a child process (`workloads::in_child!`).
//!
//! The runtime's other test binaries are apart for a reason each states:
//! `scopes` (an inner allocator that counts what it serves), `not_installed`
//! (no `BatchAlloc` at all), `fork` (forks the process) and `no_panic` (a
//! link-time proof in a build of its own).

// Vectors of boxes are what the allocator is for.
#![allow(clippy::vec_box)]

mod batch_refills;
mod cleanup;
mod double_free;
mod hardened;
mod idle_owner;
mod outbox;
mod properties;
mod protectors;
mod realloc_in_place;
mod rss_returns;
mod small_boxes;
mod stress;
mod thread_local_cleanup;
mod trim;
mod unbatched;

use batch_alloc_rt::BatchAlloc;

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();
