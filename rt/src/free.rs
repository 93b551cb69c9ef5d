//! Freeing one slot: `dealloc` for a pointer inside the region.
//!
//! On the owner thread a free is a push onto the span's own free list: no
//! atomic instruction. From any other thread it is one compare-and-swap onto
//! the span's remote list; the owner takes that list back in one exchange.

use crate::fatal::fatal;
use crate::hardening;
use crate::heap::{self, HeapRecord};
use crate::region::Located;
use crate::remote::{self, Pushed};
use crate::span::{owner_heap, write_link, Span};
use crate::sync::Ordering;

/// A slot a box gives up: the box's pointer, where it lies in the region,
/// and the box's size in bytes.
#[derive(Clone, Copy)]
pub(crate) struct Freed {
    pub ptr: *mut u8,
    pub at: Located,
    pub size: usize,
}

impl Freed {
    /// Rebuilds the record from the scalars an out-of-line path is passed
    /// (a struct would be spilled to the stack on the caller's hot path).
    #[inline(always)]
    fn from_parts(ptr: *mut u8, base: *mut u8, offset: usize, size: usize) -> Freed {
        Freed {
            ptr,
            at: Located { base, offset },
            size,
        }
    }

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
            self.at.base.wrapping_add(self.at.offset + at)
        }
    }

    /// Writes the 4-byte word at byte `at` of the slot.
    ///
    /// # Safety
    /// - The slot is given up by its box and nobody else uses it.
    #[inline(always)]
    unsafe fn write_word(self, at: usize, value: u32) {
        if at + 4 <= self.size {
            // SAFETY: the box's pointer covers the four bytes.
            unsafe {
                self.ptr
                    .wrapping_add(at)
                    .cast::<u32>()
                    .write_unaligned(value)
            };
        } else {
            for (i, byte) in value.to_ne_bytes().into_iter().enumerate() {
                // SAFETY: each byte through a pointer that covers it.
                unsafe { self.byte(at + i).write(byte) };
            }
        }
    }

    /// Reads the 4-byte word at byte `at` of the slot.
    ///
    /// # Safety
    /// - As for [`Freed::write_word`].
    #[inline(always)]
    unsafe fn read_word(self, at: usize) -> u32 {
        if at + 4 <= self.size {
            // SAFETY: the box's pointer covers the four bytes.
            return unsafe { self.ptr.wrapping_add(at).cast::<u32>().read_unaligned() };
        }
        let mut bytes = [0; 4];
        for (i, byte) in bytes.iter_mut().enumerate() {
            // SAFETY: each byte through a pointer that covers it.
            *byte = unsafe { self.byte(at + i).read() };
        }
        u32::from_ne_bytes(bytes)
    }

    /// Writes the slot's free-list link, encoded with `key`.
    ///
    /// # Safety
    /// - As for [`Freed::write_word`].
    #[inline(always)]
    unsafe fn write_link(self, next: u32, key: u32) {
        if self.size >= 4 {
            // SAFETY: the box's pointer covers the link's four bytes.
            unsafe { write_link(self.ptr, next, key) };
        } else {
            // SAFETY: forwarded contract.
            unsafe { self.write_small_link(next ^ key) };
        }
    }

    /// The link of a box smaller than a link, out of line so that the
    /// common path computes no byte pointers.
    ///
    /// # Safety
    /// - As for [`Freed::write_word`].
    #[cold]
    #[inline(never)]
    unsafe fn write_small_link(self, encoded: u32) {
        // SAFETY: forwarded contract.
        unsafe { self.write_word(0, encoded) };
    }

    /// With the `hardened` feature: aborts unless the pointer starts a slot
    /// not already freed, and marks the slot freed.
    ///
    /// # Safety
    /// - As for [`Freed::write_word`].
    #[inline(always)]
    unsafe fn check_and_mark(self, span: &Span) {
        if hardening::ENABLED {
            hardening::check_slot_start(span, self.at.offset_in_frame());
            let mark = hardening::freed_mark(span);
            // SAFETY: forwarded contract.
            if unsafe { self.read_word(hardening::MARK_OFFSET) } == mark {
                hardening::double_free();
            }
            // SAFETY: forwarded contract.
            unsafe { self.write_word(hardening::MARK_OFFSET, mark) };
        }
    }
}

/// Frees the slot a box gives up, on whichever thread this is.
///
/// # Safety
/// - `freed.ptr` is the start of a slot handed out in a `Box` of
///   `freed.size` bytes and not freed since, and the caller gives it up.
#[inline(always)]
pub(crate) unsafe fn free(freed: Freed) {
    let span = freed.at.span();
    let heap = heap::current();
    if span.owner.load(Ordering::Relaxed) == heap {
        // SAFETY: the span's owner is this thread's heap (a span's owner is
        // never the no-heap marker), and it is not on the full queue (the
        // owner word would be tagged); the slot contract is forwarded.
        if unsafe { free_local(span, freed) } == 0 {
            // SAFETY: records are never freed, and this one is this thread's.
            heap::after_local_free(unsafe { &*heap }, freed.at.frame(), span);
        }
    } else {
        // Scalars, not the struct: passing it would spill it to the stack on
        // the hot path, before the branch.
        // SAFETY: forwarded contract.
        unsafe { free_slow(heap, freed.ptr, freed.at.base, freed.at.offset, freed.size) }
    }
}

