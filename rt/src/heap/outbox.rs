//! Remote frees, collected per span and sent back in chains.
//!
//! A thread that frees slots of spans other heaps own does not push each
//! one with its own compare-and-swap: it chains them, per span, through
//! their links (the way the owner's remote list holds them anyway), and
//! hands a whole chain over with one `push_chain` when the thread frees into
//! another span that maps to the same entry, when the chain reaches
//! [`OUTBOX_LIMIT`], when the thread refills, reads `stats()` or exits.
//! (snmalloc's `RemoteDeallocCache`; mimalloc pushes each free.) A span
//! that is armed (its owner waits for a free) or abandoned (its owner is
//! gone) when its chain would start gets its frees at once instead. A
//! thread without a heap gets one at its first remote free (`free.rs`), so
//! every thread has an outbox but one that is exiting, which pushes each
//! free with one compare-and-swap.
//!
//! A thread that stops freeing keeps its chains (at most [`OUTBOX_SPANS`]
//! of them, each under [`OUTBOX_LIMIT`] slots) until it next frees, refills,
//! reads `stats()`, calls `trim()` or exits: meanwhile their spans cannot
//! empty, and their owners reuse the rest of them from free lists.
//!
//! Slots in a chain are still out of their span: the owner's `used` counts
//! them, and so does an abandoned span's word, so a span cannot be reclaimed
//! under a chain; `stats()` subtracts the published count of slots waiting.

use crate::base::config::{FRAME_SHIFT, FRAME_SIZE};
use crate::base::frame::Frame;
use crate::base::sync::Ordering;
use crate::heap::remote;
use crate::memory::link::{self, write_link};
use crate::memory::region::{self, Located};
use crate::memory::types::{HeapRecord, Outgoing, OwnedHeap, NIL, OUTBOX_SPANS};

/// Slots a chain collects before it is sent: a span's worth of 64-byte
/// slots (1,024; 64 with the 4 KiB frames of Miri runs, so that its tests
/// reach it). A long chain holds no more spans back than a short one (one
/// per entry), and each send is a compare-and-swap on a line the span's
/// owner uses, so longer chains mean fewer of them: 1,024 rather than 64
/// made the suite's cross-thread round trips faster and no cross-thread
/// case slower (docs/runtime.md has the figures).
pub(crate) const OUTBOX_LIMIT: u32 = (FRAME_SIZE / 64) as u32;
// A chain starts with room for more (`post` counts down from it).
const _: () = assert!(OUTBOX_LIMIT >= 2);

/// Frees, from this thread, a slot of a span another heap owns: into the
/// outbox's chain for the span, or, for an armed or abandoned span, with
/// its own push at once.
///
/// The common case (the span's chain is under way) touches only this
/// thread's heap record and the slot: no atomic read-modify-write, and the
/// rest a tail call with its arguments in registers, so the caller needs no
/// stack frame.
///
/// # Safety
/// - `heap` is this thread's heap, not retired, with no reference from
///   [`HeapRecord::outbox`] live.
/// - The slot `at` locates is out of a span another heap owns, given up by
///   its box; `link` writes the slot's link (encoded with the span's key)
///   through pointers that may access its bytes (the box's own for the
///   box's bytes: see `free.rs`), and only what this free starts writes it.
#[inline(always)]
pub(crate) unsafe fn post(heap: &HeapRecord, at: Located, mut link: impl FnMut(u32) + Copy) {
    // SAFETY: this thread's heap (the caller's contract).
    let entry = &mut unsafe { heap.outbox() }[entry_index(at)];
    if entry.frame != frame_of(at) {
        // SAFETY: forwarded contract; the reference is not used again.
        return unsafe { start_chain(link, at, heap) };
    }
    link(entry.head);
    entry.head = at.offset_in_frame();
    publish(heap, 1);
    // No underflow: a chain under way has room, and is sent when it has
    // none left.
    entry.room = entry.room.wrapping_sub(1);
    if entry.room == 0 {
        send(entry, heap);
    }
}

/// The first free into a span since its entry last held it. If the entry
/// holds another span's chain, the slot is pushed at once and the entry
/// counts a miss, until [`MISSES_TO_EVICT`] misses send that chain and give
/// the entry to the span of the free that comes next: frees that move on
/// from one span to the next (a list dropped in the order it was made) pay
/// a few pushes per span, and frees scattered over many spans (a graph
/// dropped in any order) pay about one push each, as without an outbox,
/// rather than a send and a new chain each. The push keeps no stack frame;
/// the rest is [`take_entry`]'s.
///
/// # Safety
/// - As for [`post`].
#[cold]
#[inline(never)]
unsafe fn start_chain(link: impl FnMut(u32) + Copy, at: Located, heap: &HeapRecord) {
    // The reference ends before `take_entry` takes the outbox again.
    // SAFETY: this thread's heap (the caller's contract).
    let entry = &mut unsafe { heap.outbox() }[entry_index(at)];
    if entry.frame != Outgoing::UNUSED && entry.misses < MISSES_TO_EVICT {
        entry.misses = entry.misses.wrapping_add(1);
        let span = at.span();
        // SAFETY: forwarded contract; only this push writes the link.
        return unsafe { remote::push_one(at, span, link) };
    }
    // SAFETY: forwarded contract.
    unsafe { take_entry(link, at, heap) }
}

