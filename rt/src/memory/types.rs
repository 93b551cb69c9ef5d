//! The runtime's shared structures, in one place, the way mimalloc keeps its
//! types in `types.h`: a span's metadata, a heap record, and the constants
//! they are read with. Behaviour lives in the layers above; this module
//! only says what the fields hold and which thread may touch them.
//!
//! Counting equation, for a span assigned to a heap:
//!
//! ```text
//! slots == used + length of the free list + fresh
//! used  == slots in runs (a heap's or a batch's) + slots handed out
//!          (including those freed by other threads and still on the
//!          remote list or in their outboxes)
//! ```
//!
//! Once a span is abandoned, its remote word counts the slots still out
//! instead (see `remote.rs`), and `used` is no longer read.

use core::cell::UnsafeCell;
use core::marker::PhantomData;
#[cfg(not(loom))]
use core::mem::offset_of;
use core::ptr;

use crate::base::class::{class_for, CLASSES, NUM_CLASSES};
use crate::base::config::MAX_SMALL_SIZE;
#[cfg(doc)]
use crate::base::frame::Frame;
use crate::base::locks;
use crate::base::sync::{AtomicPtr, AtomicU32, AtomicU64, HeapLock, IndexStack, Ordering};
use crate::memory::cursor::Cursor;

/// The end of a free list.
pub(crate) const NIL: u32 = u32::MAX;

/// Which of its heap's class queues a span is on.
pub(crate) const QUEUE_NONE: u8 = 0;
/// Has slots to reserve (or is empty and kept for reuse).
pub(crate) const QUEUE_AVAIL: u8 = 1;
/// Every slot is out; armed so that a remote free tells the owner.
pub(crate) const QUEUE_FULL: u8 = 2;

/// The metadata of one frame, on three cache lines: the one other threads
/// write (remote frees and notifications), the one every free reads and
/// that changes only when the span changes hands or queues, and the one
/// only the owner writes, so that a remote free does not take the owner's
/// line away from it. A fourth, for the pool, makes the size a power of two,
/// so that finding a frame's metadata is a shift (the array is virtual
/// memory, committed 16 KiB per 4 MiB of frames). All-zero bytes are a valid
/// unassigned span: the array comes from zero-filled memory.
#[repr(C, align(64))]
pub(crate) struct Span {
    // ---- written by other threads ----
    /// The cross-thread free list and the span's state flags, one word so
    /// that a push and a state change are one compare-and-swap. See
    /// `remote.rs`.
    pub remote: AtomicU64,
    /// Link in a heap's mailbox: a [`Frame::link`], or 0. Written by the
    /// thread that notifies the owner.
    pub mail_next: AtomicU32,
    _remote_line: [u8; 64 - 12],

    // ---- read by every free; written when the span changes hands ----
    /// The span's [`OwnerWord`], read and written through
    /// [`Span::owner`] and [`Span::set_owner`]. `dealloc` compares it with
    /// the current heap to pick the owner-local path.
    owner: AtomicPtr<HeapRecord>,
    /// Bytes per slot; 0 while the span is unassigned. Fixed while any slot
    /// is out, so `realloc` may read it from any thread.
    pub slot_size: AtomicU32,
    /// The key free-list links are encoded with (0, no encoding, unless the
    /// `hardened` feature is on). Set before any slot is handed out.
    pub link_key: AtomicU32,
    /// Link in the shared pool of empty frames: a [`Frame::link`], or 0.
    pub pool_next: AtomicU32,
    _fixed_line: [u8; 64 - 8 - 12],

    // ---- written by the owner only ----
    /// Slots out of the span (see the counting equation). Written only by
    /// the owner, with a plain load and store; atomic so that `stats()` may
    /// read it from any thread.
    pub used: AtomicU32,
    /// State only the owner touches (or the single thread that holds the
    /// span while it is unowned: the one that pools or reclaims it).
    local: UnsafeCell<SpanLocal>,
    _owner_line: [u8; 64 - 4 - size_of::<SpanLocal>()],

    // ---- the pool's ----
    /// When the frame went back to the pool beyond its resident limit, in
    /// milliseconds of the runtime's clock: its memory goes back to the OS
    /// once it has waited long enough without being reused.
    pub pooled_at: AtomicU32,
    _pool_line: [u8; 64 - 4],
}

