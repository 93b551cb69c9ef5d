//! Where a freed slot goes: [`free`] decides, in one place, and does the
//! owner's side of it. The other threads' side is `outbox.rs` (chains of
//! frees sent back to their spans) and `remote.rs` (the push onto a span's
//! remote list, and how the owner takes it back).
//!
//! The owner's fast free is written for the instructions it compiles to:
//! the common case touches the span's read-mostly line and the owner's
//! line only, every rare case (a box smaller than a link, the last slot
//! out, a span on the full queue, the hardened checks) is out of line, and
//! each out-of-line step takes the slot as `free` holds it (the box's
//! pointer, its size, its location: four registers, in the order
//! `__rust_dealloc` receives the first two), so that reaching it is a
//! jump.

use crate::base::fatal::fatal;
use crate::base::sync::Ordering;
use crate::heap::outbox;
use crate::heap::queues::{after_local_free, after_local_free_full};
use crate::heap::remote;
use crate::heap::sweep;
use crate::heap::this_thread;
use crate::heap::thread;
use crate::memory::large;
use crate::memory::link::{
    self, check_slot_start, write_link, CHECK_SLOT_STARTS, HARDENED, LINK_BYTES, MARK_OFFSET,
};
use crate::memory::region::Located;
use crate::memory::types::{HeapRecord, OwnedHeap, Span, NO_HEAP, ON_FULL_QUEUE};

/// Frees the slot at `ptr`, located at `at` in the frame whose metadata is
/// `span`, that a box of `size` bytes gives up, on whichever thread this
/// is: the one place that decides where a freed slot goes. Whose the span
/// is, seen from this thread's heap (one word: [`Whose`]), and the box's
/// size pick one of five cases, tested in this order, as mimalloc's
/// `mi_free_ex` picks one of four. The two common ones, the owner's fast
/// free and the remote free into a chain, are done here; each other is one
/// call. The first is inline in `dealloc`; the others are decided out of
/// line (`elsewhere`, inside), since their tests, inlined, made `dealloc`
/// too large to inline into its callers.
///
/// # Safety
/// - `ptr` is the start of a slot handed out in a `Box` (or by a scope's
///   allocation) of `size` bytes and not freed since, `at` and `span`
///   locate it, and the caller gives it up.
#[inline(always)]
pub(crate) unsafe fn free(ptr: *mut u8, at: Located, span: &Span, size: usize) {
    let heap = this_thread::current();
    let whose = Whose(span.owner_xor(heap));
    if !HARDENED && whose.is_avail_owner() && size >= LINK_BYTES {
        // 1. The owner's fast free: this thread's heap owns the span, which
        // is on its avail queue, and the box's own bytes hold a link. The
        // slot goes onto the span's own free list: no atomic instruction,
        // and no call but when the span's last slot comes back.
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
        // One decrement counts and tests. A double free into a span with
        // no slot out wraps the count, which debug builds catch here
        // (release builds leave double frees to the `hardened` feature).
        let used = span.used().wrapping_sub(1);
        span.set_used(used);
        if used == 0 || (cfg!(debug_assertions) && used == u32::MAX) {
            // SAFETY: `heap` is what `current` returned, and owns the span.
            last_slot_freed(unsafe { this_thread::owned(heap) }, at, span, used);
        }
        return;
    }

    /// Every other case. `whose` is what `free` read: the decision needs no
    /// second read of the span, and the remote free's common case no other
    /// span metadata.
    ///
    /// # Safety
    /// - As for [`free`], with `heap` what `this_thread::current` returned.
    #[inline(never)]
    unsafe fn elsewhere(
        ptr: *mut u8,
        size: usize,
        at: Located,
        heap: *mut HeapRecord,
        whose: Whose,
    ) {
        if HARDENED {
            // Every free is checked first, and none takes the first case,
            // which writes its link unencoded.
            // SAFETY: forwarded contract.
            unsafe { check_freed(ptr, size, at) };
        }
        if whose.is_owner() {
            // 2. The owner's rare free: a span on this heap's full queue,
            // which moves back to the avail queue, or a box smaller than a
            // link, whose link is written byte by byte (a parser's one- to
            // three-byte identifiers in `Box<str>`: a tenth of syn's
            // frees); in hardened builds, every free of the owner.
            // SAFETY: forwarded contract; `heap` owns the span, so it is a
            // real record (a span's owner is one, or null), this thread's.
            return unsafe { free_owned_rare(ptr, size, at, heap, whose.on_full_queue()) };
        }
        if heap == NO_HEAP {
            // 3. A thread with no heap: one that never allocated from a
            // batch or scope, freeing slots other threads handed it. It
            // gets a heap, then takes case 4 or 5; one that cannot (it is
            // exiting) pushes the slot at once.
            // SAFETY: forwarded contract.
            return unsafe { free_without_heap(ptr, size, at) };
        }
        if !whose.is_nobody(heap) {
            // 4. A remote free: another heap owns the span. The slot joins
            // this thread's outbox chain for the span, with no atomic
            // read-modify-write; the chain goes back in one
            // compare-and-swap. A span that is armed (its owner waits for a
            // free) or abandoned when its chain would start gets the free
            // pushed at once instead (`outbox.rs`).
            if CHECK_SLOT_STARTS {
                check_slot_start(at.span(), at.offset_in_frame());
            }
            if size >= LINK_BYTES {
                // SAFETY: `heap` is what `current` returned, not `NO_HEAP`
                // (tested above): this thread's, and records are never
                // freed. The slot is out and given up by its box, whose
                // pointer covers the link, and only this free writes it.
                return unsafe { outbox::post(&*heap, at, link::writer(ptr, at.span())) };
            }
            // A box smaller than a link (a parser's one- to three-byte
            // strings): its link is written byte by byte.
            // SAFETY: as above, but for the link, which `Slot` writes.
            return unsafe { post_smaller_than_link(ptr, size, at, heap) };
        }
        // 5. Pushed at once onto the span's remote list: a span no heap
        // owns (abandoned by its exited owner, which the free counts down;
        // a large block, whose frames go back).
        // SAFETY: forwarded contract.
        unsafe { free_pushed(ptr, size, at) }
    }

    // SAFETY: forwarded contract.
    unsafe { elsewhere(ptr, size, at, heap, whose) }
}

