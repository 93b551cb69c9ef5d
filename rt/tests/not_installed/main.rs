//! The runtime with no `BatchAlloc` installed, in a binary of its own
//! because this one has no `#[global_allocator]`: batches hand out plain
//! boxes, scopes open nothing, and the statistics stay at zero. One module
//! per subject: `fallback` and `scopes`, and `sources`, checks
//! that read the runtime's sources rather than run it (here since they
//! need no allocator either).
//!
//! With `BatchAlloc` not installed nothing moves the process-wide counters,
//! so the tests need no serial lock: each checks they are still zero.

mod fallback;
mod scopes;
#[cfg(not(miri))]
mod sources;