#[cfg(not(loom))]
const _: () = {
    assert!(offset_of!(Span, owner) == 64);
    assert!(offset_of!(Span, used) == 128);
    assert!(size_of::<Span>() == 256);
};

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
    /// Slots in the span.
    pub slots: u32,
    /// Start of the first slot never handed out since the span was last empty.
    pub bump: u32,
    /// Slots from `bump` to the end of the span.
    pub fresh: u32,
    /// First slot of the owner's free list, or [`NIL`].
    pub free_head: u32,
    /// Neighbours in the class queue: a [`Frame::link`], or 0.
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
            mail_next: AtomicU32::new(0),
            _remote_line: [0; 52],
            owner: AtomicPtr::new(owner),
            slot_size: AtomicU32::new(slot_size),
            link_key: AtomicU32::new(0),
            pool_next: AtomicU32::new(0),
            _fixed_line: [0; 44],
            used: AtomicU32::new(used),
            local: UnsafeCell::new(SpanLocal::default()),
            _owner_line: [0; 64 - 4 - size_of::<SpanLocal>()],
            pooled_at: AtomicU32::new(0),
            _pool_line: [0; 60],
        }
    }

    /// The owner-only state.
    ///
    /// An `unsafe fn` rather than a method of an owner handle, as the heap's
    /// state is reached through [`OwnedHeap`]: a span's owner is not fixed
    /// to a thread the type could name. It changes hands (handed out from
    /// the pool, abandoned at its owner's exit, reclaimed by whichever
    /// thread frees its last slot), and in between a thread that holds it
    /// alone is its owner for the moment. Who holds a span is known only at
    /// run time, from its owner word; so the caller states it.
    ///
    /// A span on its owner's full queue is the one exception to "owner
    /// thread": its state is under the lock of the owner's heap, which a
    /// sweep on another thread may hold ([`FullQueues`]), and the owner
    /// reaches it only while holding that lock too.
    ///
    /// # Safety
    /// - The caller is the span's owner thread and the span is not on its
    ///   full queue, or the caller holds the lock of the heap whose full
    ///   queue holds the span, or holds the span while it is unowned
    ///   (pooling or reclaiming it).
    /// - No other reference returned by this method for this span is live.
    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    pub(crate) unsafe fn local(&self) -> &mut SpanLocal {
        // SAFETY: exclusive access is the caller's contract.
        unsafe { &mut *self.local.get() }
    }

    /// Slots on the owner's free list, by the counting equation
    /// (`slots == used + listed + fresh`); `None` for counts that break it.
    #[inline]
    pub(crate) fn listed_by_counts(&self, local: &SpanLocal) -> Option<u32> {
        local
            .slots
            .checked_sub(self.used())
            .and_then(|n| n.checked_sub(local.fresh))
    }

    /// Slots out, for the owner.
    #[inline(always)]
    pub(crate) fn used(&self) -> u32 {
        self.used.load(Ordering::Relaxed)
    }

    /// Sets the slots out. Owner only: a plain store, no read-modify-write
    /// instruction.
    #[inline(always)]
    pub(crate) fn set_used(&self, used: u32) {
        self.used.store(used, Ordering::Relaxed);
    }

    /// Hands a span that was just taken from the pool or the region to
    /// `owner` as a span of `class`: `slots` slots of `slot_size` bytes,
    /// none out, links encoded with `link_key`.
    ///
    /// # Safety
    /// - The caller holds the span alone (it was just taken from the pool or
    ///   the region).
    pub(crate) unsafe fn assign(
        &self,
        owner: *mut HeapRecord,
        class: u8,
        slot_size: u32,
        slots: u32,
        link_key: u32,
    ) {
        self.slot_size.store(slot_size, Ordering::Relaxed);
        self.link_key.store(link_key, Ordering::Relaxed);
        self.used.store(0, Ordering::Relaxed);
        self.remote.store(0, Ordering::Relaxed);
        self.set_owner(OwnerWord::new(owner, false));
        // SAFETY: the caller holds the span alone.
        let local = unsafe { self.local() };
        *local = SpanLocal::fresh(class, slots);
    }

    /// Returns a span to the unassigned state before its frame goes back to
    /// the pool.
    ///
    /// # Safety
    /// - The caller holds the span alone: no slot is out and no other thread
    ///   will touch its remote word again.
    pub(crate) unsafe fn reset(&self) {
        self.set_owner(OwnerWord::NONE);
        self.used.store(0, Ordering::Relaxed);
        self.slot_size.store(0, Ordering::Relaxed);
        self.remote.store(0, Ordering::Relaxed);
        // SAFETY: the caller holds the span alone.
        unsafe { *self.local() = SpanLocal::default() };
    }
}

