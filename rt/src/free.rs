//! Freeing one slot: `dealloc` for a pointer inside the region.
//!
//! On the owner thread a free is a push onto the span's own free list: no
//! atomic instruction. From any other thread it is one compare-and-swap onto
//! the span's remote list; the owner takes that list back in one exchange.

use crate::fatal::fatal;
use crate::heap::{self, HeapRecord};
use crate::region::{frame_base, SlotRef};
use crate::remote::{self, Pushed};
use crate::span::{write_link, Span, QUEUE_FULL};
use crate::sync::Ordering;

/// Frees the slot `slot` names, on whichever thread this is.
///
/// # Safety
/// - `slot` is the start of a slot handed out in a `Box` and not freed since.
#[inline(always)]
pub(crate) unsafe fn free(slot: SlotRef) {
    let heap = heap::current();
    if slot.span.owner.load(Ordering::Relaxed) == heap && !heap.is_null() {
        // SAFETY: the span's owner is this thread's heap, and records are
        // never freed; the slot contract is forwarded.
        unsafe { free_local(&*heap, slot) }
    } else {
        // SAFETY: forwarded contract.
        unsafe { free_remote(slot) }
    }
}

/// # Safety
/// - As for [`free`], and `heap` is this thread's heap and owns the span.
#[inline(always)]
unsafe fn free_local(heap: &HeapRecord, slot: SlotRef) {
    let span = slot.span;
    // SAFETY: this thread owns the span, and the allocator path holds no
    // other reference to its state.
    let sl = unsafe { span.local() };
    debug_check_slot(span, slot.offset);
    let p = frame_base(slot.frame).wrapping_add(slot.offset as usize);
    // SAFETY: the slot was handed out and is now given up by its box; the
    // pointer derives from the frame base, so it covers the slot.
    unsafe { write_link(p, sl.free_head) };
    sl.free_head = slot.offset;
    sl.free_count += 1;
    let used = span.used.load(Ordering::Relaxed) - 1;
    span.used.store(used, Ordering::Relaxed);
    if used == 0 || sl.queue == QUEUE_FULL {
        heap::after_local_free(heap, slot.frame, span);
    }
}

/// # Safety
/// - As for [`free`].
#[inline(never)]
unsafe fn free_remote(slot: SlotRef) {
    let span = slot.span;
    if span.slot_size.load(Ordering::Relaxed) == 0 {
        fatal("batch-alloc: free of a pointer into a span with no slots out (double free?)");
    }
    debug_check_slot(span, slot.offset);
    let p = frame_base(slot.frame).wrapping_add(slot.offset as usize);
    // SAFETY: the slot is out and given up by its box (the caller's
    // contract); `p` derives from the frame base.
    let pushed = unsafe { remote::push_chain(span, slot.offset, p, 1) };
    after_remote_push(pushed, slot.frame, span);
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
    let owner = span.owner.load(Ordering::Acquire);
    // SAFETY: the owner is alive while NOTIFYING is set (see above), and
    // records are never freed.
    let mailbox = unsafe { &(*owner).mailbox };
    let mut top = mailbox.load(Ordering::Relaxed);
    loop {
        span.mail_next.store(top, Ordering::Relaxed);
        // Release: the link is visible to the owner's acquiring swap.
        match mailbox.compare_exchange_weak(top, frame + 1, Ordering::Release, Ordering::Relaxed)
        {
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

