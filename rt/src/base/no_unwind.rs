//! Proof, at link time, that the allocator path cannot unwind: a marker
//! each `GlobalAlloc` method of `BatchAlloc` holds from its first
//! instruction and forgets at its normal end.

/// Proof, at link time, that a method cannot unwind: with
/// `RUSTFLAGS="--cfg batch_alloc_no_panic"`, dropping one calls a symbol that
/// does not exist, so a build links only if the optimiser has removed every
/// path on which it would be dropped, that is every path that unwinds out
/// of the method (the `no-panic` crate's technique). CI builds the proof's instantiation (`no_panic_proof.rs`)
/// that way, with debug assertions and overflow checks on. Otherwise it is
/// nothing at all.
pub(crate) struct NoUnwind;

impl NoUnwind {
    /// The method's normal end.
    #[inline(always)]
    // Forgetting is what matters in the proof's build, where it has a
    // destructor; elsewhere it is nothing either way.
    #[allow(clippy::forget_non_drop)]
    pub(crate) fn holds(self) {
        core::mem::forget(self);
    }
}

#[cfg(batch_alloc_no_panic)]
impl Drop for NoUnwind {
    fn drop(&mut self) {
        extern "C" {
            #[link_name = "\n\nbatch-alloc: a GlobalAlloc method of BatchAlloc can unwind\n\n"]
            fn allocator_path_can_unwind() -> !;
        }
        // SAFETY: never runs: a build that would call it does not link.
        unsafe { allocator_path_can_unwind() }
    }
}
