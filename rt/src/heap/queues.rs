//! A heap's spans: the class queues that hold them, where a span goes as
//! its slots come back (freed on its owner thread, or taken back from the
//! mailbox: the remote free itself is `remote.rs`'s), and the unused slots
//! of batches and runs given back, until a span is empty and goes back to
//! the pool. Everything here is given the heap it works on; which heap is
//! this thread's is `this_thread.rs`'s business.

use crate::base::fatal::check;
use crate::base::frame::Frame;
use crate::base::sync::Ordering;
use crate::heap::remote;
use crate::memory::cursor::Reservation;
use crate::memory::link::{self, tail_of, write_link};
use crate::memory::pool;
use crate::memory::record::count_given_back;
use crate::memory::region::{self, frame_base};
use crate::memory::types::{
    HeapLocal, HeapRecord, OwnedHeap, OwnerWord, Span, Tally, QUEUE_AVAIL, QUEUE_FULL, QUEUE_NONE,
};

// ---- class queues ----

fn queue_head(local: &mut HeapLocal, class: u8, queue: u8) -> &mut u32 {
    let queues = local.queues_of(class);
    match queue {
        QUEUE_AVAIL => &mut queues.avail,
        _ => &mut queues.full,
    }
}

/// Puts a span at the front of one of its class's queues.
///
/// # Safety
/// - This thread owns the span, which is on no queue, and holds no
///   reference from `Span::local` for it or its new neighbour.
pub(crate) unsafe fn push_front(local: &mut HeapLocal, frame: Frame, queue: u8) {
    let span = region::span(frame);
    if queue == QUEUE_AVAIL {
        // SAFETY: the caller holds no reference to this span's state.
        let class = unsafe { span.local().class };
        if let Some(head) = Frame::from_link(local.queues_of(class).avail) {
            let old = region::span(head);
            if head != frame && old.used() == 0 {
                // The old head would stop being the head while empty.
                // SAFETY: the old head is another span of this heap.
                unsafe { release_if_idle(local, head, old) };
            }
        }
    }
    // SAFETY: the caller owns the span and holds no reference to its state.
    let sl = unsafe { span.local() };
    let head = queue_head(local, sl.class, queue);
    sl.queue = queue;
    span.set_owner(OwnerWord::new(span.owner().heap(), queue == QUEUE_FULL));
    sl.prev = 0;
    sl.next = *head;
    if let Some(next) = Frame::from_link(*head) {
        // SAFETY: the neighbour is another span of this heap.
        unsafe { region::span(next).local().prev = frame.link() };
    }
    *head = frame.link();
}

/// Takes a span off whichever queue holds it.
///
/// # Safety
/// - This thread owns the span and holds no reference from `Span::local`
///   for it or its neighbours.
pub(crate) unsafe fn unlink(local: &mut HeapLocal, frame: Frame) {
    // SAFETY: the caller owns the span and holds no reference to its state.
    let sl = unsafe { region::span(frame).local() };
    let (prev, next, queue) = (sl.prev, sl.next, sl.queue);
    sl.queue = QUEUE_NONE;
    sl.prev = 0;
    sl.next = 0;
    if let Some(prev_frame) = Frame::from_link(prev) {
        // SAFETY: the neighbour is another span of this heap.
        unsafe { region::span(prev_frame).local().next = next };
    } else if queue != QUEUE_NONE {
        *queue_head(local, sl.class, queue) = next;
    }
    if let Some(next_frame) = Frame::from_link(next) {
        // SAFETY: the neighbour is another span of this heap.
        unsafe { region::span(next_frame).local().prev = prev };
    }
}

/// Moves a span between its class's queues.
///
/// # Safety
/// - As for [`unlink`].
pub(crate) unsafe fn move_to(local: &mut HeapLocal, frame: Frame, queue: u8) {
    // SAFETY: forwarded contract.
    unsafe {
        unlink(local, frame);
        push_front(local, frame, queue);
    }
}

// ---- slots coming back to the owner ----

/// Puts every span that remote frees put in the mailbox where the slots
/// taken back from it leave it: off the full queue, or, emptied, started
/// over or back to the pool. Owner only.
#[inline]
pub(crate) fn drain_mailbox(heap: OwnedHeap, local: &mut HeapLocal) {
    if !heap.mailbox.is_empty() {
        drain_mailbox_slow(heap, local);
    }
}