/// Pushes the slot onto the span's own free list and returns how many slots
/// are still out.
///
/// # Safety
/// - As for [`free`], and this thread owns `span`.
#[inline(always)]
unsafe fn free_local(span: &Span, freed: Freed) -> u32 {
    let offset = freed.at.offset_in_frame();
    debug_check_slot(span, offset);
    // SAFETY: the slot is given up (the caller's contract).
    unsafe { freed.check_and_mark(span) };
    // SAFETY: this thread owns the span, and the allocator path holds no
    // other reference to its state.
    let sl = unsafe { span.local() };
    // SAFETY: the slot is given up by its box.
    unsafe { freed.write_link(sl.free_head, hardening::key(span)) };
    sl.free_head = offset;
    let used = span.used.load(Ordering::Relaxed) - 1;
    span.used.store(used, Ordering::Relaxed);
    used
}

/// A free into a full span of this thread, or a free from another thread.
///
/// # Safety
/// - As for [`free`].
#[inline(never)]
unsafe fn free_slow(
    heap: *mut HeapRecord,
    ptr: *mut u8,
    base: *mut u8,
    offset: usize,
    size: usize,
) {
    let at = Located { base, offset };
    let span = at.span();
    let owner = span.owner.load(Ordering::Relaxed);
    if owner_heap(owner) == heap {
        // SAFETY: forwarded contract; the owner word names this heap.
        unsafe { free_into_full(heap, ptr, base, offset, size) };
        return;
    }
    // The common remote free: an owned, unarmed span and a box that covers
    // the link. Everything else goes out of line.
    if !owner.is_null() && size >= 4 {
        debug_check_slot(span, at.offset_in_frame());
        let freed = Freed::from_parts(ptr, base, offset, size);
        // SAFETY: the slot is given up (the caller's contract).
        unsafe { freed.check_and_mark(span) };
        let key = hardening::key(span);
        // SAFETY: the slot is out and given up by its box (the caller's
        // contract), whose pointer covers the link; only this push writes it.
        let link = move |next| unsafe { write_link(ptr, next, key) };
        // SAFETY: forwarded contract.
        if unsafe { remote::push_plain(span, at.offset_in_frame(), link) } {
            return;
        }
        // SAFETY: forwarded contract; the slot is already checked.
        unsafe { push_remote_rare(span, freed) };
        return;
    }
    // SAFETY: forwarded contract.
    unsafe { free_remote_rare(ptr, base, offset, size) };
}

/// A free into a span of this thread's full queue: back to the avail queue.
///
/// # Safety
/// - As for [`free`], and this thread owns `span`.
#[cold]
#[inline(never)]
unsafe fn free_into_full(
    heap: *mut HeapRecord,
    ptr: *mut u8,
    base: *mut u8,
    offset: usize,
    size: usize,
) {
    let freed = Freed::from_parts(ptr, base, offset, size);
    let span = freed.at.span();
    // SAFETY: forwarded contract.
    unsafe { free_local(span, freed) };
    // SAFETY: records are never freed, and this one is this thread's.
    heap::after_local_free(unsafe { &*heap }, freed.at.frame(), span);
}

/// Any other remote free: into a span that is armed, abandoned, or (a
/// double free) not assigned at all, of a box smaller than a link, or with
/// the hardening checks.
///
/// # Safety
/// - As for [`free`].
#[cold]
#[inline(never)]
unsafe fn free_remote_rare(ptr: *mut u8, base: *mut u8, offset: usize, size: usize) {
    let freed = Freed::from_parts(ptr, base, offset, size);
    let span = freed.at.span();
    if span.slot_size.load(Ordering::Relaxed) == 0 {
        fatal("batch-alloc: free of a pointer into a span with no slots out (double free?)");
    }
    debug_check_slot(span, freed.at.offset_in_frame());
    // SAFETY: the slot is given up (the caller's contract).
    unsafe { freed.check_and_mark(span) };
    // SAFETY: forwarded contract.
    unsafe { push_remote_rare(span, freed) };
}

/// Pushes a checked slot onto the remote list of a span in any state.
///
/// # Safety
/// - As for [`free`], and the slot has been checked and marked.
#[cold]
#[inline(never)]
unsafe fn push_remote_rare(span: &Span, freed: Freed) {
    let key = hardening::key(span);
    // SAFETY: the slot is given up by its box, and only this push writes
    // its link.
    let link = move |next| unsafe { freed.write_link(next, key) };
    // SAFETY: forwarded contract.
    let pushed = unsafe { remote::push_chain(span, freed.at.offset_in_frame(), 1, link) };
    after_remote_push(pushed, freed.at.frame(), span);
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
pub(crate) fn notify_owner(frame: u32, span: &Span) {
    let owner = owner_heap(span.owner.load(Ordering::Acquire));
    // SAFETY: the owner is alive while NOTIFYING is set (see above), and
    // records are never freed.
    let mailbox = unsafe { &(*owner).mailbox };
    let mut top = mailbox.load(Ordering::Relaxed);
    loop {
        span.mail_next.store(top, Ordering::Relaxed);
        crate::sync::window();
        // Release: the link is visible to the owner's acquiring swap.
        match mailbox.compare_exchange_weak(top, frame + 1, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => break,
            Err(seen) => top = seen,
        }
    }
    crate::sync::window();
    remote::notified(span);
}

/// In debug builds, aborts on a pointer that is not the start of a slot.
#[inline(always)]
fn debug_check_slot(span: &Span, offset: u32) {
    if cfg!(debug_assertions) && !hardening::ENABLED {
        let size = span.slot_size.load(Ordering::Relaxed);
        if size == 0 || offset % size != 0 {
            fatal("batch-alloc: freed pointer is not the start of a slot");
        }
    }
}
