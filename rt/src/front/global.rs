//! `BatchAlloc`, the global-allocator wrapper: the four `GlobalAlloc`
//! methods, each serving an open scope's allocations from its runs, slots
//! back into their spans, and everything else from the inner allocator. How the runtime learns that the wrapper is installed is
//! `probe.rs`; the proof that no method unwinds, `no_unwind.rs`.

use core::alloc::{GlobalAlloc, Layout};
use core::ptr;
use std::alloc::System;

use core::ptr::NonNull;

use crate::base::class::NO_CLASS;
use crate::base::config::MAX_SMALL_SIZE;
use crate::base::no_unwind::NoUnwind;
use crate::base::sync::Ordering;
use crate::front::probe::{is_probe, may_be_probe, observe_probe};
use crate::heap::free::free;
use crate::heap::runs::count_large_block;
use crate::heap::runs::{alloc_in_scope, bump_scoped, class_of_layout};
use crate::heap::sweep;
use crate::heap::this_thread::{self, ScopeState};
use crate::memory::large;
use crate::memory::region::{locate, Located};

/// A `#[global_allocator]` that serves the allocations of scopes from its
/// spans, frees slots back into their spans, and passes everything
/// else to the allocator it wraps, untouched.
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
/// `BatchAlloc::new(mimalloc::MiMalloc)`. Outside scopes, `alloc` costs
/// one thread-local read and a test more than the inner allocator, and
/// `dealloc` and `realloc` recognise a slot by a range check before they
/// read any metadata, so ordinary pointers cost a load, an addition and a
/// comparison more (`realloc` also tests the thread-local). While a scope
/// is open on a thread, that thread's allocations the runtime
/// has a size class for come from its spans instead; everything else still
/// goes to the inner allocator.
///
/// # Wrapping `BatchAlloc` itself
///
/// A global allocator that wraps a `BatchAlloc` (to count allocations, say)
/// must forward all four methods to it, `dealloc` and `realloc` included:
/// batches and scopes hand out slots only once `BatchAlloc` has seen a probe
/// allocation go through `alloc_zeroed`, and from then on every slot must
/// come back through its `dealloc`. A wrapper that forwarded `alloc_zeroed`
/// but freed elsewhere would pass slots to an allocator that did not
/// make them.
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

// SAFETY: every method forwards to the inner allocator except for slots.
// A slot is handed out to one owner at a time: by a batch (`Batch::alloc`),
// by a scope's run (while a scope is open on the thread, `alloc`,
// `alloc_zeroed` and a `realloc` that moves a block into a slot), and goes
// back into its span through `dealloc`, or through a `realloc` that moves
// it out. The inner allocator's blocks never lie in the region, which this
// runtime mapped, so `dealloc` and `realloc` tell the two apart by address. A slot fits its
// layout: its class's size is at least the layout's size and a multiple of
// its alignment (`class_for`; no class serves an alignment past a page),
// and slots start at multiples of the class size from the start of a
// frame, which is aligned to the frame size, a multiple of the page; so a
// slot keeps any alignment its class was chosen for. `realloc` keeps a slot
// when the new size fits in it (at the same alignment) and otherwise moves
// the contents to a slot of a larger class (in a scope) or to a block
// of the inner allocator. No method unwinds (see `NoUnwind`).
unsafe impl<A: GlobalAlloc> GlobalAlloc for BatchAlloc<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let proof = NoUnwind;
        let state = this_thread::scope_state();
        let p = if state.is_open() {
            // SAFETY: the caller's contract, forwarded.
            unsafe { Self::alloc_scoped(layout.size(), layout.align(), state, self) }
        } else {
            // SAFETY: the caller's contract, forwarded.
            unsafe { self.inner.alloc(layout) }
        };
        proof.holds();
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let proof = NoUnwind;
        let p = if may_be_probe(layout) {
            // SAFETY: the caller's contract, forwarded.
            unsafe { self.alloc_zeroed_probed(layout) }
        } else {
            // SAFETY: the caller's contract, forwarded.
            unsafe { self.alloc_zeroed_as_usual(layout) }
        };
        proof.holds();
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let proof = NoUnwind;
        match locate(ptr) {
            // SAFETY: a pointer inside the region is a slot this allocator
            // handed out (a batch's box, or any allocation a scope
            // served), since the inner allocator's blocks
            // lie outside it, and `layout` is the one it was handed out
            // for; the caller gives it up.
            Some(at) => unsafe { free(ptr, at, at.span(), layout.size()) },
            // SAFETY: the caller's contract, forwarded.
            None => unsafe { self.inner.dealloc(ptr, layout) },
        }
        proof.holds();
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let proof = NoUnwind;
        let p = match locate(ptr) {
            // SAFETY: the caller's contract, forwarded.
            Some(at) => unsafe {
                Self::realloc_slot(ptr, layout.size(), layout.align(), new_size, at, self)
            },
            None => {
                let state = this_thread::scope_state();
                match state.is_open() {
                    // SAFETY: the caller's contract, forwarded; the scope is
                    // this thread's, and open.
                    true => unsafe {
                        Self::realloc_into_scope(
                            ptr,
                            layout.size(),
                            layout.align(),
                            new_size,
                            state,
                            self,
                        )
                    },
                    // SAFETY: the caller's contract, forwarded.
                    false => unsafe { self.inner.realloc(ptr, layout, new_size) },
                }
            }
        };
        proof.holds();
        p
    }
}

