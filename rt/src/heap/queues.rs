//! A heap's spans: the class queues that hold them, where a span goes as
//! its slots come back (freed on its owner thread, or taken back from the
//! mailbox: the remote free itself is `remote.rs`'s), and the unused slots
//! of batches and runs given back, until a span is empty and goes back to
//! the pool. Everything here is given the heap it works on; which heap is
//! this thread's is `this_thread.rs`'s business. The avail queues and
//! their spans are the owner's alone; the full queues, their spans and
//! the mailbox's drain are under the heap's lock (`FullQueues`), which
//! a sweep on another thread may hold (`sweep.rs`).

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
    FullQueues, HeapLocal, HeapRecord, OwnedHeap, OwnerWord, Span, Tally, QUEUE_AVAIL, QUEUE_FULL,
    QUEUE_NONE,
};

// ---- class queues ----

/// Links a span, on no queue, in front of the queue whose head is `head`.
///
/// # Safety
/// - The caller may reach the span's state and its new neighbour's (see
///   `Span::local`), and holds no reference from `Span::local` for them.
unsafe fn link_in_front(head: &mut u32, frame: Frame, queue: u8) {
    let span = region::span(frame);
    // SAFETY: the caller's contract.
    let sl = unsafe { span.local() };
    sl.queue = queue;
    span.set_owner(OwnerWord::new(span.owner().heap(), queue == QUEUE_FULL));
    sl.prev = 0;
    sl.next = *head;
    if let Some(next) = Frame::from_link(*head) {
        // SAFETY: the neighbour is on the same queue (the caller's contract).
        unsafe { region::span(next).local().prev = frame.link() };
    }
    *head = frame.link();
}

/// Takes a span off the queue whose head is `head` (none: the span is on
/// no queue).
///
/// # Safety
/// - As for [`link_in_front`], for the span and its neighbours.
unsafe fn unlink_from(head: Option<&mut u32>, frame: Frame) {
    // SAFETY: the caller's contract.
    let sl = unsafe { region::span(frame).local() };
    let (prev, next) = (sl.prev, sl.next);
    sl.queue = QUEUE_NONE;
    sl.prev = 0;
    sl.next = 0;
    if let Some(prev_frame) = Frame::from_link(prev) {
        // SAFETY: the neighbour is on the same queue (the caller's contract).
        unsafe { region::span(prev_frame).local().next = next };
    } else if let Some(head) = head {
        *head = next;
    }
    if let Some(next_frame) = Frame::from_link(next) {
        // SAFETY: as above.
        unsafe { region::span(next_frame).local().prev = prev };
    }
}

/// Puts a span at the front of its class's avail queue. An empty span that
/// headed it goes back to the pool (only the head may be empty).
///
/// # Safety
/// - This thread owns the span, which is on no queue, and holds no
///   reference from `Span::local` for it or the queue's spans.
pub(crate) unsafe fn push_front(local: &mut HeapLocal, frame: Frame) {
    let span = region::span(frame);
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
    // SAFETY: forwarded contract.
    unsafe { link_in_front(&mut local.queues_of(class).avail, frame, QUEUE_AVAIL) };
}

/// Takes a span off its class's avail queue (or off no queue).
///
/// # Safety
/// - This thread owns the span, which is not on the full queue, and holds
///   no reference from `Span::local` for it or its neighbours.
pub(crate) unsafe fn unlink(local: &mut HeapLocal, frame: Frame) {
    // SAFETY: the caller's contract.
    let (class, queue) = unsafe {
        let sl = region::span(frame).local();
        (sl.class, sl.queue)
    };
    check!(queue != QUEUE_FULL, "a full span unlinked as an avail one");
    let head = (queue == QUEUE_AVAIL).then(|| &mut local.queues_of(class).avail);
    // SAFETY: forwarded contract.
    unsafe { unlink_from(head, frame) };
}

/// Moves a span of the heap whose full queues `full` holds off its class's
/// avail queue onto the full one: it has nothing left to reserve.
///
/// # Safety
/// - As for [`unlink`].
pub(crate) unsafe fn park(local: &mut HeapLocal, full: &mut FullQueues<'_>, frame: Frame) {
    // SAFETY: forwarded contract.
    unsafe { unlink(local, frame) };
    // SAFETY: the span is on no queue now; the full queue's spans are
    // under the lock `full` holds.
    let class = unsafe { region::span(frame).local().class };
    // SAFETY: as above.
    unsafe { link_in_front(full.head(class), frame, QUEUE_FULL) };
}

/// Takes a span off its class's full queue, to the pool or to another
/// queue: by its owner, or by a sweep.
///
/// # Safety
/// - The span is on the full queue `full` holds (whose lock the caller
///   holds, so the queue's spans' state is the caller's to reach), and no
///   reference from `Span::local` for it or its neighbours is live.
pub(crate) unsafe fn unlink_full(full: &mut FullQueues<'_>, frame: Frame) {
    // SAFETY: the caller's contract.
    let (class, queue) = unsafe {
        let sl = region::span(frame).local();
        (sl.class, sl.queue)
    };
    check!(
        queue == QUEUE_FULL,
        "a span unlinked from a full queue it is not on"
    );
    // SAFETY: forwarded contract.
    unsafe { unlink_from(Some(full.head(class)), frame) };
}

