//! Free-list links, and the checks the `hardened` feature adds to them.
//!
//! A free slot holds, in its first four bytes, the offset in its frame of
//! the next free slot (or [`NIL`]). Every list of the runtime (a span's own
//! free list, its remote list, a batch's recycled slots) is linked this way.
//!
//! Without the `hardened` feature every key is 0 and every check compiles
//! away. With it:
//! - Links are stored XORed with a random per-span key, so that a heap
//!   overflow cannot forge one; a decoded link that points outside a frame
//!   aborts.
//! - A free marks the slot's second word with a canary derived from the key,
//!   and a handed-out slot has it cleared. Freeing a slot that carries the
//!   canary, and whose first word decodes to a link a free slot could hold,
//!   is a double free, and aborts. A live object is taken for a freed slot
//!   only if its bytes 0..8 pass both (about 2^-51 per free for data that
//!   does not know the random key; the canary alone, 2^-32, would abort a
//!   correct program that frees a few billion objects of random-looking
//!   data: a reliability test that served every allocation from scopes
//!   hit it in CI).
//! - A free of a pointer that is not the start of a slot aborts.
//!
//! Every abort writes the reason to stderr without allocating.

use crate::base::config::FRAME_SIZE;
use crate::base::fatal::fatal;
use crate::base::sync::Ordering;
use crate::memory::types::{Span, SpanLocal, NIL};

/// Whether the `hardened` feature is on.
pub(crate) const HARDENED: bool = cfg!(feature = "hardened");

const CANARY: u32 = 0x5EED_F4EE;

/// Bytes a link takes at the start of a free slot. A box smaller than this
/// cannot hold one in its own bytes: its link is written byte by byte
/// (`free.rs`'s `Slot`), the box's bytes through the box's pointer.
pub(crate) const LINK_BYTES: usize = size_of::<u32>();

/// Where in a slot the freed mark goes: the second word, so that it does not
/// overlap the link.
pub(crate) const MARK_OFFSET: usize = LINK_BYTES;

/// The key `span`'s links are encoded with.
#[inline(always)]
pub(crate) fn key(span: &Span) -> u32 {
    if HARDENED {
        span.link_key.load(Ordering::Relaxed)
    } else {
        0
    }
}

/// A fresh key for a span being assigned: a hash of a per-process seed (the
/// address of a static, which address-space layout randomisation moves, and
/// the CPU's time-stamp counter where there is one) and a counter, so keys
/// differ between spans and between runs. Calls nothing that allocates or
/// unwinds.
pub(crate) fn new_key() -> u32 {
    use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    if !HARDENED {
        return 0;
    }
    let n = COUNTER.fetch_add(1, Relaxed);
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: RDTSC has no preconditions on x86-64.
    let clock = unsafe { core::arch::x86_64::_rdtsc() };
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let clock = 0u64;
    let seed = clock ^ (&COUNTER as *const AtomicU64).addr() as u64;
    let mut x = seed.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (x ^ (x >> 31)) as u32
}

/// Reads the link stored in the first bytes of a free slot.
///
/// # Safety
/// - `slot` points to a free slot, at least 4-byte aligned, whose link was
///   written by [`write_link`] with the same key and is visible to this
///   thread.
#[inline(always)]
pub(crate) unsafe fn read_link(slot: *const u8, key: u32) -> u32 {
    // SAFETY: the caller's contract.
    let next = unsafe { slot.cast::<u32>().read() } ^ key;
    if HARDENED && next != NIL && next as usize >= FRAME_SIZE {
        fatal("batch-alloc: corrupted free list (a slot was written after it was freed?)");
    }
    next
}

/// Writes a link (the offset of the next free slot) into a free slot.
///
/// # Safety
/// - `slot` points to a slot nobody else reads or writes now, at least
///   4-byte aligned, with provenance over the link's four bytes.
#[inline(always)]
pub(crate) unsafe fn write_link(slot: *mut u8, next: u32, key: u32) {
    // SAFETY: the caller's contract.
    unsafe { slot.cast::<u32>().write(next ^ key) }
}

