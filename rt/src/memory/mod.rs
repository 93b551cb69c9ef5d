//! The region and what lives in it: span metadata and heap records, free-list
//! links, the walk through a reservation's slots, the frames, the pool of
//! empty ones, large blocks, the registry of heap records.

pub(crate) mod cursor;
pub(crate) mod large;
pub(crate) mod link;
pub(crate) mod pool;
pub(crate) mod record;
pub(crate) mod region;
pub(crate) mod types;
