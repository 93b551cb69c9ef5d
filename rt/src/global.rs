//! `BatchAlloc`, the global-allocator wrapper, and how the runtime learns
//! that it is installed.

use core::alloc::{GlobalAlloc, Layout};
use core::cell::Cell;
use core::ptr;
use std::alloc::System;

use crate::free::{free, Freed};
use crate::region::{locate, Located};
use crate::sync::Ordering;
use core::sync::atomic::AtomicU8;

/// A `#[global_allocator]` that frees batch slots back into their spans and
/// passes everything else to the allocator it wraps, untouched.
///
/// ```
/// use batch_alloc_rt::BatchAlloc;
///
/// #[global_allocator]
/// static GLOBAL: BatchAlloc = BatchAlloc::system();
/// # fn main() {}
/// ```
///
/// Any [`GlobalAlloc`] can be wrapped, for example
/// `BatchAlloc::new(mimalloc::MiMalloc)`. Allocations never come from spans
/// through this type: only [`Batch`](crate::Batch) hands out span slots.
/// `dealloc` and `realloc` recognise a span slot by a range check before they
/// read any metadata, so ordinary pointers cost one comparison more than the
/// inner allocator.
#[derive(Debug, Default, Clone, Copy)]
pub struct BatchAlloc<A = System> {
    inner: A,
}

impl<A> BatchAlloc<A> {
    /// Wraps `inner`.
    pub const fn new(inner: A) -> Self {
        BatchAlloc { inner }
    }

    /// The wrapped allocator.
    pub const fn inner(&self) -> &A {
        &self.inner
    }
}

impl BatchAlloc<System> {
    /// Wraps the system allocator.
    pub const fn system() -> Self {
        BatchAlloc::new(System)
    }
}

// SAFETY: every method forwards to the inner allocator except for span
// slots, which only `Batch` hands out, each exactly once, and which are freed
// back into their spans; `realloc` of a slot keeps it when it fits and
// otherwise moves the contents to a block of the inner allocator. No method
// unwinds.
unsafe impl<A: GlobalAlloc> GlobalAlloc for BatchAlloc<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        unsafe { self.inner.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() == PROBE.size() && layout.align() == PROBE.align() {
            observe_probe();
        }
        // SAFETY: the caller's contract, forwarded.
        unsafe { self.inner.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match locate(ptr) {
            // SAFETY: a pointer inside the region was handed out by a batch
            // as a box; the caller gives it up.
            Some(at) => unsafe {
                free(Freed {
                    ptr,
                    at,
                    size: layout.size(),
                })
            },
            // SAFETY: the caller's contract, forwarded.
            None => unsafe { self.inner.dealloc(ptr, layout) },
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match locate(ptr) {
            // SAFETY: the caller's contract, forwarded.
            Some(at) => unsafe { self.realloc_slot(at, ptr, layout, new_size) },
            // SAFETY: the caller's contract, forwarded.
            None => unsafe { self.inner.realloc(ptr, layout, new_size) },
        }
    }
}

impl<A: GlobalAlloc> BatchAlloc<A> {
    /// A slot keeps any size up to its class; past that the contents move to
    /// the inner allocator and the slot is freed.
    ///
    /// # Safety
    /// - As for [`GlobalAlloc::realloc`], with `at` locating `ptr`.
    #[cold]
    unsafe fn realloc_slot(
        &self,
        at: Located,
        ptr: *mut u8,
        layout: Layout,
        new_size: usize,
    ) -> *mut u8 {
        if new_size <= at.span().slot_size.load(Ordering::Relaxed) as usize {
            return ptr;
        }
        // SAFETY: the caller guarantees `new_size`, rounded up to the
        // alignment, does not overflow `isize`.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: `new_size` is non-zero (it exceeds the slot size).
        let new = unsafe { self.inner.alloc(new_layout) };
        if new.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: both blocks are valid for `layout.size()` bytes (the new
        // one is larger) and distinct.
        unsafe { ptr::copy_nonoverlapping(ptr, new, layout.size()) };
        // SAFETY: the slot is given up by the caller.
        unsafe {
            free(Freed {
                ptr,
                at,
                size: layout.size(),
            })
        };
        new
    }
}

/// The layout `is_active` allocates to find out whether `BatchAlloc` serves
/// the global allocator. Any `alloc_zeroed` of this layout costs one
/// thread-local read more; no other call is affected.
const PROBE: Layout = match Layout::from_size_align(3, 64) {
    Ok(layout) => layout,
    Err(_) => panic!("invalid probe layout"),
};

const UNKNOWN: u8 = 0;
const ACTIVE: u8 = 1;
const INACTIVE: u8 = 2;

static INSTALLED: AtomicU8 = AtomicU8::new(UNKNOWN);

thread_local! {
    /// 1 while this thread probes, 2 once a `BatchAlloc` saw the probe.
    static PROBE_STATE: Cell<u8> = const { Cell::new(0) };
}

fn observe_probe() {
    let _ = PROBE_STATE.try_with(|state| {
        if state.get() == 1 {
            state.set(2);
        }
    });
}

/// Whether [`BatchAlloc`] is the global allocator. When it is not, batches
/// hand out plain `Box::new` boxes: correct, just not faster, and no span
/// slot ever reaches an allocator that did not make it.
pub fn is_active() -> bool {
    match INSTALLED.load(Ordering::Relaxed) {
        ACTIVE => true,
        INACTIVE => false,
        _ => probe(),
    }
}

#[cold]
fn probe() -> bool {
    PROBE_STATE.with(|state| state.set(1));
    // SAFETY: the layout has a non-zero size. `black_box` keeps the
    // optimiser from deleting the unused allocation, and the probe with it.
    let block = std::hint::black_box(unsafe { std::alloc::alloc_zeroed(PROBE) });
    if !block.is_null() {
        // SAFETY: allocated just above with the same layout.
        unsafe { std::alloc::dealloc(block, PROBE) };
    }
    let seen = PROBE_STATE.with(|state| state.replace(0)) == 2;
    INSTALLED.store(if seen { ACTIVE } else { INACTIVE }, Ordering::Relaxed);
    seen
}
