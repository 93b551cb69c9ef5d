//! What programs and the attribute's code call: the allocator wrapper,
//! batches, scopes, the statistics, the per-site report, and what they
//! need to know (whether the wrapper is installed, the environment).

pub(crate) mod batch;
pub(crate) mod expansion;
pub(crate) mod global;
#[cfg(batch_alloc_no_panic)]
pub(crate) mod no_panic_proof;
pub(crate) mod probe;
pub(crate) mod report;
pub(crate) mod scope;
pub(crate) mod settings;
pub(crate) mod stats;
