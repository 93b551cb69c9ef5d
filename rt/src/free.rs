//! Freeing one slot: `dealloc` for a pointer inside the region.
//!
//! On the owner thread a free is a push onto the span's own free list: no
//! atomic instruction. From any other thread it is one compare-and-swap onto
//! the span's remote list; the owner takes that list back in one exchange.
//!
//! The free-list link is written through the pointer the box gave up, not
//! one derived from the region: `drop(b)` keeps `b`'s borrow protected for
//! the whole call, and a write through another pointer would invalidate it.

use crate::fatal::fatal;
use crate::heap::{self, HeapRecord};
use crate::region::Located;
use crate::remote::{self, Pushed};
use crate::span::{owner_heap, write_link, Span};
use crate::sync::Ordering;

/// Frees the slot at `ptr`, found at `at` in the region, on whichever
/// thread this is.
///
/// # Safety
/// - `ptr` is the start of a slot handed out in a `Box` and not freed since,
///   and the caller gives it up.
#[inline(always)]
pub(crate) unsafe fn free(ptr: *mut u8, at: Located) {
    let span = at.span();
    let heap = heap::current();
    if span.owner.load(Ordering::Relaxed) == heap {
        // SAFETY: the span's owner is this thread's heap (a span's owner is
        // never the no-heap marker), and it is not on the full queue (the
        // owner word would be tagged); the slot contract is forwarded.
        if unsafe { free_local(span, ptr, at) } == 0 {
            // SAFETY: records are never freed, and this one is this thread's.
            heap::after_local_free(unsafe { &*heap }, at.frame(), span);
        }
    } else {
        // SAFETY: forwarded contract.
        unsafe { free_slow(heap, span, ptr, at) }
    }
}

/// Pushes the slot onto the span's own free list and returns how many slots
/// are still out.
///
/// # Safety
/// - As for [`free`], and this thread owns `span`.
#[inline(always)]
unsafe fn free_local(span: &Span, ptr: *mut u8, at: Located) -> u32 {
    // SAFETY: this thread owns the span, and the allocator path holds no
    // other reference to its state.
    let sl = unsafe { span.local() };
    let offset = at.offset_in_frame();
    debug_check_slot(span, offset);
    // SAFETY: the slot is given up by its box; `ptr` covers it.
    unsafe { write_link(ptr, sl.free_head) };
    sl.free_head = offset;
    let used = span.used.load(Ordering::Relaxed) - 1;
    span.used.store(used, Ordering::Relaxed);
    used
}

/// A free into a full span of this thread, or a free from another thread.
///
/// # Safety
/// - As for [`free`].
#[inline(never)]
unsafe fn free_slow(heap: *mut HeapRecord, span: &Span, ptr: *mut u8, at: Located) {
    let owner = span.owner.load(Ordering::Relaxed);
    if owner_heap(owner) == heap {
        // SAFETY: forwarded contract; the owner word names this heap.
        unsafe { free_into_full(heap, span, ptr, at) };
        return;
    }
    debug_check_slot(span, at.offset_in_frame());
    // SAFETY: the slot is out and given up by its box (the caller's
    // contract); `ptr` covers it.
    if owner.is_null() || !unsafe { remote::push_plain(span, at.offset_in_frame(), ptr) } {
        // SAFETY: forwarded contract.
        unsafe { free_remote_rare(span, ptr, at) };
    }
}

/// A free into a span of this thread's full queue: back to the avail queue.
///
/// # Safety
/// - As for [`free`], and this thread owns `span`.
#[cold]
unsafe fn free_into_full(heap: *mut HeapRecord, span: &Span, ptr: *mut u8, at: Located) {
    // SAFETY: forwarded contract.
    unsafe { free_local(span, ptr, at) };
    // SAFETY: records are never freed, and this one is this thread's.
    heap::after_local_free(unsafe { &*heap }, at.frame(), span);
}

/// A remote free into a span that is armed, abandoned, or (a double free)
/// not assigned at all.
///
/// # Safety
/// - As for [`free`].
#[cold]
unsafe fn free_remote_rare(span: &Span, ptr: *mut u8, at: Located) {
    if span.slot_size.load(Ordering::Relaxed) == 0 {
        fatal("batch-alloc: free of a pointer into a span with no slots out (double free?)");
    }
    // SAFETY: forwarded contract; `ptr` covers the slot.
    let pushed = unsafe { remote::push_chain(span, at.offset_in_frame(), ptr, 1) };
    after_remote_push(pushed, at.frame(), span);
}

/// Finishes what a remote push asked for: telling an owner whose span was
/// full, or reclaiming an abandoned span whose last slot this was.
#[inline]
pub(crate) fn after_remote_push(pushed: Pushed, frame: u32, span: &Span) {
    match pushed {
        Pushed::Done => {}
        Pushed::Notify => notify_owner(frame, span),
        Pushed::Reclaim => {
            // SAFETY: the span is abandoned and every slot is free: nobody
            // else can reach it, and abandoned spans are never armed.
            unsafe { heap::release(frame, span) }
        }
    }
}

/// Puts the span in its owner's mailbox. The owner cannot exit meanwhile:
/// retiring a span waits for NOTIFYING, which this thread set, to clear.
#[cold]
fn notify_owner(frame: u32, span: &Span) {
    let owner = owner_heap(span.owner.load(Ordering::Acquire));
    // SAFETY: the owner is alive while NOTIFYING is set (see above), and
    // records are never freed.
    let mailbox = unsafe { &(*owner).mailbox };
    let mut top = mailbox.load(Ordering::Relaxed);
    loop {
        span.mail_next.store(top, Ordering::Relaxed);
        // Release: the link is visible to the owner's acquiring swap.
        match mailbox.compare_exchange_weak(top, frame + 1, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => break,
            Err(seen) => top = seen,
        }
    }
    remote::notified(span);
}

/// In debug builds, aborts on a pointer that is not the start of a slot.
#[inline(always)]
fn debug_check_slot(span: &Span, offset: u32) {
    if cfg!(debug_assertions) {
        let size = span.slot_size.load(Ordering::Relaxed);
        if size == 0 || offset % size != 0 {
            fatal("batch-alloc: freed pointer is not the start of a slot");
        }
    }
}
