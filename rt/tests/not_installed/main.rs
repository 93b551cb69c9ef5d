//! The runtime with no `BatchAlloc` installed, in a binary of its own
//! because this one has no `#[global_allocator]`: batches hand out plain
//! boxes, scopes open nothing, and the statistics stay at zero. One module
//! per subject, named as the file it was.
//!
//! With `BatchAlloc` not installed nothing moves the process-wide counters,
//! so the tests need no serial lock: each checks they are still zero.

#[path = "../common/mod.rs"]
mod common;

mod fallback;
mod scopes_unbatched;
