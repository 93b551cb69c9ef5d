//! Refills: a run (a scope's or a batch's) reserves slots from one span of this
//! thread's heap in one call. (What they did not use goes back through
//! `queues::give_back`.)

use crate::base::class;
use crate::base::fatal::{check, fatal};
use crate::base::frame::Frame;
use crate::base::sync::Ordering;
use crate::heap::outbox;
use crate::heap::queues::{drain_mailbox, park, push_front};
use crate::heap::remote;
use crate::memory::cursor::Reservation;
use crate::memory::link::{self, read_link};
use crate::memory::pool;
use crate::memory::record::count_reserve;
use crate::memory::region::{self, frame_base};
use crate::memory::types::{HeapLocal, OwnedHeap, Span, SpanLocal, Tally, NIL};

/// The allocation-policy study's switch (docs/policy.md): take exactly what
/// a refill asks for, never the rest of the span. Compiled only with the
/// `--cfg batch_alloc_policy_study`, so that the production refill reads
/// no switch.
#[cfg(batch_alloc_policy_study)]
static EXACT_REFILLS: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// Makes refills take exactly what they ask for (`true`) or, as by default,
/// the rest of the span when less than twice the request would remain. For
/// the policy measurements (`--cfg batch_alloc_policy_study`); not part of the
/// stable API.
#[cfg(batch_alloc_policy_study)]
pub fn set_exact_refills(exact: bool) {
    EXACT_REFILLS.store(exact, Ordering::Relaxed);
}

/// Whether refills take exactly what they ask for: never, outside the
/// policy study.
#[inline(always)]
fn exact_refills() -> bool {
    #[cfg(batch_alloc_policy_study)]
    return EXACT_REFILLS.load(Ordering::Relaxed);
    #[cfg(not(batch_alloc_policy_study))]
    false
}

/// Reserves at least one and up to about `want` slots of `class` from
/// `heap`, this thread's heap: `want`, or the rest of the span when less
/// than twice the request would remain there (the `RawVec::reserve` rule:
/// ask for at least what is needed, take what comes cheaply; what a run
/// does not use goes back when it ends). `None` when there is no memory: the caller falls back to
/// `Box::new` or the inner allocator.
///
/// Callers find the heap: a batch makes it on first use, a scope already
/// has it (so a scope's refill on the allocator path never makes one).
#[inline]
pub(crate) fn reserve(heap: OwnedHeap, class: u8, want: u32, tally: Tally) -> Option<Reservation> {
    match reserve_fresh_stretch(heap, class, want, tally) {
        Some(reservation) => Some(reservation),
        None => reserve_slow(heap, class, want, tally),
    }
}

/// The head span of `class`'s avail queue in `heap`, this thread's heap,
/// when nothing waits to be taken in first (no span in the mailbox, no
/// chain in the outbox, no remote frees on the span): where the fast paths
/// serve from. `None` otherwise, for `reserve_slow`.
#[inline(always)]
fn quiet_head_span(heap: OwnedHeap, class: u8) -> Option<(Frame, &'static Span)> {
    if !heap.mailbox.is_empty() || heap.outbox_slots.load(Ordering::Relaxed) != 0 {
        return None;
    }
    // SAFETY: this thread owns its heap; reserve is never re-entered.
    let local = unsafe { heap.local() };
    let frame = Frame::from_link(local.queues_of(class).avail)?;
    let span = region::span(frame);
    if remote::has_pending(span) {
        return None;
    }
    Some((frame, span))
}

/// The common refill: the head span of the class
/// has no recycled slots, no remote frees waiting, and fresh slots to spare
/// (more than twice the request, so neither policy would take more). `None`
/// for anything else.
#[inline(always)]
fn reserve_fresh_stretch(
    heap: OwnedHeap,
    class: u8,
    want: u32,
    tally: Tally,
) -> Option<Reservation> {
    let (frame, span) = quiet_head_span(heap, class)?;
    // SAFETY: this thread owns the span; no other local reference is live.
    let sl = unsafe { span.local() };
    let want = want.max(1);
    if sl.free_head != NIL || sl.fresh / 2 <= want {
        return None;
    }
    let size = span.slot_size.load(Ordering::Relaxed);
    let bump_start = sl.bump;
    // No overflow: `want` is under half the fresh slots, which fit the
    // frame, and the slots out stay at most the span's.
    sl.bump = sl.bump.wrapping_add(want.wrapping_mul(size));
    sl.fresh = sl.fresh.wrapping_sub(want);
    span.set_used(span.used().wrapping_add(want));
    count_reserve(heap, want, tally);
    Some(Reservation {
        frame,
        list_head: 0,
        list_len: 0,
        bump_start,
        bump_end: sl.bump,
        len: want,
    })
}