/// Whose a span is, seen from the heap of the thread that frees into it
/// (or [`NO_HEAP`]): the span's owner word XOR that heap's address
/// ([`Span::owner_xor`]), as mimalloc's `mi_free_ex` XORs a page's thread
/// id with its caller's, so that [`free`] tells its cases apart from one
/// load with integer comparisons:
///
/// | word | whose |
/// |---|---|
/// | 0 | this heap's, on its avail queue |
/// | [`ON_FULL_QUEUE`] | this heap's, on its full queue |
/// | the heap's own address | nobody's: the owner word is null |
/// | anything else | another heap's |
///
/// (A heap's address is 64-byte aligned, and `NO_HEAP` owns nothing, so
/// the rows cannot meet.)
#[repr(transparent)]
#[derive(Clone, Copy)]
struct Whose(usize);

impl Whose {
    /// This thread's heap owns the span, on its avail queue.
    #[inline(always)]
    fn is_avail_owner(self) -> bool {
        self.0 == 0
    }

    /// This thread's heap owns the span, on either queue.
    #[inline(always)]
    fn is_owner(self) -> bool {
        self.0 <= ON_FULL_QUEUE
    }

    /// This thread's heap owns the span, on its full queue.
    #[inline(always)]
    fn on_full_queue(self) -> bool {
        self.0 == ON_FULL_QUEUE
    }

