//! What the allocator stands on, with no allocator state of its own: the
//! constants, the size classes, frame numbers, the operating system, the
//! abort path, the synchronisation primitives and the locks.

pub(crate) mod class;
pub(crate) mod config;
pub(crate) mod fatal;
pub(crate) mod frame;
pub(crate) mod locks;
pub(crate) mod no_unwind;
pub(crate) mod os;
pub(crate) mod sync;