/// Every other refill: a new heap, the mailbox, recycled or remotely freed
/// slots, a span running out, a new span; and the outbox's chains go out.
#[inline(never)]
fn reserve_slow(heap: OwnedHeap, class: u8, want: u32, tally: Tally) -> Option<Reservation> {
    outbox::send_all(heap);
    // SAFETY: this thread owns its heap, and reserve is never re-entered: it
    // calls no allocator while the reference is live.
    let local = unsafe { heap.local() };
    drain_mailbox(heap, local);
    loop {
        let frame = match Frame::from_link(local.queues_of(class).avail) {
            None => new_span(heap, local, class)?,
            Some(frame) => frame,
        };
        let span = region::span(frame);
        if remote::has_pending(span) {
            remote::collect(frame, span);
        }
        // SAFETY: as above.
        let sl = unsafe { span.local() };
        if let Some(reservation) = take_slots(frame, span, sl, want) {
            if sl.exhausted() {
                park_full(heap, local, frame, span);
            }
            count_reserve(heap, reservation.len, tally);
            return Some(reservation);
        }
        park_full(heap, local, frame, span);
    }
}

/// Takes up to `want` slots, recycled ones first. A fresh stretch takes
/// the rest of the span when less than twice `want` would remain: the
/// loop will most likely want it, and a sliver left behind would only cost
/// another refill.
fn take_slots(frame: Frame, span: &Span, sl: &mut SpanLocal, want: u32) -> Option<Reservation> {
    let size = span.slot_size.load(Ordering::Relaxed);
    check!(
        // SAFETY: `sl` is the span's state, held by this thread, its owner;
        // the links of its free list were written by this thread or made
        // visible by a take's acquire.
        unsafe { span.is_valid(sl, frame_base(frame)) },
        "span counts at a refill"
    );
    let mut reservation = Reservation {
        frame,
        ..Reservation::default()
    };
    let mut need = want.max(1);
    if sl.free_head != NIL {
        let base = frame_base(frame);
        let key = link::key(span);
        let head = sl.free_head;
        // The counting equation gives the list's length: a refill that wants
        // all of it takes it without a walk (the batch follows the links as
        // it hands the slots out).
        let listed = listed_slots(sl, span);
        let (taken, next) = if need >= listed {
            (listed, NIL)
        } else {
            let mut taken = 1;
            // SAFETY: free slots of this span hold links written by this
            // thread or made visible by a take's acquire.
            let mut next = unsafe { read_link(base.wrapping_add(head as usize), key) };
            while taken < need && next != NIL {
                // SAFETY: as above.
                next = unsafe { read_link(base.wrapping_add(next as usize), key) };
                taken = taken.saturating_add(1);
            }
            (taken, next)
        };
        reservation.list_head = head;
        reservation.list_len = taken;
        sl.free_head = next;
        need = need.saturating_sub(taken);
    }
    let mut fresh = 0;
    if need > 0 && sl.fresh > 0 {
        let rest_of_span = sl.fresh < need.saturating_mul(2);
        fresh = if rest_of_span && !exact_refills() {
            sl.fresh
        } else {
            need.min(sl.fresh)
        };
        reservation.bump_start = sl.bump;
        // No overflow: at most the span's fresh slots, which fit the frame.
        reservation.bump_end = sl.bump.wrapping_add(fresh.wrapping_mul(size));
        sl.bump = reservation.bump_end;
        sl.fresh = sl.fresh.wrapping_sub(fresh);
    }
    reservation.len = reservation.list_len.wrapping_add(fresh);
    if reservation.len == 0 {
        return None;
    }
    // No overflow: the reservation's slots were free, so `used` stays at
    // most the span's slot count.
    span.set_used(span.used().wrapping_add(reservation.len));
    Some(reservation)
}

/// Length of the owner's free list of a span whose list is not empty, by
/// the counting equation (`slots == used + listed + fresh`). Metadata that
/// breaks the equation is corrupted (a double free in a build without the
/// checks): abort rather than hand out slots past the list's end.
#[inline]
fn listed_slots(sl: &SpanLocal, span: &Span) -> u32 {
    match span.listed_by_counts(sl) {
        Some(listed) if listed > 0 => listed,
        _ => fatal("batch-alloc: corrupted span counts (double free?)"),
    }
}