impl<A: GlobalAlloc> BatchAlloc<A> {
    /// `alloc_zeroed` of a layout that is not the probe's.
    ///
    /// # Safety
    /// - As for [`GlobalAlloc::alloc_zeroed`].
    #[inline(always)]
    unsafe fn alloc_zeroed_as_usual(&self, layout: Layout) -> *mut u8 {
        let state = this_thread::scope_state();
        if state.is_open() {
            // SAFETY: the caller's contract, forwarded.
            unsafe { Self::alloc_zeroed_scoped(layout.size(), layout.align(), state, self) }
        } else {
            // SAFETY: the caller's contract, forwarded.
            unsafe { self.inner.alloc_zeroed(layout) }
        }
    }

    /// `alloc_zeroed` of a layout that may be the probe's: noted if it
    /// is, then allocated as usual. Out of line, so that `alloc_zeroed`
    /// keeps no frame for the probe's call and passes every other layout
    /// on with a jump.
    ///
    /// # Safety
    /// - As for [`GlobalAlloc::alloc_zeroed`].
    #[cold]
    #[inline(never)]
    unsafe fn alloc_zeroed_probed(&self, layout: Layout) -> *mut u8 {
        if is_probe(layout) {
            observe_probe();
        }
        // SAFETY: the caller's contract, forwarded.
        unsafe { self.alloc_zeroed_as_usual(layout) }
    }

    /// An allocation while a scope is open: a bump of the run of
    /// its class, else the slow path. Out of line, so that `alloc` stays a
    /// test and a call: inlined with the bump, it made callers such as
    /// `RawVec`'s allocation too large to inline themselves, which cost
    /// instructions in code as written, where no scope is ever open, and
    /// in scoped allocations too (docs/runtime.md has the figures). Its
    /// parameters come in `__rust_alloc`'s order (size, then alignment), so
    /// that the call moves no register.
    ///
    /// # Safety
    /// - As for [`GlobalAlloc::alloc`], with `size` and `align` a layout's,
    ///   and `state` this thread's open scope.
    #[inline(never)]
    unsafe fn alloc_scoped(size: usize, align: usize, state: ScopeState, this: &Self) -> *mut u8 {
        // SAFETY: the parts of a `Layout` (the caller's contract).
        let layout = unsafe { Layout::from_size_align_unchecked(size, align) };
        match bump_scoped(state, layout) {
            Some(slot) => slot.as_ptr(),
            // SAFETY: the caller's contract, forwarded.
            None => unsafe { this.alloc_scoped_slow(state, layout) },
        }
    }

    /// A scope's allocation that the bump did not serve: a slot
    /// from a refilled run or of a rare layout's class, else the inner
    /// allocator's.
    ///
    /// # Safety
    /// - As for [`GlobalAlloc::alloc`], with `state` this thread's open
    ///   scope.
    #[cold]
    #[inline(never)]
    unsafe fn alloc_scoped_slow(&self, state: ScopeState, layout: Layout) -> *mut u8 {
        match scope_block(state, layout, false) {
            Some(block) => block.as_ptr(),
            // SAFETY: the caller's contract, forwarded.
            None => unsafe { self.inner.alloc(layout) },
        }
    }

    /// `alloc_zeroed` in a scope. Its parameters come in
    /// `__rust_alloc_zeroed`'s order, as [`BatchAlloc::alloc_scoped`]'s do.
    ///
    /// # Safety
    /// - As for [`BatchAlloc::alloc_scoped`].
    #[inline(never)]
    unsafe fn alloc_zeroed_scoped(
        size: usize,
        align: usize,
        state: ScopeState,
        this: &Self,
    ) -> *mut u8 {
        // SAFETY: the parts of a `Layout` (the caller's contract).
        let layout = unsafe { Layout::from_size_align_unchecked(size, align) };
        let block = match bump_scoped(state, layout) {
            Some(slot) => Some(slot),
            None => scope_block(state, layout, true),
        };
        match block {
            Some(block) => {
                // SAFETY: a slot or block of at least `layout.size()` bytes,
                // this caller's now. (A recycled slot holds old data; a large
                // block comes zeroed from `large::alloc`, which writes zeros
                // over frames not known to read as zero, and these bytes are
                // few next to it.)
                unsafe {
                    block
                        .as_ptr()
                        .write_bytes(0, layout.size().min(MAX_SMALL_SIZE))
                };
                block.as_ptr()
            }
            // SAFETY: the caller's contract, forwarded.
            None => unsafe { this.inner.alloc_zeroed(layout) },
        }
    }