    /// No heap owns the span (pooled, abandoned, a large block), seen from
    /// `heap`.
    #[inline(always)]
    fn is_nobody(self, heap: *mut HeapRecord) -> bool {
        self.0 == heap.addr()
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

/// [`free`]'s case 2: a free into this thread's own span that the fast
/// free leaves out. Out of line, so that `free`'s remote case keeps no
/// stack frame.
///
/// # Safety
/// - As for [`free`], and `heap`, this thread's heap, owns the span, on its
///   full queue if `full`.
#[inline(never)]
pub(crate) unsafe fn free_owned_rare(
    ptr: *mut u8,
    size: usize,
    at: Located,
    heap: *mut HeapRecord,
    full: bool,
) {
    let span = at.span();
    if CHECK_SLOT_STARTS {
        check_slot_start(span, at.offset_in_frame());
    }
    // SAFETY: `heap` is this thread's (the caller's contract).
    let heap = unsafe { this_thread::owned(heap) };
    // A span on the full queue is reached under the heap's lock (a sweep
    // does not take it: this slot is out of it).
    let parked = full.then(|| heap.lock_full());
    let slot = Slot { ptr, at, size };
    // SAFETY: this thread's heap owns the span (the caller's contract), and
    // holds the lock if it is on the full queue.
    let sl = unsafe { span.local() };
    // SAFETY: the slot is given up by its box.
    unsafe { slot.write_word(0, sl.free_head ^ link::key(span)) };
    sl.free_head = at.offset_in_frame();
    let Some(used) = span.used().checked_sub(1) else {
        fatal("batch-alloc: free into a span with no slot out (double free?)");
    };
    span.set_used(used);
    match parked {
        Some(parked) => after_local_free_full(heap, parked, at.frame(), span),
        None if used == 0 => after_local_free(heap, at.frame(), span),
        None => {}
    }
}

/// [`free`]'s case 3: a free on a thread that has no heap. It gets one
/// here, once, so that this free and its later ones go through its outbox
/// and its exit sends what the outbox holds. Making the heap is safe at
/// this point: the free has touched nothing yet, and making one allocates
/// nothing through the global allocator and cannot unwind; its retirement
/// at thread exit is armed before it is made, also when this free comes
/// from the thread's exit cleanup (see `thread.rs`). A large block needs
/// no heap; a thread that cannot have one (its heap has retired: it is
/// exiting) pushes the slot with one compare-and-swap.
///
/// # Safety
/// - As for [`free`], on a thread without a heap.
#[cold]
#[inline(never)]
unsafe fn free_without_heap(ptr: *mut u8, size: usize, at: Located) {
    if large::is_large(at) {
        // SAFETY: forwarded contract; a large block needs no heap.
        return unsafe { free_large(at) };
    }
    let span = at.span();
    let heap = thread::init_in_dealloc();
    if span.owner().is_none() {
        // SAFETY: forwarded contract.
        return unsafe { free_pushed(ptr, size, at) };
    }
    if CHECK_SLOT_STARTS {
        check_slot_start(span, at.offset_in_frame());
    }
    // SAFETY: the slot is given up by its box, and only what this free
    // starts writes its link.
    let link = unsafe { Slot { ptr, at, size }.link_writer(span) };
    match heap {
        // SAFETY: forwarded contract; `heap` is now this thread's.
        Some(heap) => unsafe { outbox::post(&heap, at, link) },
        // SAFETY: forwarded contract.
        None => unsafe { remote::push_one(at, span, link) },
    }
}

/// [`free`]'s case 4 for a box smaller than a link: into the outbox's
/// chain like any other, its link written byte by byte.
///
/// # Safety
/// - As for [`free`], with `heap` this thread's heap, not `NO_HEAP`, and
///   the span another heap's.
#[cold]
#[inline(never)]
unsafe fn post_smaller_than_link(ptr: *mut u8, size: usize, at: Located, heap: *mut HeapRecord) {
    // SAFETY: the slot is given up by its box, and only what this free
    // starts writes its link.
    let link = unsafe { Slot { ptr, at, size }.link_writer(at.span()) };
    // SAFETY: forwarded contract; records are never freed.
    unsafe { outbox::post(&*heap, at, link) }
}

/// [`free`]'s case 5: a free pushed at once onto the span's remote list
/// (or, for a large block, its frames given back).
///
/// # Safety
/// - As for [`free`], into a span this thread's heap does not own.
#[cfg_attr(not(feature = "hardened"), cold)]
#[inline(never)]
unsafe fn free_pushed(ptr: *mut u8, size: usize, at: Located) {
    if large::is_large(at) {
        // SAFETY: forwarded contract.
        return unsafe { free_large(at) };
    }
    let span = at.span();
    let owner = span.owner();
    check_assigned(span);
    if CHECK_SLOT_STARTS {
        check_slot_start(span, at.offset_in_frame());
    }
    // SAFETY: the slot is given up by its box, and only this push writes
    // its link.
    let link = unsafe { Slot { ptr, at, size }.link_writer(span) };
    if owner.is_none() {
        // SAFETY: forwarded contract.
        return unsafe { remote::push_chain(at.frame(), span, at.offset_in_frame(), 1, link) };
    }
    // SAFETY: forwarded contract.
    unsafe { remote::push_one(at, span, link) }
}

/// Frees a large block, on any thread: its frames go back to the pool's
/// free extents, and the free is one of the events sweeps wait for
/// (`sweep.rs`).
///
/// # Safety
/// - As for `large::free`.
unsafe fn free_large(at: Located) {
    // SAFETY: forwarded contract.
    unsafe { large::free(at) };
    sweep::at_event();
}

/// Aborts on a free into a span that no heap owns and that has no slots: a
/// double free after the span went back to the pool.
fn check_assigned(span: &Span) {
    if span.owner().is_none() && span.slot_size.load(Ordering::Relaxed) == 0 {
        fatal("batch-alloc: free of a pointer into a span with no slots out (double free?)");
    }
}

/// With the `hardened` feature, before [`free`] picks its case: aborts on
/// a free of a pointer that is not the start of a slot, or of a slot that
/// carries the freed mark and a link (a double free), then marks the slot
/// freed. Large blocks carry no mark.
///
/// # Safety
/// - As for [`free`].
#[inline(never)]
unsafe fn check_freed(ptr: *mut u8, size: usize, at: Located) {
    if large::is_large(at) {
        return;
    }
    let span = at.span();
    check_assigned(span);
    check_slot_start(span, at.offset_in_frame());
    let slot = Slot { ptr, at, size };
    let mark = link::freed_mark(span);
    // SAFETY: the slot is given up by its box (the caller's contract).
    let (marked, first) = unsafe { (slot.read_word(MARK_OFFSET), slot.read_word(0)) };
    if marked == mark && link::could_be_link(span, first) {
        link::double_free();
    }
    // SAFETY: as above.
    unsafe { slot.write_word(MARK_OFFSET, mark) };
}

/// A slot a box gives up, for the paths that write to it byte by byte.
#[derive(Clone, Copy)]
struct Slot {
    ptr: *mut u8,
    at: Located,
    size: usize,
}

impl Slot {
    /// What writes the slot's link, encoded with `span`'s key (the slot's
    /// span), when a push or a chain gives it the next slot's offset.
    ///
    /// # Safety
    /// - The slot is given up by its box, and only the push or chain the
    ///   writer is given to writes its link.
    #[inline(always)]
    unsafe fn link_writer(self, span: &Span) -> impl FnMut(u32) + Copy {
        let key = link::key(span);
        // SAFETY: the caller's contract.
        move |next| unsafe { self.write_word(0, next ^ key) }
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
}