/// Gives the entry of the slot's span to that span: sends the chain it
/// holds, then starts the span's chain with the slot, or pushes the slot at
/// once if the span is armed (its owner waits for a free) or abandoned.
///
/// # Safety
/// - As for [`post`].
#[cold]
#[inline(never)]
unsafe fn take_entry(mut link: impl FnMut(u32) + Copy, at: Located, heap: &HeapRecord) {
    // SAFETY: this thread's heap (the caller's contract).
    let entry = &mut unsafe { heap.outbox() }[entry_index(at)];
    send(entry, heap);
    let span = at.span();
    if remote::needs_prompt_free(span) {
        // SAFETY: forwarded contract; only this push writes the link.
        return unsafe { remote::push_one(at, span, link) };
    }
    if link::HARDENED {
        // The chain's tail gets its link when the chain is sent; until then
        // a hardened free of it must still find a link (see `link`).
        link(NIL);
    }
    *entry = Outgoing {
        frame: frame_of(at),
        head: at.offset_in_frame(),
        room: OUTBOX_LIMIT - 1,
        misses: 0,
        tail: at.ptr(),
    };
    publish(heap, 1);
}

/// The outbox entry of the slot's span: its frame's low bits, taken from
/// the offset so that the entry's address is a shift and a mask away.
#[inline(always)]
fn entry_index(at: Located) -> usize {
    (at.offset >> FRAME_SHIFT) % OUTBOX_SPANS
}

/// The slot's frame as an entry holds it: `at.frame().index()`, read
/// straight from the offset.
#[inline(always)]
fn frame_of(at: Located) -> u32 {
    (at.offset >> FRAME_SHIFT) as u32
}

/// Misses an entry takes (frees into other spans that map to it) before
/// its chain is sent to make room.
const MISSES_TO_EVICT: u32 = 16;

/// Sends every chain. Owner of `heap` only, with no reference from
/// [`HeapRecord::outbox`] live.
pub(crate) fn send_all(heap: OwnedHeap) {
    if heap.outbox_slots.load(Ordering::Relaxed) == 0 {
        return;
    }
    // SAFETY: this thread's heap (the handle's invariant), with no other
    // reference to its outbox (the caller's contract).
    for entry in unsafe { heap.outbox() } {
        send(entry, &heap);
    }
}

/// Hands the chain `entry` holds, if any, to its span: one
/// compare-and-swap. `entry` is of `heap`'s outbox.
#[inline(never)]
fn send(entry: &mut Outgoing, heap: &HeapRecord) {
    if entry.frame == Outgoing::UNUSED {
        return;
    }
    let frame = Frame::new(entry.frame);
    let span = region::span(frame);
    let (tail, key) = (entry.tail, link::key(span));
    // SAFETY: the tail is a slot of the chain, given up by its box in an
    // earlier free that has returned; only this push writes its link.
    let link_last = |next| unsafe { write_link(tail, next, key) };
    let (head, count) = (entry.head, OUTBOX_LIMIT.wrapping_sub(entry.room));
    *entry = Outgoing::EMPTY;
    publish(heap, count.wrapping_neg());
    // SAFETY: the chain's slots are out of `span`, given up, and linked
    // head to tail but for the tail's link, which `link_last` writes.
    unsafe { remote::push_chain(frame, span, head, count, link_last) };
}

/// Adds `delta` (wrapping) to the published count of waiting slots.
#[inline(always)]
fn publish(heap: &HeapRecord, delta: u32) {
    let slots = &heap.outbox_slots;
    slots.store(
        slots.load(Ordering::Relaxed).wrapping_add(delta),
        Ordering::Relaxed,
    );
}

