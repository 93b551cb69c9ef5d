//! Refills: a batch reserves a run of slots from one span of this thread's
//! heap in one call, and gives back what it did not use when it ends.

use crate::class::CLASSES;
use crate::heap::{
    self, count_reserve, count_settled, drain_mailbox, merge_remote, move_to, push_front,
    HeapLocal, HeapRecord,
};
use crate::region::{self, frame_base};
use crate::remote::{self, Take};
use crate::span::{read_link, write_link, Span, SpanLocal, QUEUE_AVAIL, QUEUE_FULL};
use crate::sync::Ordering;

/// Slots reserved from one span: a list of recycled slots followed by a
/// contiguous run of fresh ones. Offsets are bytes from the frame's start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reservation {
    pub frame: u32,
    /// First recycled slot (valid when `list_len > 0`); each links the next.
    pub list_head: u32,
    pub list_len: u32,
    /// The run of fresh slots `[bump_start, bump_end)`.
    pub bump_start: u32,
    pub bump_end: u32,
}

impl Reservation {
    pub(crate) fn slots(&self, slot_size: u32) -> u32 {
        self.list_len + (self.bump_end - self.bump_start) / slot_size
    }
}

/// Reserves at least one and up to about `want` slots of `class` from this
/// thread's heap. `None` when there is no heap (thread exiting), no region,
/// or no memory: the caller falls back to `Box::new`.
pub(crate) fn reserve(class: u8, want: u32) -> Option<Reservation> {
    let heap = heap::current_or_init()?;
    // SAFETY: this thread owns its heap, and reserve is never re-entered: it
    // calls no allocator while the reference is live.
    let local = unsafe { heap.local() };
    drain_mailbox(heap, local);
    loop {
        let frame = match local.queues[class as usize].avail {
            0 => new_span(heap, local, class)?,
            next => next - 1,
        };
        let span = region::span(frame);
        let (head, n) = remote::take(
            span,
            Take {
                from_mailbox: false,
                arm_if_empty: false,
            },
        );
        // SAFETY: this thread owns the span; no local reference is live.
        unsafe { merge_remote(frame, span, head, n) };
        // SAFETY: as above.
        let sl = unsafe { span.local() };
        if let Some(reservation) = take_slots(frame, span, sl, want) {
            if sl.kept_empty {
                sl.kept_empty = false;
                local.empty_spans -= 1;
            }
            let exhausted = sl.free_count == 0 && sl.bump == sl.limit;
            if exhausted {
                park_full(local, frame, span);
            }
            count_reserve(heap, reservation.slots(span.slot_size.load(Ordering::Relaxed)));
            return Some(reservation);
        }
        park_full(local, frame, span);
    }
}

/// Takes up to `want` slots, recycled ones first. A fresh run takes the rest
/// of the span when less than twice `want` would remain: a sliver left behind
/// would only cost another refill.
fn take_slots(frame: u32, span: &Span, sl: &mut SpanLocal, want: u32) -> Option<Reservation> {
    let size = span.slot_size.load(Ordering::Relaxed);
    let mut reservation = Reservation {
        frame,
        ..Reservation::default()
    };
    let mut need = want.max(1);
    if sl.free_count > 0 {
        let taken = need.min(sl.free_count);
        let base = frame_base(frame);
        let mut last = sl.free_head;
        for _ in 1..taken {
            // SAFETY: free slots of this span hold links written by this
            // thread or made visible by a take's acquire.
            last = unsafe { read_link(base.wrapping_add(last as usize)) };
        }
        reservation.list_head = sl.free_head;
        reservation.list_len = taken;
        sl.free_count -= taken;
        if sl.free_count > 0 {
            // SAFETY: as above.
            sl.free_head = unsafe { read_link(base.wrapping_add(last as usize)) };
        }
        need -= taken;
    }
    if need > 0 && sl.bump < sl.limit {
        let remaining = (sl.limit - sl.bump) / size;
        let taken = if remaining < need.saturating_mul(2) {
            remaining
        } else {
            need
        };
        reservation.bump_start = sl.bump;
        reservation.bump_end = sl.bump + taken * size;
        sl.bump = reservation.bump_end;
    }
    let slots = reservation.slots(size);
    if slots == 0 {
        return None;
    }
    span.add_used(slots as i64);
    Some(reservation)
}

/// Moves a span with nothing left to reserve onto the full queue, armed so
/// that a remote free brings it back. If frees are already waiting it stays
/// on the avail queue, where the next look collects them.
fn park_full(local: &mut HeapLocal, frame: u32, span: &Span) {
    if remote::arm(span) {
        // SAFETY: this thread owns the span; the caller's local reference to
        // it is no longer used.
        unsafe { move_to(local, frame, QUEUE_FULL) };
    }
}

