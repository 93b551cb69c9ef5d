//! The behaviour tests of `#[batch_alloc]`, in one binary: one module per
//! subject (`cargo test --test macro -- served` runs one alone).
//!
//! - `transparent`: a corpus as written and annotated, event by event, and
//!   the stack a recursion takes: the annotated function is the program as
//!   written.
//! - `served`: every spelling of an allocating loop is served, exactly as
//!   `scope(|| ..)` around the function as written would serve it.
//! - `scopes`: when the scope is open: the body, every exit, calls inside,
//!   each poll of an `async fn` on whichever thread, rayon workers.
//! - `macro_expanded`: `examples/macro-expanded.rs` is what the attribute
//!   emits.
//!
//! The global allocator is `BatchAlloc::system()`. The tests that run
//! annotated code read the process-wide counters, so each runs through the
//! binary's one serial lock (`serially` of `workloads::testing`): one at a
//! time, each on a thread of its own. `macro_expanded` runs none (it
//! compares text), so it needs no lock.

// The corpus boxes the way the code the attribute is for does.
#![allow(clippy::vec_box, clippy::type_complexity)]

mod macro_expanded;
mod pool;
mod scopes;
mod served;
mod transparent;

use batch_alloc::BatchAlloc;

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();