/// Who owns a span, in one word: the owning heap's address, with the low
/// bit set while the span is on that heap's full queue; null while the span
/// is pooled or abandoned. The free decision compares the whole word with
/// the freeing thread's heap ([`Span::owner_xor`]), so a free into a full
/// span, which must move it back to the avail queue, falls to the slow
/// path without a test of its own.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OwnerWord(*mut HeapRecord);

/// The low bit of an owner word: the span is on its heap's full queue.
pub(crate) const ON_FULL_QUEUE: usize = 1;

impl OwnerWord {
    /// No owner: the span is pooled or abandoned.
    pub(crate) const NONE: OwnerWord = OwnerWord(ptr::null_mut());

    /// The word of a span of `heap`, on its full queue or not.
    #[inline(always)]
    pub(crate) fn new(heap: *mut HeapRecord, full: bool) -> OwnerWord {
        OwnerWord(heap.map_addr(|a| a | (full as usize * ON_FULL_QUEUE)))
    }

    /// The heap that owns the span (null for [`OwnerWord::NONE`]).
    #[inline(always)]
    pub(crate) fn heap(self) -> *mut HeapRecord {
        self.0.map_addr(|a| a & !ON_FULL_QUEUE)
    }

    /// Whether no heap owns the span.
    #[inline(always)]
    pub(crate) fn is_none(self) -> bool {
        self.0.is_null()
    }

    /// Whether the span is on its heap's full queue.
    #[inline(always)]
    pub(crate) fn on_full_queue(self) -> bool {
        self.0.addr() & ON_FULL_QUEUE != 0
    }
}

impl Span {
    /// The owner word, for this thread's own decisions (a free's path, a
    /// queue move): written only by the owner or by the thread holding the
    /// span alone.
    #[inline(always)]
    pub(crate) fn owner(&self) -> OwnerWord {
        OwnerWord(self.owner.load(Ordering::Relaxed))
    }

    /// The owner word XOR `heap`'s address: whose the span is, seen from
    /// the heap of a thread that frees into it, in one word and one load
    /// (`free.rs`'s `Whose` reads it).
    #[inline(always)]
    pub(crate) fn owner_xor(&self, heap: *mut HeapRecord) -> usize {
        self.owner.load(Ordering::Relaxed).addr() ^ heap.addr()
    }

    /// The owner word, read by a thread that then uses the owner's record
    /// (a notification).
    #[inline(always)]
    pub(crate) fn owner_acquire(&self) -> OwnerWord {
        OwnerWord(self.owner.load(Ordering::Acquire))
    }

    /// Sets the owner word. Owner only, or the thread holding the span alone.
    #[inline(always)]
    pub(crate) fn set_owner(&self, word: OwnerWord) {
        self.owner.store(word.0, Ordering::Relaxed);
    }
}

