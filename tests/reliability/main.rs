//! The reliability suite, in one binary: one module per test, named as the
//! file it was (`cargo test --test reliability -- reliability_mix` runs the
//! mix alone, `-- reliability_fragmentation --ignored` its long version).
//! Fragmentation, churn, a long-lived mix, thread churn and exit races
//! through explicit batches (`Batch`), the first four again with capture on
//! (`reliability_capture_*`);
//! panics; the runtime without its address range; `stats()` while threads
//! exit. docs/reliability.md says what each shows.
//!
//! The global allocator is `BatchAlloc::system()`. Every test counts slots
//! and spans in the process-wide `stats()` or reads the process's resident
//! memory, so every test runs through the binary's one serial lock
//! ([`serial`]): one at a time, each on a thread of its own.
//! `reliability_fault_inner` is a binary of its own: its global allocator
//! is another.

mod common;
#[path = "../../rt/tests/common/serial.rs"]
mod serial;

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
mod stats_thread_exit;

use batch_alloc::BatchAlloc;

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();
