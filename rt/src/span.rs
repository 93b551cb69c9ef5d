//! Span metadata: one record per frame, kept in an array beside the frames so
//! that a span's slots start at its frame's first byte and no slot carries a
//! header.
//!
//! Counting equation, for a span assigned to a heap:
//!
//! ```text
//! slots == used + length of the free list + fresh
//! used  == slots in batch runs + slots in user boxes (including those freed
//!          by other threads and still on the remote list)
//! ```

use core::cell::UnsafeCell;

use crate::hardening;
use crate::heap::HeapRecord;
use crate::sync::{AtomicPtr, AtomicU32, AtomicU64, Ordering};

/// Which of its heap's class queues a span is on.
pub(crate) const QUEUE_NONE: u8 = 0;
/// Has slots to reserve (or is empty and kept for reuse).
pub(crate) const QUEUE_AVAIL: u8 = 1;
/// Every slot is out; armed so that a remote free tells the owner.
pub(crate) const QUEUE_FULL: u8 = 2;

/// The metadata of one frame. All-zero bytes are a valid unassigned span: the
/// array comes from zero-filled memory.
#[repr(C, align(64))]
pub(crate) struct Span {
    /// The cross-thread free list and the span's state flags, one word so
    /// that a push and a state change are one compare-and-swap. See
    /// [`crate::remote`].
    pub remote: AtomicU64,
    /// The heap that owns the span, with the low bit set while the span is on
    /// the heap's full queue (see [`owner_word`]); null while pooled or
    /// abandoned. `dealloc` compares it with the current heap to pick the
    /// owner-local path.
    pub owner: AtomicPtr<HeapRecord>,
    /// Slots out of the span (see the counting equation). Written only by the
    /// owner, or by whoever reclaims an abandoned span, with a plain load and
    /// store; atomic so that `stats()` may read it from any thread.
    pub used: AtomicU32,
    /// Bytes per slot; 0 while the span is unassigned. Fixed while any slot
    /// is out, so `realloc` may read it from any thread.
    pub slot_size: AtomicU32,
    /// Link in a heap's mailbox: frame index + 1, or 0.
    pub mail_next: AtomicU32,
    /// Link in the shared pool of empty frames: frame index + 1, or 0.
    pub pool_next: AtomicU32,
    /// The key free-list links are encoded with (0, no encoding, unless the
    /// `hardened` feature is on). Set before any slot is handed out.
    pub link_key: AtomicU32,
    /// State only the owner touches (or the single thread that holds the
    /// span while it is unowned: the one that pools or reclaims it).
    local: UnsafeCell<SpanLocal>,
}

// SAFETY: the shared fields are atomics; `local` is touched by one thread at a
// time, handed over through the pool's and the remote word's
// release/acquire operations.
unsafe impl Sync for Span {}

/// A span's owner-only state. Offsets are bytes from the frame's start.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SpanLocal {
    /// Size class of the slots.
    pub class: u8,
    /// `QUEUE_*`: which class queue of the owner holds the span.
    pub queue: u8,
    /// Whether the frame's memory is resident while it sits in the pool.
    pub resident: bool,
    /// Slots in the span.
    pub slots: u32,
    /// Start of the first slot never handed out since the span was last empty.
    pub bump: u32,
    /// Slots from `bump` to the end of the span.
    pub fresh: u32,
    /// First slot of the owner's free list, or [`NIL`].
    pub free_head: u32,
    /// Neighbours in the class queue: frame index + 1, or 0.
    pub prev: u32,
    pub next: u32,
}

impl Span {
    /// A span outside the region, for the loom models: `used` slots of
    /// `slot_size` bytes out, owned by `owner`.
    #[cfg(loom)]
    pub(crate) fn for_model(owner: *mut HeapRecord, slot_size: u32, used: u32) -> Span {
        Span {
            remote: AtomicU64::new(0),
            owner: AtomicPtr::new(owner),
            used: AtomicU32::new(used),
            slot_size: AtomicU32::new(slot_size),
            mail_next: AtomicU32::new(0),
            pool_next: AtomicU32::new(0),
            link_key: AtomicU32::new(0),
            local: UnsafeCell::new(SpanLocal::default()),
        }
    }

    /// The owner-only state.
    ///
    /// # Safety
    /// - The caller is the span's owner thread, or holds the span while it is
    ///   unowned (pooling or reclaiming it).
    /// - No other reference returned by this method for this span is live.
    #[allow(clippy::mut_from_ref)]
    #[inline]
    pub(crate) unsafe fn local(&self) -> &mut SpanLocal {
        // SAFETY: exclusive access is the caller's contract.
        unsafe { &mut *self.local.get() }
    }

    /// Adds `delta` to `used`. Owner only: a plain load and store, no
    /// read-modify-write instruction.
    #[inline]
    pub(crate) fn add_used(&self, delta: i64) {
        let used = self.used.load(Ordering::Relaxed) as i64 + delta;
        debug_assert!(
            (0..=u32::MAX as i64).contains(&used),
            "span used count out of range: {used}"
        );
        self.used.store(used as u32, Ordering::Relaxed);
    }
}

/// The owner word of a span of `heap`: the heap's address, with the low bit
/// set when the span is on the full queue. The owner-local free path
/// compares the word with the current heap, so a free into a full span,
/// which must move it back to the avail queue, falls to the slow path
/// without a test of its own.
pub(crate) fn owner_word(heap: *mut HeapRecord, full: bool) -> *mut HeapRecord {
    heap.map_addr(|a| a | full as usize)
}

/// The heap an owner word names.
pub(crate) fn owner_heap(word: *mut HeapRecord) -> *mut HeapRecord {
    word.map_addr(|a| a & !1)
}

/// The end of a free list.
pub(crate) const NIL: u32 = u32::MAX;

impl SpanLocal {
    /// The state of a span just assigned to a class, or emptied: no free
    /// list, every slot fresh.
    pub(crate) fn fresh(class: u8, slots: u32, resident: bool) -> SpanLocal {
        SpanLocal {
            class,
            resident,
            slots,
            fresh: slots,
            free_head: NIL,
            ..SpanLocal::default()
        }
    }

    /// Every slot free again: forget the free list and start over with one
    /// contiguous run.
    pub(crate) fn restart(&mut self) {
        self.bump = 0;
        self.fresh = self.slots;
        self.free_head = NIL;
    }

    /// Nothing left to reserve.
    pub(crate) fn exhausted(&self) -> bool {
        self.free_head == NIL && self.fresh == 0
    }
}

/// Reads the free-list link stored in the first bytes of a free slot,
/// decoding it with the span's link key (see [`crate::hardening`]).
///
/// # Safety
/// - `slot` points to a free slot, at least 4-byte aligned, whose link was
///   written by [`write_link`] and is visible to this thread.
#[inline]
pub(crate) unsafe fn read_link(slot: *const u8, key: u32) -> u32 {
    // SAFETY: the caller's contract.
    let next = unsafe { slot.cast::<u32>().read() } ^ key;
    hardening::check_link(next);
    next
}

/// Writes a free-list link (the offset of the next free slot) into a free
/// slot, encoded with the span's link key.
///
/// # Safety
/// - `slot` points to a slot nobody else reads or writes now, at least
///   4-byte aligned, with provenance over the link's four bytes.
#[inline]
pub(crate) unsafe fn write_link(slot: *mut u8, next: u32, key: u32) {
    // SAFETY: the caller's contract.
    unsafe { slot.cast::<u32>().write(next ^ key) }
}