impl SpanLocal {
    /// The state of a span just assigned to a class, or emptied: no free
    /// list, every slot fresh.
    pub(crate) fn fresh(class: u8, slots: u32) -> SpanLocal {
        SpanLocal {
            class,
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

/// What [`crate::heap::this_thread::current`] returns on a thread with no heap: never a
/// span's owner (an owner is a real record, or null).
pub(crate) const NO_HEAP: *mut HeapRecord = ptr::dangling_mut();

/// Cumulative counters of one heap. Each is written by its heap's thread
/// alone, with a plain load and store (no read-modify-write instruction),
/// and read by `stats()` from anywhere. Sums over all heaps are taken with
/// wrapping arithmetic, so one thread may subtract what another added.
/// (The counters of threads without a heap are one static `Counters`,
/// written with read-modify-writes.)
#[derive(Default)]
pub(crate) struct Counters {
    /// Slots reserved to batches, less the ones given back unused.
    pub batched_boxes: core::sync::atomic::AtomicU64,
    /// Reservations made for batches and the heap's runs, one per refill
    /// (what `Stats::reserve_calls` counts).
    pub reserve_calls: core::sync::atomic::AtomicU64,
    /// Slots reserved to the heap's runs, which scopes allocate from, less
    /// the ones given back unused.
    pub scope_slots: core::sync::atomic::AtomicU64,
    /// Large blocks scopes have served.
    pub large_blocks: core::sync::atomic::AtomicU64,
}

impl Counters {
    /// Adds `by` (wrapping) to a counter of this thread's heap.
    #[inline]
    pub(crate) fn add(counter: &core::sync::atomic::AtomicU64, by: u64) {
        counter.store(
            counter.load(Ordering::Relaxed).wrapping_add(by),
            Ordering::Relaxed,
        );
    }

    /// `[batched_boxes, reserve_calls, scope_slots, large_blocks]`.
    pub(crate) fn read(&self) -> [u64; 4] {
        [
            self.batched_boxes.load(Ordering::Relaxed),
            self.reserve_calls.load(Ordering::Relaxed),
            self.scope_slots.load(Ordering::Relaxed),
            self.large_blocks.load(Ordering::Relaxed),
        ]
    }
}

/// Whose slots a reservation or a give-back counts as (see [`Counters`]):
/// a [`Batch`](crate::Batch)'s, or the heap's runs', which scopes allocate
/// from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tally {
    Batch,
    Scope,
}

impl Counters {
    /// The counter of slots handed out for `tally`.
    pub(crate) fn slots(&self, tally: Tally) -> &core::sync::atomic::AtomicU64 {
        match tally {
            Tally::Batch => &self.batched_boxes,
            Tally::Scope => &self.scope_slots,
        }
    }
}

/// The spans of one class in a heap that have slots to reserve: an
/// intrusive doubly linked list through `SpanLocal::{prev, next}`, holding
/// frame links ([`Frame::link`]). (The spans with none are on the class's
/// full queue, under the heap's lock: [`FullQueues`].)
#[derive(Clone, Copy, Default)]
pub(crate) struct ClassQueues {
    pub avail: u32,
}

/// A heap's owner-only state.
///
/// Invariant: an empty span on an avail queue is that queue's head. A loop
/// that allocates and frees stays on one span, and a heap holds at most one
/// empty span per class; the others go back to the pool as they empty.
pub(crate) struct HeapLocal {
    pub queues: [ClassQueues; NUM_CLASSES],
}

/// The heads of a heap's full queues, one per class: the spans with every
/// slot out, linked as the avail queues are (a frame link, or 0), each
/// armed or in the mailbox. Reached only through [`FullQueues`], while the
/// heap's lock is held: by the owner, or by a sweep on another thread
/// (`heap/sweep.rs`), which takes out the spans other threads emptied.
/// Invariant: a span on a full queue has `used == slots`, since every
/// change that gives one of its slots back moves it off the queue, under
/// the lock.
pub(crate) struct FullHeads {
    heads: [u32; NUM_CLASSES],
}

/// A heap's full queues and the spans on them, reached while holding the
/// heap's lock ([`HeapRecord::lock_full`], [`HeapRecord::try_lock_full`]),
/// which dropping this lets go. (Its `Drop` is the sweeps', in
/// `heap/sweep.rs`: letting go of a lock that a sweep found taken also
/// makes the note that asks a later sweep to look again.)
pub(crate) struct FullQueues<'a> {
    record: &'a HeapRecord,
}

impl FullQueues<'_> {
    /// The head of class `class`'s full queue; a class out of the table
    /// means corrupted metadata, and aborts.
    #[inline]
    pub(crate) fn head(&mut self, class: u8) -> &mut u32 {
        // SAFETY: the heap's lock is held while `self` lives, and `&mut
        // self` keeps this the only reference.
        let full = unsafe { &mut *self.record.full.get() };
        match full.heads.get_mut(class as usize) {
            Some(head) => head,
            None => crate::base::fatal::fatal("batch-alloc: corrupted size class"),
        }
    }

