//! Optional hardening, the `hardened` feature. Off, every function here is
//! free: the key is the constant 0 and the checks compile away.
//!
//! On:
//! - Free-list links (offsets in a frame) are stored XORed with a random
//!   per-span key, so that a heap overflow cannot forge one; a decoded link
//!   that points outside a frame aborts.
//! - A free marks the slot's second word with a canary derived from the key,
//!   and a handed-out slot has it cleared. Freeing a slot that carries the
//!   canary is a double free, and aborts. (A live object whose bytes 4..8
//!   happen to equal the canary would be taken for one: a chance of 2^-32
//!   per free, for data that does not know the random key.)
//! - A free of a pointer that is not the start of a slot aborts.
//!
//! Every abort writes the reason to stderr without allocating.

use crate::config::FRAME_SIZE;
use crate::fatal::fatal;
use crate::span::{Span, NIL};
use crate::sync::Ordering;

/// Whether the `hardened` feature is on.
pub(crate) const ENABLED: bool = cfg!(feature = "hardened");

const CANARY: u32 = 0x5EED_F4EE;

/// The key `span`'s links are encoded with.
#[inline(always)]
pub(crate) fn key(span: &Span) -> u32 {
    if ENABLED {
        span.link_key.load(Ordering::Relaxed)
    } else {
        0
    }
}

/// A fresh key for a span being assigned: a hash of a per-process seed and a
/// counter, so keys differ between spans and between runs.
pub(crate) fn new_key() -> u32 {
    use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    if !ENABLED {
        return 0;
    }
    let n = COUNTER.fetch_add(1, Relaxed);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
        ^ (&COUNTER as *const AtomicU64).addr() as u64;
    let mut x = seed.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (x ^ (x >> 31)) as u32
}

/// Aborts on a decoded link that cannot be an offset in a frame.
#[inline(always)]
pub(crate) fn check_link(next: u32) {
    if ENABLED && next != NIL && next as usize >= FRAME_SIZE {
        fatal("batch-alloc: corrupted free list (a slot was written after it was freed?)");
    }
}

/// Where in a slot the freed mark goes: the second word, so that it does not
/// overlap the free-list link.
pub(crate) const MARK_OFFSET: usize = 4;

/// Aborts on a free of a pointer that is not the start of a slot.
#[inline(always)]
pub(crate) fn check_slot_start(span: &Span, offset: u32) {
    let size = span.slot_size.load(Ordering::Relaxed);
    if size == 0 || offset % size != 0 {
        fatal("batch-alloc: freed pointer is not the start of a slot");
    }
}

/// The mark a freed slot of `span` carries.
#[inline(always)]
pub(crate) fn freed_mark(span: &Span) -> u32 {
    CANARY ^ key(span)
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
    if ENABLED {
        // SAFETY: the caller's contract.
        unsafe {
            slot.wrapping_add(MARK_OFFSET)
                .cast::<u32>()
                .write_unaligned(0)
        };
    }
}
