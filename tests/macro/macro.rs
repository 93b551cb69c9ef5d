//! The behaviour tests of `#[batch_alloc]` and `scope()`, in one binary:
//! one module per subject, named as the file it was (`cargo test --test
//! macro -- macro_scoped` runs the scoped form's tests alone).
//!
//! - `macro_scoped`: the catalogue of `macro_common/` under `#[batch_alloc]`,
//!   against the code as written.
//! - `transparent`: a corpus as written and annotated, event by event, and
//!   the stack a recursion takes.
//! - `impl_methods`, `return_types`: methods, returns and coercions.
//! - `reach`: iterator chains, recursion, derived `Deserialize`, `scope()`,
//!   rayon.
//! - `macro_expanded`: `examples/macro-expanded.rs` is what the attribute
//!   emits.
//!
//! The global allocator is `BatchAlloc::system()`. The tests that run
//! annotated code read the process-wide counters and capture setting, so
//! each runs through the binary's one serial lock (`serially` or
//! `with_capture` of `workloads::testing`): one at a time, each on a thread
//! of its own. `macro_expanded` runs none (it
//! compares text), so it needs no lock.

// The functions box the way the code the attribute is for does.
#![allow(
    clippy::vec_box,
    clippy::box_collection,
    clippy::type_complexity,
    clippy::let_and_return,
    clippy::while_let_on_iterator,
    clippy::unnecessary_map_on_constructor,
    clippy::vec_init_then_push
)]

#[macro_use]
mod macro_common;

mod impl_methods;
mod macro_expanded;
mod macro_scoped;
mod reach;
mod return_types;
mod transparent;

use batch_alloc::BatchAlloc;

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();
