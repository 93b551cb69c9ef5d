//! Batch scopes and capture, in one binary of their own because the global
//! allocator here is `BatchAlloc<Counting>`: its inner allocator counts the
//! blocks it serves on each thread, so each test can tell an allocation a
//! scope served from one it passed through. One module per subject, named
//! as the file it was: `cargo test -p batch-alloc-rt --test scopes --
//! capture::` runs the capture tests alone (CI runs those under Miri with
//! both borrow models).
//!
//! Every test reads the process-wide statistics, so each runs through the
//! binary's one serial lock (`workloads::testing::serially`): one at a
//! time, each on a thread of its own.

// Vectors of boxes are what annotated loops make.
#![allow(clippy::vec_box)]

mod capture;
mod large;
mod scope;
mod scopes;

use batch_alloc_rt::BatchAlloc;
use scope::Counting;

#[global_allocator]
static GLOBAL: BatchAlloc<Counting> = BatchAlloc::new(Counting);
