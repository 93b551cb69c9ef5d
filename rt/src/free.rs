//! Freeing one slot: `dealloc` for a pointer inside the region.
//!
//! On the owner thread a free is a push onto the span's own free list: no
//! atomic instruction. From any other thread it is one compare-and-swap onto
//! the span's remote list; the owner takes that list back in one exchange.
//!
//! The owner's path is written for the instructions it compiles to: the
//! slot travels as scalars (a struct would be spilled to the stack before
//! the branch), every rare case (a box smaller than a link, the last slot
//! out, a span on the full queue, the hardened checks) is out of line, and
//! the common case touches the span's read-mostly line and the owner's line
//! only.

use crate::fatal::fatal;
use crate::heap;
use crate::large;
use crate::link::{
    self, check_slot_start, write_link, CHECK_SLOT_STARTS, HARDENED, LINK_BYTES, MARK_OFFSET,
};
use crate::outbox;
use crate::queues::after_local_free;
use crate::region::Located;
use crate::remote;
use crate::sync::Ordering;
use crate::thread;
use crate::types::{HeapRecord, OwnedHeap, OwnerWord, Span, NO_HEAP};

/// Frees the slot at `ptr`, located at `at`, that a box of `size` bytes
/// gives up, on whichever thread this is.
///
/// # Safety
/// - `ptr` is the start of a slot handed out in a `Box` (or by the scope's
///   allocation) of `size` bytes and not freed since, `at` locates it, and
///   the caller gives it up.
#[inline(always)]
pub(crate) unsafe fn free(ptr: *mut u8, at: Located, size: usize) {
    let span = at.span();
    let heap = heap::current();
    if HARDENED {
        // SAFETY: forwarded contract.
        return unsafe { free_rare(ptr, at.base, at.offset, size, heap) };
    }
    let owner = span.owner();
    if !owner.is_avail_of(heap) || size < LINK_BYTES {
        // SAFETY: forwarded contract.
        return unsafe { free_slow(ptr, at.base, at.offset, size, heap, owner) };
    }
    let offset = at.offset_in_frame();
    if CHECK_SLOT_STARTS {
        check_slot_start(span, offset);
    }
    // SAFETY: the span's owner is this thread's heap (a span's owner is
    // never the no-heap marker), and the allocator path holds no other
    // reference to its state.
    let sl = unsafe { span.local() };
    // SAFETY: the slot is given up by its box, whose pointer covers the
    // link's bytes (`size >= LINK_BYTES`).
    unsafe { write_link(ptr, sl.free_head, 0) };
    sl.free_head = offset;
    // One decrement counts and tests. A double free into a span with no
    // slot out wraps the count, which debug builds catch here (release
    // builds leave double frees to the `hardened` feature).
    let used = span.used().wrapping_sub(1);
    span.set_used(used);
    if used == 0 || (cfg!(debug_assertions) && used == u32::MAX) {
        // SAFETY: `heap` is what `current` returned, and owns the span.
        last_slot_freed(unsafe { heap::owned(heap) }, at, span, used);
    }
}

/// The span's last slot out came back (or, a double free, none was out).
/// Takes the slot's location rather than its frame, which the fast path
/// would otherwise keep in a register of its own.
#[cold]
#[inline(never)]
fn last_slot_freed(heap: OwnedHeap, at: Located, span: &Span, used: u32) {
    if used != 0 {
        fatal("batch-alloc: free into a span with no slot out (double free?)");
    }
    after_local_free(heap, at.frame(), span);
}

/// Every other free: a span on this thread's full queue, another thread's
/// span, a box smaller than a link. A free into this thread's own span
/// pushes onto its list here; the common remote one, into an owned span,
/// goes to this thread's outbox (no atomic instruction and no stack
/// frame); the rest go further out of line.
/// `owner` is the span's owner word as the caller read it: the decision
/// needs no second read, and the outbox's common case no span metadata.
///
/// # Safety
/// - As for [`free`], with `base` and `offset` locating `ptr`.
#[inline(never)]
unsafe fn free_slow(
    ptr: *mut u8,
    base: *mut u8,
    offset: usize,
    size: usize,
    heap: *mut HeapRecord,
    owner: OwnerWord,
) {
    if heap == NO_HEAP {
        // SAFETY: forwarded contract.
        return unsafe { free_without_heap(ptr, base, offset, size) };
    }
    let at = Located { base, offset };
    let span = at.span();
    if owner.heap() == heap {
        // `heap` is a real record here, and a large block's owner is null.
        // SAFETY: forwarded contract; this thread owns the span.
        return unsafe { free_own_rare(ptr, base, offset, size, heap, owner) };
    }
    if owner.can_chain(size) {
        if CHECK_SLOT_STARTS {
            check_slot_start(span, at.offset_in_frame());
        }
        // SAFETY: `heap` is what `current` returned (not `NO_HEAP`, tested
        // above), and the slot is out and given up by its box, whose pointer
        // covers the link.
        return unsafe { outbox::post(heap::owned(heap), at, span, ptr) };
    }
    // SAFETY: forwarded contract.
    unsafe { free_rare(ptr, base, offset, size, heap) }
}