#[cold]
fn drain_mailbox_slow(heap: OwnedHeap, local: &mut HeapLocal) {
    for (frame, span, taken) in remote::take_mailbox(heap) {
        // SAFETY: spans in the mailbox belong to this heap; no other local
        // reference is live.
        if taken != 0 && unsafe { span.local().queue } == QUEUE_FULL {
            // SAFETY: as above.
            unsafe { move_to(local, frame, QUEUE_AVAIL) };
        }
        if span.used() == 0 {
            span_emptied(local, frame, span);
        }
    }
}

/// A span on this heap has no slot out: the head of its avail queue starts
/// over with one fresh stretch, any other goes back to the pool. Owner only.
pub(crate) fn span_emptied(local: &mut HeapLocal, frame: Frame, span: &Span) {
    // SAFETY: the span belongs to this heap; no other local reference is live.
    let sl = unsafe { span.local() };
    sl.restart();
    let class = sl.class;
    if sl.queue == QUEUE_FULL {
        // SAFETY: as above; `sl` is not used past this point.
        unsafe { move_to(local, frame, QUEUE_AVAIL) };
    } else if local.queues_of(class).avail != frame.link() {
        // SAFETY: as above.
        unsafe { release_if_idle(local, frame, span) };
    }
}

/// Releases every span of this heap that has no slot out, the heads of
/// the avail queues included (which [`span_emptied`] keeps for the next
/// refill): for `trim`. Owner only, with the mailbox drained.
pub(crate) fn release_empty_spans(local: &mut HeapLocal) {
    for class in 0..local.queues.len() {
        let mut next = local.queues[class].avail;
        while let Some(frame) = Frame::from_link(next) {
            let span = region::span(frame);
            // SAFETY: the span belongs to this heap; no local reference is
            // live.
            next = unsafe { span.local().next };
            // Slots other threads freed count: a span they emptied goes too.
            if remote::has_pending(span) {
                remote::collect(frame, span);
            }
            if span.used() == 0 {
                // SAFETY: owned, empty; `next` was read before the unlink.
                unsafe { release_if_idle(local, frame, span) };
            }
        }
    }
}

/// Releases an empty span unless it is in the mailbox, which must be drained
/// first; the drain looks at it again.
///
/// Out of line: inlined, it made `push_front`, which every queue move
/// takes and which calls it only for an empty old head, save more
/// registers on every call (measured with callgrind on the free paths
/// that benches/paths counts).
///
/// # Safety
/// - This thread owns the span, which is empty, and holds no reference
///   from `Span::local` for it or its neighbours.
#[inline(never)]
unsafe fn release_if_idle(local: &mut HeapLocal, frame: Frame, span: &Span) {
    check!(
        span.used() == 0 && {
            // SAFETY: the caller owns the span and holds no reference to its state;
            // its free list's links are visible to the owner.
            unsafe { span.is_valid(span.local(), frame_base(frame)) }
        },
        "span counts at a release"
    );
    if !remote::in_mailbox(span) {
        // SAFETY: forwarded contract; no freer notifies a span not in the
        // mailbox.
        unsafe {
            unlink(local, frame);
            pool::release_frame(frame);
        }
    }
}

/// After a local free or give-back: the span may have left the full queue or
/// become empty. Owner only.
#[cold]
#[inline(never)]
pub(crate) fn after_local_free(heap: OwnedHeap, frame: Frame, span: &Span) {
    // SAFETY: this thread owns the heap (the span's owner is its record) and
    // the caller holds no reference to its state.
    let local = unsafe { heap.local() };
    // SAFETY: as above, for the span.
    if unsafe { span.local().queue } == QUEUE_FULL {
        // SAFETY: as above.
        unsafe { move_to(local, frame, QUEUE_AVAIL) };
    }
    if span.used() == 0 {
        span_emptied(local, frame, span);
    }
}

// ---- slots given back ----

/// Gives back every run's unused slots, leaving the runs empty. Owner only,
/// with no scope open (a run is only read while one is).
pub(crate) fn give_back_runs(heap: OwnedHeap) {
    for run in &heap.runs {
        let base = frame_base(run.cursor.frame());
        if let Some(unused) = run.cursor.take_unused(base, run.size as usize) {
            // SAFETY: the run's slots were reserved by this heap, linked as
            // reserved, and never handed out.
            unsafe { give_back(heap.as_ptr(), unused, Tally::Scope) };
        }
    }
}

