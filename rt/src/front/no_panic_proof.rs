//! The instantiation the no-unwind proof (`no_unwind.rs`) is built from:
//! the four methods of `BatchAlloc` over an inner allocator that calls the C
//! library directly, so that only this crate's code is judged, compiled in
//! this crate where the optimiser sees every function they call.
//! `rt/tests/no_panic.rs` links them; only with
//! `RUSTFLAGS="--cfg batch_alloc_no_panic"`.

use core::alloc::{GlobalAlloc, Layout};

use crate::front::global::BatchAlloc;

/// `malloc` and friends, for alignments they serve.
struct CAlloc;

// SAFETY: forwards to the C library's allocator, which returns memory
// aligned for any fundamental type; the proof's callers use no more.
unsafe impl GlobalAlloc for CAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: no preconditions.
        unsafe { libc::malloc(layout.size()).cast() }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, _: Layout) {
        // SAFETY: `ptr` came from `malloc` (the caller's contract).
        unsafe { libc::free(ptr.cast()) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, _: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `malloc` (the caller's contract).
        unsafe { libc::realloc(ptr.cast(), new_size).cast() }
    }
}

const PROVED: BatchAlloc<CAlloc> = BatchAlloc::new(CAlloc);

/// # Safety
/// - As for [`GlobalAlloc::alloc`].
#[inline(never)]
pub unsafe fn alloc(layout: Layout) -> *mut u8 {
    // SAFETY: forwarded contract.
    unsafe { PROVED.alloc(layout) }
}

/// # Safety
/// - As for [`GlobalAlloc::alloc_zeroed`].
#[inline(never)]
pub unsafe fn alloc_zeroed(layout: Layout) -> *mut u8 {
    // SAFETY: forwarded contract.
    unsafe { PROVED.alloc_zeroed(layout) }
}

/// # Safety
/// - As for [`GlobalAlloc::dealloc`].
#[inline(never)]
pub unsafe fn dealloc(ptr: *mut u8, layout: Layout) {
    // SAFETY: forwarded contract.
    unsafe { PROVED.dealloc(ptr, layout) }
}

/// # Safety
/// - As for [`GlobalAlloc::realloc`].
#[inline(never)]
pub unsafe fn realloc(ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
    // SAFETY: forwarded contract.
    unsafe { PROVED.realloc(ptr, layout, new_size) }
}