/// A free into this thread's own span that the fast path left out: a box
/// smaller than a link, or a span on the full queue. Short boxes are common
/// (a parser's one- to three-byte identifiers in `Box<str>`: a tenth of
/// syn's frees), so they skip `free_rare`'s general checks. Out of line so
/// that `free_slow`'s outbox path keeps no stack frame.
///
/// # Safety
/// - As for [`free_slow`], and `owner`, the span's owner word, names `heap`.
#[inline(never)]
unsafe fn free_own_rare(
    ptr: *mut u8,
    base: *mut u8,
    offset: usize,
    size: usize,
    heap: *mut HeapRecord,
    owner: OwnerWord,
) {
    let at = Located { base, offset };
    let span = at.span();
    if CHECK_SLOT_STARTS {
        check_slot_start(span, at.offset_in_frame());
    }
    let slot = Slot { ptr, at, size };
    // Hardened builds never come here: their every free is `free_rare`'s.
    // SAFETY: forwarded contract; this thread owns the span.
    unsafe { free_owned(heap, span, slot, owner.on_full_queue()) };
}

/// A free on a thread that has no heap: a thread that never allocated from
/// a batch or scope, freeing slots other threads handed it. It gets a heap
/// here, once, so that this free and its later ones go through its outbox
/// and its exit sends what the outbox holds. Making the heap is safe at
/// this point: the free has touched nothing yet, and making one allocates
/// nothing through the global allocator and cannot unwind; its retirement
/// at thread exit is armed before it is made, also when this free comes
/// from the thread's exit cleanup (see `thread.rs`). A thread that cannot
/// have one (its heap has retired: it is exiting) pushes the slot with one
/// compare-and-swap.
///
/// Its arguments come first in `free_slow`'s and `free_rare`'s lists (the
/// heap, and `free_slow`'s owner word, after them), so that the calls are
/// plain jumps.
///
/// # Safety
/// - As for [`free_slow`], on a thread without a heap.
#[cold]
#[inline(never)]
unsafe fn free_without_heap(ptr: *mut u8, base: *mut u8, offset: usize, size: usize) {
    let at = Located { base, offset };
    if large::is_large(at) {
        // SAFETY: forwarded contract; a large block needs no heap.
        return unsafe { large::free(at) };
    }
    if let Some(heap) = thread::init_in_dealloc() {
        let heap = heap.as_ptr();
        let owner = at.span().owner();
        // SAFETY: forwarded contract; `heap` is now this thread's.
        return unsafe { free_slow(ptr, base, offset, size, heap, owner) };
    }
    let span = at.span();
    if span.owner().can_chain(size) {
        if CHECK_SLOT_STARTS {
            check_slot_start(span, at.offset_in_frame());
        }
        // SAFETY: the slot is out and given up by its box (the caller's
        // contract), whose pointer covers the link; only this push writes
        // it.
        let link = move |next| unsafe { write_link(ptr, next, 0) };
        // SAFETY: forwarded contract.
        if unsafe { remote::push_plain(span, at.offset_in_frame(), link) } {
            return;
        }
    }
    // SAFETY: forwarded contract.
    unsafe { free_rare(ptr, base, offset, size, NO_HEAP) }
}

/// A free into an armed, abandoned or unassigned span, a box smaller than a
/// link into another thread's span, or with the hardened checks (every
/// free, in hardened builds, the owner's own included).
///
/// # Safety
/// - As for [`free_slow`].
#[cfg_attr(not(feature = "hardened"), cold)]
#[inline(never)]
unsafe fn free_rare(
    ptr: *mut u8,
    base: *mut u8,
    offset: usize,
    size: usize,
    heap: *mut HeapRecord,
) {
    let slot = Slot {
        ptr,
        at: Located { base, offset },
        size,
    };
    if large::is_large(slot.at) {
        // SAFETY: forwarded contract.
        return unsafe { large::free(slot.at) };
    }
    let span = slot.at.span();
    let owner = span.owner();
    if owner.is_none() && span.slot_size.load(Ordering::Relaxed) == 0 {
        fatal("batch-alloc: free of a pointer into a span with no slots out (double free?)");
    }
    if CHECK_SLOT_STARTS {
        check_slot_start(span, slot.at.offset_in_frame());
    }
    // SAFETY: the slot is given up (the caller's contract).
    unsafe { slot.check_and_mark(span) };
    if owner.heap() == heap {
        // SAFETY: forwarded contract; this thread owns the span.
        unsafe { free_owned(heap, span, slot, owner.on_full_queue()) };
        return;
    }
    // A thread without a heap gets one, as in `free_without_heap` (the
    // hardened checks come here first).
    let heap = match heap == NO_HEAP && owner.can_chain(size) {
        true => thread::init_in_dealloc().map_or(NO_HEAP, OwnedHeap::as_ptr),
        false => heap,
    };
    if owner.can_chain(size) && heap != NO_HEAP {
        // SAFETY: as in `free_slow` (`heap` is this thread's, as `current`
        // returned or `init_in_dealloc` made it); the hardened checks are
        // done.
        return unsafe { outbox::post(heap::owned(heap), slot.at, span, ptr) };
    }
    let key = link::key(span);
    // SAFETY: the slot is given up by its box, and only this push writes
    // its link.
    let link = move |next| unsafe { slot.write_word(0, next ^ key) };
    // The common case first (a live owner, no notification): one plain
    // compare-and-swap.
    // SAFETY: forwarded contract.
    if !owner.is_none() && unsafe { remote::push_plain(span, slot.at.offset_in_frame(), link) } {
        return;
    }
    // SAFETY: forwarded contract.
    unsafe { remote::push_chain(slot.at.frame(), span, slot.at.offset_in_frame(), 1, link) };
}