/// Gives back the slots of a reservation that were never handed out, on
/// whichever thread the batch ends; `heap` is that thread's heap, or
/// `NO_HEAP`, and `tally` says whose slots they were.
///
/// # Safety
/// - `unused` describes slots of a reservation this caller holds, still
///   linked as the reservation handed them over, and never handed out.
pub(crate) unsafe fn give_back(heap: *mut HeapRecord, unused: Reservation, tally: Tally) {
    let frame = unused.frame;
    let span = region::span(frame);
    let size = span.slot_size.load(Ordering::Relaxed);
    count_given_back(heap, unused.len, tally);
    if span.owner().heap() == heap {
        // SAFETY: the span's owner is `heap`, this thread's heap (the
        // caller's contract; never the no-heap marker, which owns nothing).
        let heap = unsafe { OwnedHeap::new(&*heap) };
        // SAFETY: forwarded contract; this thread owns the span.
        unsafe { give_back_local(frame, span, unused, size) };
        let Some(used) = span.used().checked_sub(unused.len) else {
            crate::base::fatal::fatal("batch-alloc: more slots given back than were reserved");
        };
        span.set_used(used);
        // SAFETY: as above, for the span's state.
        let sl = unsafe { span.local() };
        check!(
            // SAFETY: `sl` is the owner's, and this thread wrote the links.
            unsafe { span.is_valid(sl, frame_base(frame)) },
            "span counts after a give-back"
        );
        if sl.queue == QUEUE_FULL || span.used() == 0 {
            after_local_free(heap, frame, span);
        }
    } else {
        // SAFETY: forwarded contract.
        unsafe { give_back_remote(frame, span, unused, size) };
    }
}

/// # Safety
/// - As for [`give_back`], and this thread owns the span.
unsafe fn give_back_local(frame: Frame, span: &Span, unused: Reservation, size: u32) {
    let base = frame_base(frame);
    let key = link::key(span);
    // SAFETY: this thread owns the span; no other local reference is live.
    let sl = unsafe { span.local() };
    if unused.list_len > 0 {
        // SAFETY: the list's slots are linked as reserved.
        let tail = unsafe { tail_of(base, unused.list_head, unused.list_len, key) };
        // SAFETY: the tail is an unused slot of the reservation.
        unsafe { write_link(base.wrapping_add(tail as usize), sl.free_head, key) };
        sl.free_head = unused.list_head;
    }
    if unused.bump_end > unused.bump_start {
        if sl.bump == unused.bump_end {
            // Nothing was carved after the stretch: roll the bump back.
            sl.bump = unused.bump_start;
            sl.fresh += (unused.bump_end - unused.bump_start) / size;
        } else {
            let mut offset = unused.bump_start;
            while offset < unused.bump_end {
                // SAFETY: an unused slot of the reservation.
                unsafe { write_link(base.wrapping_add(offset as usize), sl.free_head, key) };
                sl.free_head = offset;
                offset += size;
            }
        }
    }
}

/// Links the unused slots into one chain (fresh stretch first, then the list)
/// and pushes it onto the span's remote list in one operation.
///
/// # Safety
/// - As for [`give_back`].
unsafe fn give_back_remote(frame: Frame, span: &Span, unused: Reservation, size: u32) {
    let base = frame_base(frame);
    let key = link::key(span);
    let mut last = None;
    let mut offset = unused.bump_start;
    while offset < unused.bump_end {
        if let Some(previous) = last {
            // SAFETY: an unused slot of the reservation.
            unsafe { write_link(base.wrapping_add(previous as usize), offset, key) };
        }
        last = Some(offset);
        offset += size;
    }
    if unused.list_len > 0 {
        if let Some(previous) = last {
            // SAFETY: as above.
            unsafe { write_link(base.wrapping_add(previous as usize), unused.list_head, key) };
        }
        // SAFETY: the list's slots are linked as reserved.
        last = Some(unsafe { tail_of(base, unused.list_head, unused.list_len, key) });
    }
    let first = if unused.bump_end > unused.bump_start {
        unused.bump_start
    } else {
        unused.list_head
    };
    let Some(last) = last else { return };
    let last = base.wrapping_add(last as usize);
    // SAFETY: the chain's slots are the caller's to give up, and `last`
    // derives from the frame base.
    let link_last = |next| unsafe { write_link(last, next, key) };
    // SAFETY: forwarded contract.
    unsafe { remote::push_chain(frame, span, first, unused.len, link_last) };
}
