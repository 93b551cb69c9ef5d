//! The facade's tests with `BatchAlloc::system()` as the global allocator,
//! the one a user installs, in one binary: one module per subject, named as
//! the file it was.
//!
//! - The reliability suite (docs/reliability.md says what each test
//!   shows): fragmentation, churn, a long-lived mix, thread churn and exit
//!   races through explicit batches (`Batch`), the first four again with
//!   capture on (`reliability_capture_*`); panics; the runtime without its
//!   address range; `stats()` while threads exit. `cargo test --test system
//!   -- reliability_mix` runs the mix alone (no module's name is part of
//!   another's), `-- reliability_fragmentation --ignored` its long version.
//! - The examples' programs (`example_*`, the `workloads` crate's): each
//!   parses, reads or deserializes what it says, its two versions agree, the
//!   annotated one takes its boxes from batch-alloc, and its command line
//!   and a small run go through.
//! - Deserializing into boxes: `#[serde(with = "batch_alloc::serde_scope")]`
//!   (`serde_scope`) and `#[batch_alloc]` on hand-written serde visitors
//!   (`serde_visitor`).
//!
//! Nearly every test counts slots and spans in the process-wide `stats()`
//! or reads the process's resident memory, so those run through the
//! binary's one serial lock (`serially` of
//! `workloads::testing`): one at a time, each on a thread of its own. The
//! others run plain code only. `tests/reliability_fault_inner.rs` is a
//! binary of its own: its global allocator is another.

mod backlog;

mod example_deserialize;
mod example_expr_parser;
mod example_linked_list;
mod example_stmt_parser;
mod reliability_capture_churn;
mod reliability_capture_fragmentation;
mod reliability_capture_mix;
mod reliability_capture_thread_churn;
mod reliability_churn;
mod reliability_exit_race;
mod reliability_fault_region;
mod reliability_fragmentation;
mod reliability_mix;
mod reliability_panics;
mod reliability_thread_churn;
mod serde_scope;
mod serde_visitor;
mod stats_thread_exit;

use batch_alloc::BatchAlloc;

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

/// The seed of a seeded reliability test: `RELIABILITY_SEED` if set, else
/// `default`.
pub fn seed(default: u64) -> u64 {
    std::env::var("RELIABILITY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}