    /// Lets the heap's lock go: true if a sweep found it taken meanwhile
    /// (`HeapLock::unlock`). For the guard's `Drop`.
    ///
    /// # Safety
    /// - Called once, as the guard is dropped: nothing reaches the queues
    ///   through it afterwards.
    #[inline]
    pub(crate) unsafe fn let_go(&mut self) -> bool {
        self.record.full_lock.unlock()
    }
}

/// Slots of one span of another heap, freed on this thread and chained
/// through their links, head first: sent back in one compare-and-swap (see
/// `outbox.rs`).
///
/// 32 bytes, so that a free finds its entry with a shift and a mask.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
pub(crate) struct Outgoing {
    /// The span's frame ([`Frame::index`]), or [`Outgoing::UNUSED`].
    pub frame: u32,
    /// Offset of the chain's first slot; each links the next.
    pub head: u32,
    /// Slots the chain takes before it is sent: `OUTBOX_LIMIT` less its
    /// length (counting down, a free tests what it decrements).
    pub room: u32,
    /// Frees into other spans that mapped to this entry since it took its
    /// span (see `outbox::start_chain`).
    pub misses: u32,
    /// The chain's last slot, derived from the region (its link is written
    /// when the chain is sent, after its box's free has returned).
    pub tail: *mut u8,
}

impl Outgoing {
    /// The frame of an unused entry: past every frame a region can have.
    pub(crate) const UNUSED: u32 = u32::MAX;

    pub(crate) const EMPTY: Outgoing = Outgoing {
        frame: Outgoing::UNUSED,
        head: 0,
        room: 0,
        misses: 0,
        tail: ptr::null_mut(),
    };
}

/// Spans whose remote frees a heap can hold at once (a free picks an entry
/// by its frame's low bits).
pub(crate) const OUTBOX_SPANS: usize = 8;

impl HeapLocal {
    /// The queues of class `class`; a class out of the table means
    /// corrupted metadata, and aborts.
    #[inline(always)]
    pub(crate) fn queues_of(&mut self, class: u8) -> &mut ClassQueues {
        match self.queues.get_mut(class as usize) {
            Some(queues) => queues,
            None => crate::base::fatal::fatal("batch-alloc: corrupted size class"),
        }
    }
}

/// The slots a thread's heap holds ready for one size class, handed out
/// while a scope is open (see `runs.rs`): a cursor over one
/// reservation, fresh slots first, then recycled ones. Walked by the owner
/// only; its words are relaxed atomics so that `stats()` may count what is
/// left from another thread. One cache line each, so that finding a
/// class's run is a shift.
#[repr(C, align(64))]
pub(crate) struct Run {
    /// Bytes per slot of the run's class: the bump's stride. Fixed.
    pub size: u32,
    /// Slots the next refill asks for; grows geometrically up to a span.
    pub want: core::sync::atomic::AtomicU32,
    pub cursor: Cursor,
}

impl Run {
    /// An empty run of slots of `size` bytes whose first refill asks for
    /// `want` slots (0: a few).
    pub(crate) const fn new(size: u32, want: u32) -> Run {
        Run {
            size,
            want: core::sync::atomic::AtomicU32::new(want),
            cursor: Cursor::empty(),
        }
    }
}

/// One empty run per class.
const fn empty_runs() -> [Run; NUM_CLASSES] {
    let mut runs = [const { Run::new(0, 0) }; NUM_CLASSES];
    let mut class = 0;
    while class < NUM_CLASSES {
        runs[class] = Run::new(CLASSES[class].size, 0);
        class += 1;
    }
    runs
}