/// Moves a span with nothing left to reserve onto the full queue, armed so
/// that a remote free brings it back. If frees are already waiting it stays
/// on the avail queue, where the next look collects them. Under the
/// heap's lock, which a sweep of the full queue may hold.
#[inline(always)]
fn park_full(heap: OwnedHeap, local: &mut HeapLocal, frame: Frame, span: &Span) {
    let mut full = heap.lock_full();
    if remote::arm(span) {
        // SAFETY: this thread owns the span, on its avail queue; the
        // caller's local reference to it is no longer used.
        unsafe { park(local, &mut full, frame) };
    }
}

/// Assigns an empty frame to this heap as a span of `class`.
fn new_span(heap: OwnedHeap, local: &mut HeapLocal, class: u8) -> Option<Frame> {
    let frame = pool::acquire_frame()?;
    let span = region::span(frame);
    let shape = class::shape(class);
    let owner = heap.as_ptr();
    // SAFETY: a frame just taken from the region is held by this thread alone.
    unsafe { span.assign(owner, class, shape.size, shape.slots, link::new_key()) };
    // SAFETY: this thread owns the new span, which is on no queue.
    unsafe { push_front(local, frame) };
    region::note_assigned(shape.span_bytes());
    Some(frame)
}

// Not under loom, whose builds lack the tests' helpers (`workloads`).
#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::base::class::{class_of, CLASSES, NUM_CLASSES};
    use crate::heap::queues::give_back;

    /// This thread's heap, made if need be.
    fn heap() -> OwnedHeap {
        crate::heap::thread::current_or_init().expect("a heap")
    }
    use crate::memory::region::locate;

    type Slot64 = [u64; 8];

    /// A slot pointer sent to another thread to be freed there.
    struct SendPtr(*mut u8);
    // SAFETY: the slot is given up by the sender; the receiver only frees it.
    unsafe impl Send for SendPtr {}

    fn class64() -> u8 {
        class_of::<Slot64>()
    }

    fn slot_ptr(reservation: &Reservation, offset: u32) -> *mut u8 {
        frame_base(reservation.frame).wrapping_add(offset as usize)
    }

    /// Frees a slot the way `Box` does: through the global allocator. The
    /// tests take slots from reservations directly, so this first does what
    /// a batch does when it hands a slot out.
    fn free_slot(p: *mut u8) {
        // SAFETY: `p` is a slot of a reservation this test took.
        unsafe { crate::memory::link::on_handout(p) };
        // SAFETY: `p` is a slot of a reservation this test took and handed
        // out to itself once; the test's global allocator is `BatchAlloc`.
        unsafe { std::alloc::dealloc(p, std::alloc::Layout::new::<Slot64>()) }
    }

    /// Every slot of a reservation's stretch, in order.
    fn stretch_slots(r: &Reservation, size: u32) -> Vec<*mut u8> {
        (r.bump_start..r.bump_end)
            .step_by(size as usize)
            .map(|offset| slot_ptr(r, offset))
            .collect()
    }

    #[test]
    fn a_reservation_is_a_contiguous_stretch_inside_one_span() {
        workloads::testing::serially(|| {
            let reservation =
                reserve(heap(), class64(), 16, Tally::Batch).expect("region available");
            let size = CLASSES[class64() as usize].size;
            assert_eq!(reservation.list_len, 0);
            assert_eq!(reservation.len, 16);
            assert_eq!(reservation.bump_end - reservation.bump_start, 16 * size);
            let first = locate(slot_ptr(&reservation, reservation.bump_start)).unwrap();
            let last = locate(slot_ptr(&reservation, reservation.bump_end - size)).unwrap();
            assert_eq!(first.frame(), last.frame());
            assert_eq!(first.frame(), reservation.frame);
            // SAFETY: nothing was handed out.
            unsafe {
                give_back(
                    crate::heap::this_thread::current(),
                    reservation,
                    Tally::Batch,
                )
            };
        });
    }

    #[test]
    fn a_request_takes_the_rest_of_the_span_when_little_would_remain() {
        workloads::testing::serially(|| {
            let class = class64();
            let slots = CLASSES[class as usize].slots;
            let asked = slots - slots / 4; // leaves less than twice as much again
            let guess = reserve(heap(), class, asked, Tally::Batch).unwrap();
            assert_eq!(guess.len, slots, "the rest of the span");
            // SAFETY: nothing was handed out.
            unsafe { give_back(crate::heap::this_thread::current(), guess, Tally::Batch) };
            let small = reserve(heap(), class, 8, Tally::Batch).unwrap();
            assert_eq!(small.len, 8, "plenty remains: no rounding");
            // SAFETY: nothing was handed out.
            unsafe { give_back(crate::heap::this_thread::current(), small, Tally::Batch) };
        });
    }

    #[test]
    fn giving_back_an_untouched_stretch_rolls_the_bump_back() {
        workloads::testing::serially(|| {
            let class = class64();
            let first = reserve(heap(), class, 8, Tally::Batch).unwrap();
            // SAFETY: nothing was handed out.
            unsafe { give_back(crate::heap::this_thread::current(), first, Tally::Batch) };
            let second = reserve(heap(), class, 8, Tally::Batch).unwrap();
            assert_eq!(first, second, "the same slots come back");
            // SAFETY: nothing was handed out.
            unsafe { give_back(crate::heap::this_thread::current(), second, Tally::Batch) };
        });
    }

    #[test]
    fn freed_slots_are_reused_by_later_reservations() {
        workloads::testing::serially(|| {
            let class = class64();
            let size = CLASSES[class as usize].size;
            let held = reserve(heap(), class, 4, Tally::Batch).unwrap();
            // Keep the span from emptying (which would reset it to one fresh stretch).
            let keeper = reserve(heap(), class, 1, Tally::Batch).unwrap();
            let slots = stretch_slots(&held, size);
            free_slot(slots[1]);
            let again = reserve(heap(), class, 1, Tally::Batch).unwrap();
            assert_eq!(again.list_len, 1);
            assert_eq!(slot_ptr(&again, again.list_head), slots[1]);
            for &p in [slots[0], slots[2], slots[3], slots[1]].iter() {
                free_slot(p);
            }
            // SAFETY: the keeper's slot was never handed out.
            unsafe { give_back(crate::heap::this_thread::current(), keeper, Tally::Batch) };
        });
    }

    #[test]
    fn an_emptied_span_starts_over_with_a_fresh_run() {
        workloads::testing::serially(|| {
            let class = class64();
            let size = CLASSES[class as usize].size;
            let r = reserve(heap(), class, 3, Tally::Batch).unwrap();
            for p in stretch_slots(&r, size).into_iter().rev() {
                free_slot(p);
            }
            let next = reserve(heap(), class, 3, Tally::Batch).unwrap();
            assert_eq!(next.list_len, 0, "no list once a span is empty again");
            assert_eq!(next.bump_start, 0);
            // SAFETY: nothing was handed out.
            unsafe { give_back(crate::heap::this_thread::current(), next, Tally::Batch) };
        });
    }

    #[test]
    fn a_full_span_comes_back_through_the_mailbox_after_a_remote_free() {
        workloads::testing::serially(|| {
            // A class with few slots per span, so that one reservation fills it.
            let class = (0..NUM_CLASSES)
                .rev()
                .find(|&c| CLASSES[c].slots >= 8)
                .expect("a class with eight slots") as u8;
            let shape = CLASSES[class as usize];
            let r = reserve(heap(), class, shape.slots, Tally::Batch).unwrap();
            assert_eq!(r.len, shape.slots, "the whole span");
            let slots = stretch_slots(&r, shape.size);
            let victim = SendPtr(slots[5]);
            std::thread::spawn(move || {
                let victim = victim;
                free_slot(victim.0)
            })
            .join()
            .unwrap();
            // The next refill drains the mailbox and finds the freed slot.
            let again = reserve(heap(), class, 1, Tally::Batch).unwrap();
            assert_eq!(again.frame, r.frame);
            assert_eq!(again.list_len, 1);
            assert_eq!(slot_ptr(&again, again.list_head), slots[5]);
            for (i, &p) in slots.iter().enumerate() {
                if i != 5 {
                    free_slot(p);
                }
            }
            free_slot(slots[5]);
        });
    }

    #[test]
    fn a_batch_ended_on_another_thread_returns_its_slots_remotely() {
        workloads::testing::serially(|| {
            let class = class64();
            let r = reserve(heap(), class, 10, Tally::Batch).unwrap();
            let keeper = reserve(heap(), class, 1, Tally::Batch).unwrap();
            std::thread::spawn(move || {
                // SAFETY: nothing was handed out; any thread may end a reservation.
                unsafe { give_back(crate::heap::this_thread::current(), r, Tally::Batch) }
            })
            .join()
            .unwrap();
            // The ten slots come back on the next look at the span.
            let again = reserve(heap(), class, 10, Tally::Batch).unwrap();
            assert_eq!(again.frame, r.frame);
            assert_eq!(again.len, 10);
            // SAFETY: nothing was handed out.
            unsafe {
                give_back(crate::heap::this_thread::current(), again, Tally::Batch);
                give_back(crate::heap::this_thread::current(), keeper, Tally::Batch);
            }
        });
    }
}