/// What writes the link of the one slot at `slot`, of `span`, when a push
/// gives it the next slot's offset.
///
/// # Safety
/// - The slot is of `span`, given up by its box, whose pointer `slot`
///   covers the link's four bytes, and only the push the writer is given
///   to writes its link.
#[inline(always)]
pub(crate) unsafe fn writer(slot: *mut u8, span: &Span) -> impl FnMut(u32) + Copy {
    let key = key(span);
    // SAFETY: the caller's contract.
    move |next| unsafe { write_link(slot, next, key) }
}

/// The last slot of a list of `n` slots starting at `head`, all in the frame
/// at `base` (with provenance over it).
///
/// # Safety
/// - The list's slots are free slots of that frame, linked with `key`, whose
///   links are visible to this thread, and `n` is at least 1 and at most
///   the list's length.
#[inline]
pub(crate) unsafe fn tail_of(base: *mut u8, head: u32, n: u32, key: u32) -> u32 {
    let mut tail = head;
    for _ in 1..n {
        // SAFETY: the caller's contract.
        tail = unsafe { read_link(base.wrapping_add(tail as usize), key) };
    }
    tail
}

/// Whether [`Span::is_valid`] follows the free list to count it: in the
/// runtime's own unit tests, under Miri, and with
/// `RUSTFLAGS="--cfg batch_alloc_deep_checks"` (a CI step). Not in every
/// debug build: a user's debug build refills often, and a list can hold
/// thousands of slots.
const WALK_LISTS: bool = cfg!(any(test, miri, batch_alloc_deep_checks));

impl Span {
    /// Whether the owner's view of the span adds up, where it changes hands
    /// (refill, give-back, drain, release, abandonment): the counting
    /// equation `slots == used + listed + fresh`, the fresh slots running
    /// from `bump` to the end of the slots, and with [`WALK_LISTS`] a free
    /// list of exactly `listed` links, each the start of a slot of the span
    /// below `bump`, ending in [`NIL`]. Without the walk, `listed` is whatever
    /// the equation leaves, which must not be negative. For `check!`
    /// (`fatal.rs`): debug builds only.
    ///
    /// # Safety
    /// - `local` is the span's state, held by its owner (or the one thread
    ///   holding it unowned); `base` is its frame, with provenance over it;
    ///   the links of its free list are visible to this thread.
    pub(crate) unsafe fn is_valid(&self, local: &SpanLocal, base: *mut u8) -> bool {
        let size = self.slot_size.load(Ordering::Relaxed);
        let slots = local.slots;
        if size == 0 || slots == 0 || local.fresh > slots {
            return false;
        }
        let fresh_from = (slots - local.fresh).checked_mul(size);
        if fresh_from != Some(local.bump) {
            return false;
        }
        let Some(listed) = self.listed_by_counts(local) else {
            return false;
        };
        if !WALK_LISTS {
            return (listed == 0) == (local.free_head == NIL);
        }
        let key = key(self);
        let mut next = local.free_head;
        let mut walked = 0u32;
        while next != NIL {
            let in_span = next % size == 0 && next / size < slots && next < local.bump;
            if walked == listed || !in_span {
                return false;
            }
            walked += 1;
            // SAFETY: a slot of the span on its free list (checked above),
            // whose link is visible to this thread (the caller's contract).
            next = unsafe { read_link(base.wrapping_add(next as usize), key) };
        }
        walked == listed
    }
}

/// Aborts unless `offset` (from the frame's start) starts a slot of an
/// assigned span.
#[inline(always)]
pub(crate) fn check_slot_start(span: &Span, offset: u32) {
    let size = span.slot_size.load(Ordering::Relaxed);
    if size == 0 || offset % size != 0 {
        fatal("batch-alloc: freed pointer is not the start of a slot");
    }
}

