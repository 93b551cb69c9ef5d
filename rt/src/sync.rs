//! The atomics of the cross-thread protocols (a span's remote word, owner
//! and links; a heap's mailbox), switchable to loom's for model checking
//! (`RUSTFLAGS="--cfg loom"`, see `loom_model.rs`). Process-wide statics use
//! `core`'s atomics directly: loom's cannot be built in a `static`, and the
//! models check the protocols in isolation.

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64};

pub(crate) use std::sync::atomic::Ordering;

/// Waits a moment for another thread to finish a short critical step.
#[inline]
pub(crate) fn backoff(spins: &mut u32) {
    #[cfg(loom)]
    {
        let _ = spins;
        loom::thread::yield_now();
    }
    #[cfg(not(loom))]
    {
        if *spins < 64 {
            *spins += 1;
            core::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}