/// A checked free on the owner thread that the fast path left out: the span
/// may be on the full queue (`full`), the box smaller than a link.
///
/// # Safety
/// - As for [`free`], and this thread owns `span`.
#[inline]
unsafe fn free_owned(heap: *mut HeapRecord, span: &Span, slot: Slot, full: bool) {
    // SAFETY: this thread owns the span; no other reference to its state.
    let sl = unsafe { span.local() };
    // SAFETY: the slot is given up by its box.
    unsafe { slot.write_word(0, sl.free_head ^ link::key(span)) };
    sl.free_head = slot.at.offset_in_frame();
    let Some(used) = span.used().checked_sub(1) else {
        fatal("batch-alloc: free into a span with no slot out (double free?)");
    };
    span.set_used(used);
    if used == 0 || full {
        // SAFETY: `heap` is this thread's (the caller's contract).
        after_local_free(unsafe { heap::owned(heap) }, slot.at.frame(), span);
    }
}

/// A slot a box gives up, for the paths that write to it byte by byte.
#[derive(Clone, Copy)]
struct Slot {
    ptr: *mut u8,
    at: Located,
    size: usize,
}

impl Slot {
    /// A pointer to byte `at` of the slot that may access it.
    ///
    /// The box's pointer covers only the box's bytes, and a pointer derived
    /// from the region may not access the box's bytes (`drop(b)` keeps the
    /// box's borrow protected for the whole call): each byte goes through
    /// the one that covers it.
    #[inline(always)]
    fn byte(self, at: usize) -> *mut u8 {
        if at < self.size {
            self.ptr.wrapping_add(at)
        } else {
            self.at.ptr().wrapping_add(at)
        }
    }

    /// Writes the link-wide word (a link, or the freed mark) at byte `at` of
    /// the slot.
    ///
    /// # Safety
    /// - The slot is given up by its box and nobody else uses it.
    unsafe fn write_word(self, at: usize, value: u32) {
        if at.wrapping_add(LINK_BYTES) <= self.size {
            // SAFETY: the box's pointer covers the word's bytes.
            unsafe {
                self.ptr
                    .wrapping_add(at)
                    .cast::<u32>()
                    .write_unaligned(value)
            };
        } else {
            for (i, byte) in value.to_ne_bytes().into_iter().enumerate() {
                // SAFETY: each byte through a pointer that covers it.
                unsafe { self.byte(at.wrapping_add(i)).write(byte) };
            }
        }
    }

    /// Reads the link-wide word at byte `at` of the slot.
    ///
    /// # Safety
    /// - As for [`Slot::write_word`].
    unsafe fn read_word(self, at: usize) -> u32 {
        if at.wrapping_add(LINK_BYTES) <= self.size {
            // SAFETY: the box's pointer covers the word's bytes.
            return unsafe { self.ptr.wrapping_add(at).cast::<u32>().read_unaligned() };
        }
        let mut bytes = [0; LINK_BYTES];
        for (i, byte) in bytes.iter_mut().enumerate() {
            // SAFETY: each byte through a pointer that covers it.
            *byte = unsafe { self.byte(at.wrapping_add(i)).read() };
        }
        u32::from_ne_bytes(bytes)
    }

    /// With the `hardened` feature: aborts if the slot carries the freed
    /// mark and a link, then marks it freed.
    ///
    /// # Safety
    /// - As for [`Slot::write_word`].
    unsafe fn check_and_mark(self, span: &Span) {
        if HARDENED {
            let mark = link::freed_mark(span);
            // SAFETY: forwarded contract.
            let (marked, first) = unsafe { (self.read_word(MARK_OFFSET), self.read_word(0)) };
            if marked == mark && link::could_be_link(span, first) {
                link::double_free();
            }
            // SAFETY: forwarded contract.
            unsafe { self.write_word(MARK_OFFSET, mark) };
        }
    }
}