/// The class of an allocation of up to [`MAX_SMALL_SIZE`] bytes, indexed
/// by [`class_index`]: its size in 8-byte words (rounded up), in the first
/// half for an alignment of at most 8, in the second for 16. Every entry is
/// a class (size 0, which never reaches an allocator, takes the smallest),
/// so it can index the runs without a check.
pub(crate) const CLASS_BY_WORDS: [u8; 2 * WORD_CLASSES] = {
    let mut table = [0; 2 * WORD_CLASSES];
    let mut words = 0;
    while words < WORD_CLASSES {
        // Zero bytes (never asked for) takes the smallest slot of each
        // alignment.
        let size = if words == 0 { 1 } else { words * 8 };
        table[words] = class_for(size, 8);
        table[WORD_CLASSES + words] = class_for(size, 16);
        assert!((table[words] as usize) < NUM_CLASSES);
        assert!((table[WORD_CLASSES + words] as usize) < NUM_CLASSES);
        words += 1;
    }
    table
};

/// Entries of each half of [`CLASS_BY_WORDS`].
pub(crate) const WORD_CLASSES: usize = MAX_SMALL_SIZE / 8 + 1;

/// The entry of [`CLASS_BY_WORDS`] for `size` bytes (at most
/// `MAX_SMALL_SIZE`) aligned to `align` (at most 16): the second half for
/// 16-byte alignment, which `u128`s, SIMD vectors and some parsers' tokens
/// ask for. Branch-free, for the allocator's fast path.
#[inline(always)]
pub(crate) fn class_index(size: usize, align: usize) -> usize {
    size.div_ceil(8) + (align >> 4) * WORD_CLASSES
}

/// A heap, as other threads and `stats()` see it. Made once, in the
/// region's own memory, and never freed (see `record.rs`). The mailbox,
/// which other threads push to, has a cache line of its own.
#[repr(C, align(64))]
pub(crate) struct HeapRecord {
    /// Stack of spans that remote frees took off the full queue, linked
    /// through `Span::mail_next`.
    pub mailbox: IndexStack<AtomicU64>,
    /// Held while the full queues, the spans on them or the mailbox's
    /// spans change hands: see [`FullQueues`]. Not taken on the owner's
    /// fast paths, which touch neither.
    pub full_lock: HeapLock,
    _mailbox_line: [u8; 64 - 8 - size_of::<HeapLock>()],
    /// Next record in the registry; set before the record is published.
    pub next: core::sync::atomic::AtomicPtr<HeapRecord>,
    /// Claimed by a live thread.
    pub in_use: core::sync::atomic::AtomicBool,
    pub counters: Counters,
    /// The runs scopes allocate from, one per size class.
    pub runs: [Run; NUM_CLASSES],
    /// [`CLASS_BY_WORDS`], copied beside the runs, so that the allocator
    /// path finds a size's run from the heap it already holds, without
    /// reaching another crate's static.
    pub class_by_words: [u8; 2 * WORD_CLASSES],
    /// Slots waiting in the outbox, for statistics: written by the owner
    /// with plain stores.
    pub outbox_slots: core::sync::atomic::AtomicU32,
    /// Frees of other heaps' slots on their way back (see `outbox.rs`):
    /// owner only, as [`HeapRecord::outbox`] says.
    outbox: UnsafeCell<[Outgoing; OUTBOX_SPANS]>,
    local: UnsafeCell<HeapLocal>,
    /// The full queues: [`FullQueues`].
    full: UnsafeCell<FullHeads>,
}

// SAFETY: shared fields are atomics; `local` is touched only by the thread
// that claimed the record (handed over by `in_use`'s release and acquire),
// through its `OwnedHeap`; `full` only under `full_lock`, through
// `FullQueues`.
unsafe impl Sync for HeapRecord {}

/// This thread's own heap: the handle every owner-only operation takes, so
/// that the compiler, not a comment, keeps them off the paths that run on
/// other threads (a remote free, `stats()`). Made only where the thread's
/// heap is obtained (`thread.rs` makes or finds it; `this_thread::current_owned`
/// and an open scope's state give it back), and neither `Send` nor `Sync`,
/// so it never reaches another thread. A copy is one pointer; it reads as
/// the [`HeapRecord`] it names.
#[derive(Clone, Copy)]
pub(crate) struct OwnedHeap {
    record: &'static HeapRecord,
    _this_thread_only: PhantomData<*mut ()>,
}