/// Whether frees check that a pointer starts a slot: in hardened builds, and
/// in debug builds of the runtime.
pub(crate) const CHECK_SLOT_STARTS: bool = HARDENED || cfg!(debug_assertions);

/// The mark a freed slot of `span` carries.
#[inline(always)]
pub(crate) fn freed_mark(span: &Span) -> u32 {
    CANARY ^ key(span)
}

/// Whether `word`, the first four bytes of a slot of `span`, decodes to a
/// link a free slot of the span holds: the end of a list, or the start of
/// a slot of its frame.
#[inline(always)]
pub(crate) fn could_be_link(span: &Span, word: u32) -> bool {
    let next = word ^ key(span);
    let size = span.slot_size.load(Ordering::Relaxed);
    next == NIL || (size != 0 && (next as usize) < FRAME_SIZE && next % size == 0)
}

/// Aborts: the slot being freed already carries the freed mark.
#[cold]
pub(crate) fn double_free() -> ! {
    fatal("batch-alloc: double free")
}

/// Clears the freed mark of a slot being handed out.
///
/// # Safety
/// - `slot` is a slot of at least 8 bytes reserved to the caller, with
///   provenance over it.
#[inline(always)]
pub(crate) unsafe fn on_handout(slot: *mut u8) {
    if HARDENED {
        // SAFETY: the caller's contract.
        unsafe {
            slot.wrapping_add(MARK_OFFSET)
                .cast::<u32>()
                .write_unaligned(0)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four 64-byte slots in a frame of 256 bytes, two of them out, the other
    /// two on the free list (0 -> 128), none fresh.
    fn two_out_two_listed() -> (Box<Span>, SpanLocal, Vec<u64>) {
        // SAFETY: all-zero bytes are a valid unassigned span (types.rs).
        let span: Box<Span> = Box::new(unsafe { core::mem::zeroed() });
        span.slot_size.store(64, Ordering::Relaxed);
        span.set_used(2);
        let local = SpanLocal {
            slots: 4,
            bump: 256,
            fresh: 0,
            free_head: 0,
            ..SpanLocal::default()
        };
        let mut frame = vec![0u64; 32];
        let base = frame.as_mut_ptr().cast::<u8>();
        // SAFETY: slots 0 and 128 lie in `frame`, 8-byte aligned.
        unsafe {
            write_link(base, 128, 0);
            write_link(base.wrapping_add(128), NIL, 0);
        }
        (span, local, frame)
    }

    fn valid(span: &Span, local: &SpanLocal, frame: &mut [u64]) -> bool {
        // SAFETY: `frame` holds the span's slots and its links.
        unsafe { span.is_valid(local, frame.as_mut_ptr().cast()) }
    }

    #[test]
    fn a_span_whose_counts_add_up_is_valid() {
        let (span, local, mut frame) = two_out_two_listed();
        assert!(valid(&span, &local, &mut frame));
    }

    #[test]
    fn each_broken_count_is_found() {
        let (span, local, mut frame) = two_out_two_listed();
        span.set_used(3);
        assert!(
            !valid(&span, &local, &mut frame),
            "list longer than the counts"
        );
        span.set_used(1);
        assert!(
            !valid(&span, &local, &mut frame),
            "list shorter than the counts"
        );
        span.set_used(2);

        let broken = SpanLocal { bump: 192, ..local };
        assert!(
            !valid(&span, &broken, &mut frame),
            "bump and fresh disagree"
        );
        let broken = SpanLocal { fresh: 5, ..local };
        assert!(!valid(&span, &broken, &mut frame), "more fresh than slots");

        let base = frame.as_mut_ptr().cast::<u8>();
        // SAFETY: slot 128 lies in `frame`.
        unsafe { write_link(base.wrapping_add(128), 0, 0) };
        assert!(!valid(&span, &local, &mut frame), "a cycle");
        // SAFETY: as above.
        unsafe { write_link(base.wrapping_add(128), 100, 0) };
        assert!(!valid(&span, &local, &mut frame), "a link inside a slot");
    }
}