// Not under loom, whose builds lack the tests' helpers (`workloads`).
#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::base::class::class_of;
    use crate::heap::reserve::reserve;
    use crate::memory::types::Tally;

    type Slot16 = [u64; 2];

    /// A slot pointer sent to another thread to be freed there.
    struct SendPtr(*mut u8);
    // SAFETY: the slot is given up by the sender; the receiver only frees it.
    unsafe impl Send for SendPtr {}

    /// This thread's outbox entry for `frame`'s span: (frame, room).
    fn entry_of(frame: Frame) -> (u32, u32) {
        let heap = crate::heap::thread::current_or_init().expect("a heap");
        // SAFETY: this thread's heap; the reference ends here.
        let entry = unsafe { heap.outbox() }[frame.as_usize() % OUTBOX_SPANS];
        (entry.frame, entry.room)
    }

    /// A chain is sent in one push when it reaches `OUTBOX_LIMIT` slots,
    /// and the next free into the span starts another.
    #[test]
    fn a_chain_is_sent_when_it_has_no_room_left() {
        // A fresh thread, alone in the process: its heap reserves from a
        // span of its own.
        workloads::testing::serially(|| {
            let heap = crate::heap::thread::current_or_init().expect("a heap");
            let n = OUTBOX_LIMIT + 1;
            let held = reserve(heap, class_of::<Slot16>(), n, Tally::Batch).unwrap();
            assert_eq!(
                (held.list_len, held.len),
                (0, n),
                "a fresh stretch of exactly n"
            );
            let (frame, base) = (held.frame, region::frame_base(held.frame));
            let slots: Vec<SendPtr> = (held.bump_start..held.bump_end)
                .step_by(size_of::<Slot16>())
                .map(|offset| {
                    let slot = base.wrapping_add(offset as usize);
                    // SAFETY: a slot of the reservation, handed out once, here.
                    unsafe { link::on_handout(slot) };
                    SendPtr(slot)
                })
                .collect();
            let span = region::span(frame);
            let freer = std::thread::spawn(move || {
                let free = |slot: &SendPtr| {
                    // SAFETY: a slot handed out from the reservation and given up;
                    // the global allocator of the tests is `BatchAlloc`.
                    unsafe { std::alloc::dealloc(slot.0, std::alloc::Layout::new::<Slot16>()) }
                };
                // Its heap first (its first free would make it anyway).
                crate::heap::thread::current_or_init().expect("a heap");
                let (last, rest) = slots.split_last().unwrap();
                let (limit_th, before) = rest.split_last().unwrap();
                before.iter().for_each(free);
                assert_eq!(entry_of(frame), (frame.index(), 1), "one slot of room left");
                assert_eq!(remote::word(span).count(), 0);
                free(limit_th);
                assert_eq!(entry_of(frame).0, Outgoing::UNUSED, "sent at the limit");
                let sent = remote::word(span).count();
                assert_eq!(sent, OUTBOX_LIMIT, "the whole chain in one push");
                free(last);
                assert_eq!(
                    entry_of(frame),
                    (frame.index(), OUTBOX_LIMIT - 1),
                    "a new chain"
                );
            });
            freer.join().unwrap();
        });
    }

    /// Boxes smaller than a link, freed on another thread, join that
    /// thread's chain like any other (their links written byte by byte,
    /// over the boxes' own bytes), and the chain its exit sends links them
    /// all.
    #[test]
    fn boxes_smaller_than_a_link_join_the_chain() {
        type Tiny = [u8; 2];
        workloads::testing::serially(|| {
            let heap = crate::heap::thread::current_or_init().expect("a heap");
            let n = 5;
            let held = reserve(heap, class_of::<Tiny>(), n, Tally::Batch).unwrap();
            assert_eq!((held.list_len, held.len), (0, n), "a fresh stretch");
            let (frame, base) = (held.frame, region::frame_base(held.frame));
            let size = crate::base::class::CLASSES[usize::from(class_of::<Tiny>())].size;
            let offsets: Vec<u32> = (held.bump_start..held.bump_end)
                .step_by(size as usize)
                .collect();
            let slots: Vec<SendPtr> = offsets
                .iter()
                .map(|&offset| {
                    let slot = base.wrapping_add(offset as usize);
                    // SAFETY: a slot of the reservation, handed out once, here.
                    unsafe { link::on_handout(slot) };
                    // SAFETY: the slot was handed out just above, is at
                    // least the class's size (two bytes or more) and is
                    // used by nobody else: these are the box's bytes.
                    unsafe { slot.cast::<Tiny>().write([0xAB, 0xCD]) };
                    SendPtr(slot)
                })
                .collect();
            let span = region::span(frame);
            let freer = std::thread::spawn(move || {
                crate::heap::thread::current_or_init().expect("a heap");
                for (i, slot) in slots.iter().enumerate() {
                    // SAFETY: a slot handed out from the reservation and
                    // given up; the global allocator of the tests is
                    // `BatchAlloc`.
                    unsafe { std::alloc::dealloc(slot.0, std::alloc::Layout::new::<Tiny>()) };
                    let room = OUTBOX_LIMIT - 1 - i as u32;
                    assert_eq!(entry_of(frame), (frame.index(), room), "free {i} chained");
                    assert_eq!(remote::word(span).count(), 0, "nothing pushed");
                }
            });
            freer.join().unwrap();
            let word = remote::word(span);
            assert_eq!(word.count(), n, "the chain sent at the thread's exit");
            let key = link::key(span);
            let mut linked = vec![word.head()];
            for _ in 1..n {
                let last = *linked.last().unwrap();
                // SAFETY: a slot of the list the exit's push published.
                linked.push(unsafe { link::read_link(base.wrapping_add(last as usize), key) });
            }
            linked.sort_unstable();
            assert_eq!(linked, offsets, "every freed slot on the list, once");
        });
    }
}
