//! Deserializing into boxes, in one binary: one module per subject, named
//! as the file it was (`cargo test --test serde -- serde_visitor` runs the
//! visitor tests alone).
//!
//! - `serde_scope`: `#[serde(with = "batch_alloc::serde_scope")]`.
//! - `serde_visitor`: `#[batch_alloc]` on hand-written serde visitors.
//! - `example_deserialize`: the main demonstration's modules, on small
//!   inputs.
//!
//! The global allocator is `BatchAlloc::system()`. The tests that allocate
//! from batches or scopes read the process-wide counters and capture
//! setting, so each runs through the binary's one serial lock ([`serial`]):
//! one at a time, each on a thread of its own. The others run plain code
//! only, and need no lock.

#[allow(dead_code)]
#[path = "../../rt/tests/common/check.rs"]
mod check;
#[path = "../../rt/tests/common/serial.rs"]
mod serial;

mod example_deserialize;
mod serde_scope;
mod serde_visitor;

use batch_alloc::BatchAlloc;

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();