/// Assigns an empty frame to this heap as a span of `class`.
fn new_span(heap: &HeapRecord, local: &mut HeapLocal, class: u8) -> Option<u32> {
    let frame = region::acquire_frame()?;
    let span = region::span(frame);
    let shape = CLASSES[class as usize];
    span.slot_size.store(shape.size, Ordering::Relaxed);
    span.used.store(0, Ordering::Relaxed);
    span.remote.store(0, Ordering::Relaxed);
    span.owner.store(
        heap as *const HeapRecord as *mut HeapRecord,
        Ordering::Relaxed,
    );
    // SAFETY: a frame just taken from the region is held by this thread alone.
    let sl = unsafe { span.local() };
    *sl = SpanLocal {
        class,
        resident: sl.resident,
        limit: shape.slots * shape.size,
        ..SpanLocal::default()
    };
    // SAFETY: this thread owns the new span, which is on no queue.
    unsafe { push_front(local, frame, QUEUE_AVAIL) };
    region::note_assigned(shape.span_bytes());
    Some(frame)
}

/// Ends a reservation of `reserved` slots, of which the slots described by
/// `unused` were not handed out: they go back to the span, on whichever
/// thread the batch ends.
///
/// # Safety
/// - `unused` describes slots of a reservation this caller holds, still
///   linked as the reservation handed them over, and never handed out.
pub(crate) unsafe fn give_back(unused: Reservation, reserved: u32) {
    let frame = unused.frame;
    let span = region::span(frame);
    let size = span.slot_size.load(Ordering::Relaxed);
    let returned = unused.slots(size);
    let heap = heap::current();
    count_settled(heap, reserved, returned);
    if returned == 0 {
        return;
    }
    if !heap.is_null() && span.owner.load(Ordering::Relaxed) == heap {
        // SAFETY: the span's owner is this thread's heap; records are never
        // freed.
        let heap = unsafe { &*heap };
        // SAFETY: forwarded contract; this thread owns the span.
        unsafe { give_back_local(frame, span, unused, size) };
        span.add_used(-(returned as i64));
        // SAFETY: as above, for the span's state.
        let sl = unsafe { span.local() };
        if sl.queue == QUEUE_FULL || span.used.load(Ordering::Relaxed) == 0 {
            heap::after_local_free(heap, frame, span);
        }
    } else {
        // SAFETY: forwarded contract.
        unsafe { give_back_remote(frame, span, unused, size) };
    }
}

/// # Safety
/// - As for [`give_back`], and this thread owns the span.
unsafe fn give_back_local(frame: u32, span: &Span, unused: Reservation, size: u32) {
    let base = frame_base(frame);
    // SAFETY: this thread owns the span; no other local reference is live.
    let sl = unsafe { span.local() };
    if unused.list_len > 0 {
        if sl.free_count > 0 {
            let mut tail = unused.list_head;
            for _ in 1..unused.list_len {
                // SAFETY: the list's slots are linked as reserved.
                tail = unsafe { read_link(base.wrapping_add(tail as usize)) };
            }
            // SAFETY: the tail is an unused slot of the reservation.
            unsafe { write_link(base.wrapping_add(tail as usize), sl.free_head) };
        }
        sl.free_head = unused.list_head;
        sl.free_count += unused.list_len;
    }
    if unused.bump_end > unused.bump_start {
        if sl.bump == unused.bump_end {
            // Nothing was carved after the run: roll the bump back.
            sl.bump = unused.bump_start;
        } else {
            let mut offset = unused.bump_start;
            while offset < unused.bump_end {
                // SAFETY: an unused slot of the reservation.
                unsafe { write_link(base.wrapping_add(offset as usize), sl.free_head) };
                sl.free_head = offset;
                sl.free_count += 1;
                offset += size;
            }
        }
    }
}

/// Links the unused slots into one chain (fresh run first, then the list)
/// and pushes it onto the span's remote list in one operation.
///
/// # Safety
/// - As for [`give_back`].
unsafe fn give_back_remote(frame: u32, span: &Span, unused: Reservation, size: u32) {
    let base = frame_base(frame);
    let mut last = None;
    let mut offset = unused.bump_start;
    while offset < unused.bump_end {
        if let Some(previous) = last {
            // SAFETY: an unused slot of the reservation.
            unsafe { write_link(base.wrapping_add(previous as usize), offset) };
        }
        last = Some(offset);
        offset += size;
    }
    if unused.list_len > 0 {
        if let Some(previous) = last {
            // SAFETY: as above.
            unsafe { write_link(base.wrapping_add(previous as usize), unused.list_head) };
        }
        let mut tail = unused.list_head;
        for _ in 1..unused.list_len {
            // SAFETY: the list's slots are linked as reserved.
            tail = unsafe { read_link(base.wrapping_add(tail as usize)) };
        }
        last = Some(tail);
    }
    let first = if unused.bump_end > unused.bump_start {
        unused.bump_start
    } else {
        unused.list_head
    };
    let Some(last) = last else { return };
    let n = unused.slots(size);
    // SAFETY: the chain is the caller's to give up; `last` derives from the
    // frame base.
    let pushed = unsafe { remote::push_chain(span, first, base.wrapping_add(last as usize), n) };
    crate::free::after_remote_push(pushed, frame, span);
}