/// Moves a span this thread's heap owns off its class's full queue (held
/// by `full`) to the front of the avail queue: slots came back.
///
/// # Safety
/// - As for [`unlink_full`], on this heap's owner thread.
pub(crate) unsafe fn unpark(local: &mut HeapLocal, full: &mut FullQueues<'_>, frame: Frame) {
    // SAFETY: forwarded contract; then the span is on no queue, this
    // thread's to put on its avail queue.
    unsafe {
        unlink_full(full, frame);
        push_front(local, frame);
    }
}

// ---- slots coming back to the owner ----

/// Puts every span that remote frees put in the mailbox where the slots
/// taken back from it leave it: off the full queue, or, emptied, started
/// over or back to the pool. Owner only, without the heap's lock, which it
/// takes if the mailbox holds spans (waiting for a sweep of the mailbox
/// to end). Whether it does is read without the lock: while a sweep has
/// taken the mailbox's spans out to look at them, the mailbox reads empty
/// and the drain is skipped; the spans the sweep does not release go back
/// in the mailbox, for the owner's next drain. No sweep can take what
/// this takes: a sweep takes only spans it finds in the mailbox.
#[inline]
pub(crate) fn drain_mailbox(heap: OwnedHeap, local: &mut HeapLocal) {
    if !heap.mailbox.is_empty() {
        drain_mailbox_slow(heap, local);
    }
}

#[cold]
fn drain_mailbox_slow(heap: OwnedHeap, local: &mut HeapLocal) {
    let mut full = heap.lock_full();
    for (frame, span, taken) in remote::take_mailbox(heap) {
        // SAFETY: spans in the mailbox belong to this heap, and the lock
        // is held for those on the full queue; no other local reference
        // is live.
        let on_full_queue = unsafe { span.local().queue } == QUEUE_FULL;
        if on_full_queue && (taken != 0 || span.used() == 0) {
            // SAFETY: as above.
            unsafe { unpark(local, &mut full, frame) };
        }
        if span.used() == 0 {
            span_emptied(local, frame, span);
        }
    }
}

/// A span on this heap's avail queue has no slot out: the head of the
/// queue starts over with one fresh stretch, any other goes back to the
/// pool. Owner only.
pub(crate) fn span_emptied(local: &mut HeapLocal, frame: Frame, span: &Span) {
    // SAFETY: the span belongs to this heap, not on its full queue; no
    // other local reference is live.
    let sl = unsafe { span.local() };
    sl.restart();
    let class = sl.class;
    if local.queues_of(class).avail != frame.link() {
        // SAFETY: as above; `sl` is not used past this point.
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

/// After a local free or give-back into a span on the avail queue, which
/// it emptied. Owner only.
#[cold]
#[inline(never)]
pub(crate) fn after_local_free(heap: OwnedHeap, frame: Frame, span: &Span) {
    // SAFETY: this thread owns the heap (the span's owner is its record) and
    // the caller holds no reference to its state.
    let local = unsafe { heap.local() };
    if span.used() == 0 {
        span_emptied(local, frame, span);
    }
}

/// After a local free or give-back into a span on the full queue, made
/// with the heap's lock held (`full`): the span has a slot to reserve
/// again, and goes to the avail queue (emptied, it starts over there).
/// Owner only.
#[cold]
#[inline(never)]
pub(crate) fn after_local_free_full(
    heap: OwnedHeap,
    mut full: FullQueues<'_>,
    frame: Frame,
    span: &Span,
) {
    // SAFETY: this thread owns the heap (the span's owner is its record) and
    // the caller holds no reference to its state.
    let local = unsafe { heap.local() };
    // SAFETY: as above; the span is on the full queue `full` holds.
    unsafe { unpark(local, &mut full, frame) };
    drop(full);
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
    let owner = span.owner();
    if owner.heap() == heap {
        // SAFETY: the span's owner is `heap`, this thread's heap (the
        // caller's contract; never the no-heap marker, which owns nothing).
        let heap = unsafe { OwnedHeap::new(&*heap) };
        // A span on the full queue is reached under the heap's lock (a
        // sweep does not take it: its slots given back here are out).
        let full = owner.on_full_queue().then(|| heap.lock_full());
        // SAFETY: forwarded contract; this thread owns the span, and holds
        // the lock if it is on the full queue.
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
        match full {
            Some(full) => after_local_free_full(heap, full, frame, span),
            None if span.used() == 0 => after_local_free(heap, frame, span),
            None => {}
        }
    } else {
        // SAFETY: forwarded contract.
        unsafe { give_back_remote(frame, span, unused, size) };
    }
}

/// # Safety
/// - As for [`give_back`], and this thread owns the span, holding its
///   heap's lock if the span is on the full queue.
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