    /// A slot keeps any size up to its class, and a large block grows or
    /// shrinks in place where it can (see `large.rs`); past that the contents
    /// move to a larger slot or block if a scope is open and can
    /// serve the new size, otherwise to the inner allocator, and the slot is
    /// freed. Its first parameters come in `__rust_realloc`'s order (as
    /// [`BatchAlloc::realloc_into_scope`]'s), so that its call moves few
    /// registers, and the path past it none.
    ///
    /// # Safety
    /// - As for [`GlobalAlloc::realloc`], with `size` and `align` the old
    ///   layout's, and `at` locating `ptr`.
    #[cold]
    #[inline(never)]
    unsafe fn realloc_slot(
        ptr: *mut u8,
        size: usize,
        align: usize,
        new_size: usize,
        at: Located,
        this: &Self,
    ) -> *mut u8 {
        // SAFETY: the parts of a `Layout` (the caller's contract).
        let layout = unsafe { Layout::from_size_align_unchecked(size, align) };
        // The caller's pointer covers only the old size; one derived from
        // the region covers the whole slot or block, so the grown bytes may
        // be written through it.
        if large::is_large(at) {
            // SAFETY: the caller's contract, forwarded: `at` is the block's.
            if let Some(kept) = unsafe { large::resize_in_place(at, new_size) } {
                return kept;
            }
        } else if new_size <= at.span().slot_size.load(Ordering::Relaxed) as usize {
            return at.ptr();
        }
        // SAFETY: the caller guarantees `new_size`, rounded up to the
        // alignment, does not overflow `isize`.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        let state = this_thread::scope_state();
        let scoped = match state.is_open() {
            true => scope_block(state, new_layout, false),
            false => None,
        };
        let new = match scoped {
            Some(slot) => slot.as_ptr(),
            // SAFETY: `new_size` is non-zero (it exceeds the slot size).
            None => unsafe { this.inner.alloc(new_layout) },
        };
        if new.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: both blocks are valid for the smaller of the two sizes,
        // and distinct.
        unsafe { ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size)) };
        // SAFETY: the slot is given up by the caller.
        unsafe { free(ptr, at, at.span(), layout.size()) };
        new
    }

    /// `realloc` of one of the inner allocator's blocks while a scope is
    /// open: the contents move into a slot or a large block when
    /// the scope can serve the new size (a vector made before the scope and
    /// grown in it), otherwise the inner allocator reallocates as usual.
    ///
    /// # Safety
    /// - As for [`GlobalAlloc::realloc`], with `size` and `align` the old
    ///   layout's, `ptr` the inner allocator's, and `state` this thread's
    ///   open scope.
    #[cold]
    #[inline(never)]
    unsafe fn realloc_into_scope(
        ptr: *mut u8,
        size: usize,
        align: usize,
        new_size: usize,
        state: ScopeState,
        this: &Self,
    ) -> *mut u8 {
        // SAFETY: the parts of a `Layout` (the caller's contract).
        let layout = unsafe { Layout::from_size_align_unchecked(size, align) };
        // SAFETY: the caller guarantees `new_size`, rounded up to the
        // alignment, does not overflow `isize`.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        let Some(slot) = scope_block(state, new_layout, false) else {
            // SAFETY: the caller's contract, forwarded.
            return unsafe { this.inner.realloc(ptr, layout, new_size) };
        };
        // SAFETY: the old block is valid for `layout.size()` bytes and the
        // slot for `new_size`; they are distinct (one is in the region).
        unsafe { ptr::copy_nonoverlapping(ptr, slot.as_ptr(), layout.size().min(new_size)) };
        // SAFETY: the inner allocator made the block with `layout`, and the
        // caller gives it up.
        unsafe { this.inner.dealloc(ptr, layout) };
        slot.as_ptr()
    }
}

/// A slot of the class that serves `layout` or, past the classes, a large
/// block (zeroed if `zeroed`), from the open scope `state`: `None`
/// for what neither serves, or with no memory.
#[cold]
#[inline(never)]
fn scope_block(state: ScopeState, layout: Layout, zeroed: bool) -> Option<NonNull<u8>> {
    let class = class_of_layout(layout);
    if class != NO_CLASS {
        return alloc_in_scope(state, class);
    }
    if !large::serves(layout.size(), layout.align()) {
        return None;
    }
    // A large block is one of the events the decay of empty memory and
    // sweeps wait for (`pool.rs`, `sweep.rs`): a program that dropped a
    // structure of small objects and now makes only large blocks gives no
    // frame back to run them.
    sweep::at_event();
    let block = large::alloc(layout.size(), zeroed)?;
    count_large_block(state);
    Some(block)
}
