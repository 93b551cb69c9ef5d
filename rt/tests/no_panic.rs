//! Links the no-unwind proof of the allocator path (see `NoUnwind` in
//! `rt/src/base/no_unwind.rs`). Only meaningful in the proof's build, which CI runs:
//!
//! ```text
//! RUSTFLAGS="--cfg batch_alloc_no_panic" CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
//!     CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS=true \
//!     cargo test -p batch-alloc-rt --release --test no_panic
//! ```
//!
//! That build links only if no `GlobalAlloc` method of `BatchAlloc` can
//! unwind, with debug assertions and overflow checks on: no panic is
//! reachable from `alloc`, `alloc_zeroed`, `dealloc` or `realloc`.
//!
//! A test binary of its own, so that the proof's build (a target directory
//! of its own, with flags no other build uses) links only the proof; in
//! every other build it is empty.

#[cfg(batch_alloc_no_panic)]
#[test]
fn the_allocator_path_cannot_unwind() {
    use batch_alloc_rt::testing::no_panic_proof;
    use std::alloc::Layout;
    let layout = Layout::new::<[u64; 4]>();
    // SAFETY: a plain allocation, grown, and freed, through the proof's
    // instantiation of the wrapper.
    unsafe {
        let p = no_panic_proof::alloc(layout);
        assert!(!p.is_null());
        let p = no_panic_proof::realloc(p, layout, 64);
        assert!(!p.is_null());
        no_panic_proof::dealloc(p, Layout::from_size_align(64, 8).unwrap());
        let z = no_panic_proof::alloc_zeroed(layout);
        assert!(!z.is_null());
        no_panic_proof::dealloc(z, layout);
    }
}