impl OwnedHeap {
    /// The handle of `record`.
    ///
    /// # Safety
    /// - `record` is the record this thread claimed for its heap, which has
    ///   not retired.
    #[inline(always)]
    pub(crate) unsafe fn new(record: &'static HeapRecord) -> OwnedHeap {
        OwnedHeap {
            record,
            _this_thread_only: PhantomData,
        }
    }

    /// The record's address, as thread-locals and owner words hold it.
    #[inline(always)]
    pub(crate) fn as_ptr(self) -> *mut HeapRecord {
        ptr::from_ref(self.record).cast_mut()
    }

    /// The owner-only state: the class queues.
    ///
    /// # Safety
    /// - No other reference returned by this method is live.
    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    pub(crate) unsafe fn local(self) -> &'static mut HeapLocal {
        // SAFETY: this thread owns the record (the handle's invariant), and
        // exclusive access is the caller's contract.
        unsafe { &mut *self.record.local.get() }
    }
}

impl core::ops::Deref for OwnedHeap {
    type Target = HeapRecord;

    #[inline(always)]
    fn deref(&self) -> &HeapRecord {
        self.record
    }
}

impl HeapRecord {
    /// A record with empty queues and counters.
    pub(crate) fn new(in_use: bool) -> HeapRecord {
        HeapRecord {
            mailbox: IndexStack::over(AtomicU64::new(0)),
            full_lock: HeapLock::new(locks::HEAP),
            _mailbox_line: [0; 64 - 8 - size_of::<HeapLock>()],
            next: core::sync::atomic::AtomicPtr::new(ptr::null_mut()),
            in_use: core::sync::atomic::AtomicBool::new(in_use),
            counters: Counters::default(),
            runs: empty_runs(),
            class_by_words: CLASS_BY_WORDS,
            outbox_slots: core::sync::atomic::AtomicU32::new(0),
            outbox: UnsafeCell::new([Outgoing::EMPTY; OUTBOX_SPANS]),
            local: UnsafeCell::new(HeapLocal {
                queues: [ClassQueues::default(); NUM_CLASSES],
            }),
            full: UnsafeCell::new(FullHeads {
                heads: [0; NUM_CLASSES],
            }),
        }
    }

    /// The heap's full queues, once its lock is taken: at once, or when a
    /// sweep that holds it lets it go (a sweep holds it while it walks the
    /// heap's mailbox).
    #[inline]
    pub(crate) fn lock_full(&self) -> FullQueues<'_> {
        self.full_lock.lock();
        FullQueues { record: self }
    }

    /// The heap's full queues, if its lock is free now: for a sweep, which
    /// leaves a heap whose owner is at work to that owner.
    #[inline]
    pub(crate) fn try_lock_full(&self) -> Option<FullQueues<'_>> {
        // Made only once the lock is taken: a `FullQueues` dropped lets
        // the lock go, whoever holds it.
        self.full_lock
            .try_lock()
            .then(|| FullQueues { record: self })
    }

    /// As [`HeapRecord::try_lock_full`], but a lock found taken is marked,
    /// so that its holder, letting it go, notes a sweep's work: for a
    /// sweep's last try.
    #[inline]
    pub(crate) fn try_lock_full_or_mark(&self) -> Option<FullQueues<'_>> {
        // Made only once the lock is taken, as in `try_lock_full`.
        self.full_lock
            .try_lock_or_mark()
            .then(|| FullQueues { record: self })
    }

    /// The outbox: this heap's chains of other heaps' slots freed on its
    /// thread. Owner only, as [`OwnedHeap::local`] is; a method of the
    /// record rather than of the handle, since the free path has the
    /// record's address from `this_thread::current` and no handle.
    ///
    /// # Safety
    /// - The caller is the thread whose heap this record is, not retired.
    /// - No other reference returned by this method is live.
    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    pub(crate) unsafe fn outbox(&self) -> &mut [Outgoing; OUTBOX_SPANS] {
        // SAFETY: exclusive access is the caller's contract.
        unsafe { &mut *self.outbox.get() }
    }

    /// Hands the record back for the next thread that starts a heap.
    /// Release: that thread sees the record clean, and sees every span of
    /// this heap disowned.
    pub(crate) fn hand_back(&self) {
        self.in_use.store(false, Ordering::Release);
    }
}
