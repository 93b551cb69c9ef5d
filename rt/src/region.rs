//! The reserved address range spans live in, the frames it is cut into, and
//! the shared pool of empty frames.
//!
//! One reservation holds the span metadata array followed by the frames.
//! Ownership of a pointer is one subtraction and one comparison against a
//! constant length, made before any metadata is read. Before the reservation
//! the base is 2^63, an address no user-space pointer reaches, so every
//! pointer is rejected; if the full size cannot be reserved the region stays
//! that way and batches fall back to `Box::new`. Frames are committed in
//! chunks as the high-water mark grows and recycled through lock-free
//! stacks of empty frames: up to [`POOL_RESIDENT_FRAMES`] stay resident for
//! good, the rest for [`DECAY_MILLIS`] without reuse before their memory goes
//! back to the OS (or at once, on [`trim`](crate::trim)).

use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU8, AtomicUsize};

use crate::config::{
    COMMIT_FRAMES, DECAY_MILLIS, FRAME_SHIFT, FRAME_SIZE, PAGE_SIZE, POOL_RESIDENT_FRAMES,
    REGION_BYTES,
};
use crate::fatal::fatal;
use crate::os;
use crate::sync::{window, IndexStack, Ordering, RunOnce, SpinLock};
use crate::types::Span;

/// First frame, with provenance over the whole reservation; the span
/// metadata array ends [`META_BYTES`] before it. [`UNRESERVED`] until the
/// region is ready.
static FRAMES_BASE: AtomicPtr<u8> = AtomicPtr::new(UNRESERVED);

/// A base no pointer lies above: user-space addresses stay below 2^57 on
/// every 64-bit platform, and `p - 2^63` wraps past any region length.
const UNRESERVED: *mut u8 = ptr::without_provenance_mut(1 << (usize::BITS - 1));

/// Most frames a region may have.
const MAX_FRAMES: usize = REGION_BYTES / FRAME_SIZE;
// A frame's index fits a `u32` with room for the outbox's unused marker.
const _: () = assert!(MAX_FRAMES < crate::types::Outgoing::UNUSED as usize);

/// Bytes of the metadata array in front of the frames, sized for the largest
/// region so that a span's metadata is a constant distance from the frames.
const META_BYTES: usize = (MAX_FRAMES * size_of::<Span>()).div_ceil(FRAME_SIZE) * FRAME_SIZE;

const UNINIT: u8 = 0;
const READY: u8 = 1;
const FAILED: u8 = 2;

/// Whether the region is reserved; changes once, under [`INIT_LOCK`].
static STATE: AtomicU8 = AtomicU8::new(UNINIT);
/// Frames ever taken from the region (may run past `MAX_FRAMES` once
/// exhausted): spans, frames now in the pool, and heap-record frames.
static NEXT_FRAME: AtomicUsize = AtomicUsize::new(0);
/// Frames whose memory and metadata are readable and writable.
static COMMITTED: AtomicUsize = AtomicUsize::new(0);
/// Empty frames kept resident for good, at most [`POOL_RESIDENT_FRAMES`];
/// the first place a new span looks. The three stacks of empty frames are
/// linked through `Span::pool_next`.
static POOL: IndexStack = IndexStack::new();
/// Frames on [`POOL`] (pushers count first, so it may briefly exceed it).
static POOL_LEN: AtomicUsize = AtomicUsize::new(0);
/// Empty frames past the resident limit, still resident, each stamped with
/// when it came (`Span::pooled_at`): reused if wanted soon, else decommitted.
static DECAYING: IndexStack = IndexStack::new();
/// Frames on [`DECAYING`].
static DECAYING_LEN: AtomicUsize = AtomicUsize::new(0);
/// Empty frames whose memory went back to the OS.
static DECOMMITTED: IndexStack = IndexStack::new();
/// When [`DECAYING`] was last looked through, in the clock's milliseconds.
static LAST_DECAY: AtomicU32 = AtomicU32::new(0);
/// Bytes of spans assigned to heaps or abandoned by exited threads.
static SPAN_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Held while the region is reserved. Lock order: the record lock, then
/// this, then [`COMMIT_LOCK`] (a new heap record may reserve the region and
/// commit frames).
static INIT_LOCK: SpinLock = SpinLock::new();
/// Held while frames are committed.
static COMMIT_LOCK: SpinLock = SpinLock::new();

/// A pointer found inside the region: the region's base, with provenance
/// over all of it, and the pointer's offset from it.
#[derive(Clone, Copy)]
pub(crate) struct Located {
    pub base: *mut u8,
    pub offset: usize,
}

impl Located {
    /// The frame the pointer is in.
    #[inline(always)]
    pub(crate) fn frame(self) -> u32 {
        (self.offset >> FRAME_SHIFT) as u32
    }

    /// Offset of the pointer in its frame.
    #[inline(always)]
    pub(crate) fn offset_in_frame(self) -> u32 {
        (self.offset & (FRAME_SIZE - 1)) as u32
    }

    /// The metadata of the pointer's frame.
    #[inline(always)]
    pub(crate) fn span(self) -> &'static Span {
        span_in(self.base, self.offset >> FRAME_SHIFT)
    }

    /// The pointer itself, derived from the region's base: valid for the
    /// whole slot, and beyond, where a box's own pointer covers only the
    /// box's bytes.
    #[inline(always)]
    pub(crate) fn ptr(self) -> *mut u8 {
        self.base.wrapping_add(self.offset)
    }
}

/// Where `p` lies in the region, or `None` for any pointer the region does
/// not hold. Reads no metadata: a range check first.
#[inline(always)]
pub(crate) fn locate(p: *const u8) -> Option<Located> {
    // Relaxed: a pointer inside the region was handed out by a batch, and
    // whatever handed it to this thread (a channel, a join, a lock) ordered
    // the base's publication before; a pointer outside it is rejected
    // whichever base this load sees.
    let base = FRAMES_BASE.load(Ordering::Relaxed);
    let offset = p.addr().wrapping_sub(base.addr());
    if offset < REGION_BYTES {
        Some(Located { base, offset })
    } else {
        None
    }
}

#[inline(always)]
fn span_in(frames_base: *mut u8, frame: usize) -> &'static Span {
    let spans = frames_base.wrapping_sub(META_BYTES).cast::<Span>();
    // SAFETY: only frames below the committed mark are ever named (they come
    // from `acquire_frame` or from a pointer inside the region, which only
    // such frames hand out); their metadata is committed memory inside the
    // reservation that is never unmapped, and an all-zero `Span` is valid.
    unsafe { &*spans.wrapping_add(frame) }
}

/// The metadata of frame `frame`.
#[inline(always)]
pub(crate) fn span(frame: u32) -> &'static Span {
    span_in(FRAMES_BASE.load(Ordering::Relaxed), frame as usize)
}

/// The first byte of frame `frame`, with provenance over the region, so that
/// slot pointers derived from it are valid for any slot (a `Box`'s own
/// pointer only covers its slot).
#[inline(always)]
pub(crate) fn frame_base(frame: u32) -> *mut u8 {
    FRAMES_BASE
        .load(Ordering::Relaxed)
        .wrapping_add((frame as usize) << FRAME_SHIFT)
}

/// Reserves the region on first use. False if the OS refused: batches then
/// fall back to `Box::new`.
pub(crate) fn ensure_ready() -> bool {
    // Acquire: a thread that sees READY sees the base and the fork hooks.
    match STATE.load(Ordering::Acquire) {
        READY => true,
        FAILED => false,
        _ => init_slow(),
    }
}

#[cold]
fn init_slow() -> bool {
    // The fork hooks go in before the lock is first taken, so that a fork
    // while this thread reserves the region cannot leave the lock held in
    // the child. Without them (the C library refused) the region still
    // works for a process that does not fork mid-reservation. Registering
    // them is all the run does: run again in a child forked while it was
    // under way, it registers them only if they were not (a registration
    // is whole or absent in the child, and one that is there marks the run
    // done from its child handler).
    FORK_HOOKS.run(|| {
        os::at_fork(before_fork, after_fork, after_fork_in_child);
    });
    INIT_LOCK.lock();
    if STATE.load(Ordering::Relaxed) == UNINIT {
        let ready = reserve_region();
        STATE.store(if ready { READY } else { FAILED }, Ordering::Release);
    }
    let ready = STATE.load(Ordering::Relaxed) == READY;
    INIT_LOCK.unlock();
    ready
}

/// What the reservation is aligned to: a transparent huge page (2 MiB on
/// x86-64 and most of aarch64), so that the frames, which start a whole
/// number of huge pages in, can be backed by huge pages; a frame under Miri.
#[cfg(not(miri))]
const REGION_ALIGN: usize = if FRAME_SIZE > HUGE_PAGE {
    FRAME_SIZE
} else {
    HUGE_PAGE
};
#[cfg(miri)]
const REGION_ALIGN: usize = FRAME_SIZE;
#[cfg(not(miri))]
const HUGE_PAGE: usize = 2 << 20;
const _: () = assert!(META_BYTES % REGION_ALIGN == 0 && REGION_ALIGN % FRAME_SIZE == 0);

/// Reserves the metadata array and the frames in one range aligned to a
/// huge page, and asks for huge pages over all of it, as mimalloc does for
/// its arenas: memory a program touches for the first time then faults in
/// a huge page at a time rather than a page at a time (docs/runtime.md has
/// the figures). All or nothing: the ownership check compares against the
/// full length.
fn reserve_region() -> bool {
    let Some(start) = os::reserve(META_BYTES + REGION_BYTES + REGION_ALIGN) else {
        return false;
    };
    let start = start.as_ptr();
    let misalign = start.addr() & (REGION_ALIGN - 1);
    let aligned = start.wrapping_add((REGION_ALIGN - misalign) & (REGION_ALIGN - 1));
    // SAFETY: the range lies inside the reservation just made.
    unsafe { os::advise_huge_pages(aligned, META_BYTES + REGION_BYTES) };
    // Release: publishes the reservation to every thread that reads the base
    // with acquire (`ensure_ready`'s state load orders it too).
    FRAMES_BASE.store(aligned.wrapping_add(META_BYTES), Ordering::Release);
    true
}

/// Frames ever taken from the region and committed: every frame whose
/// metadata may be read, the bound for walks over all spans. Counts spans,
/// pooled frames and heap-record frames alike.
pub(crate) fn frames_touched() -> u32 {
    let handed = NEXT_FRAME.load(Ordering::Acquire);
    handed.min(COMMITTED.load(Ordering::Acquire)) as u32
}

/// An empty frame for a new span or heap records: from the pool, else past
/// the high-water mark. `None` when the region is not ready, exhausted, or
/// cannot commit.
pub(crate) fn acquire_frame() -> Option<u32> {
    if !ensure_ready() {
        return None;
    }
    // No decay here: a program taking frames is about to reuse the ones
    // waiting, and giving their memory back now would fault it in again.
    if let Some(frame) = pop_empty_frame() {
        return Some(frame);
    }
    let frame = NEXT_FRAME.fetch_add(1, Ordering::Relaxed);
    if frame >= MAX_FRAMES {
        return None;
    }
    if frame >= COMMITTED.load(Ordering::Acquire) && !commit_through(frame) {
        return None;
    }
    Some(frame as u32)
}

/// Commits frames (and their metadata) in chunks until `frame` is covered.
#[cold]
fn commit_through(frame: usize) -> bool {
    COMMIT_LOCK.lock();
    let mut ok = true;
    while ok && COMMITTED.load(Ordering::Relaxed) <= frame {
        let from = COMMITTED.load(Ordering::Relaxed);
        // Frame counts stay far below usize::MAX: no arithmetic here wraps.
        let to = from.wrapping_add(COMMIT_FRAMES).min(MAX_FRAMES);
        ok = commit_frames(from, to);
        if ok {
            COMMITTED.store(to, Ordering::Release);
        }
    }
    COMMIT_LOCK.unlock();
    ok
}

fn commit_frames(from: usize, to: usize) -> bool {
    let spans = frame_base(0).wrapping_sub(META_BYTES);
    // Frame counts are below MAX_FRAMES: these products stay far from
    // overflowing.
    let meta_from = from.wrapping_mul(size_of::<Span>()) / PAGE_SIZE * PAGE_SIZE;
    let meta_to = to
        .wrapping_mul(size_of::<Span>())
        .div_ceil(PAGE_SIZE)
        .wrapping_mul(PAGE_SIZE);
    let frames = frame_base(from as u32);
    // SAFETY: both ranges are page-aligned and inside the reservation: the
    // metadata area is rounded to whole frames, and `to` is at most the
    // frame count.
    unsafe {
        os::commit(
            spans.wrapping_add(meta_from),
            meta_to.wrapping_sub(meta_from),
        ) && os::commit(frames, to.wrapping_sub(from) << FRAME_SHIFT)
    }
}

/// Counts a span of `bytes` as assigned to a heap.
pub(crate) fn note_assigned(bytes: usize) {
    SPAN_BYTES.fetch_add(bytes, Ordering::Relaxed);
}

/// Returns an empty span's frame to the empty frames, resetting its
/// metadata: to the resident pool while it has room, else to wait for reuse
/// before its memory goes back to the OS.
///
/// # Safety
/// - No slot of the span is out, no thread will touch its remote word
///   again, and the caller holds the span alone (it owns it, or reclaims it
///   after abandonment).
pub(crate) unsafe fn release_frame(frame: u32, span_bytes: usize) {
    let span = span(frame);
    if span.slot_size.load(Ordering::Relaxed) == 0 {
        fatal("batch-alloc: a span released twice");
    }
    SPAN_BYTES.fetch_sub(span_bytes, Ordering::Relaxed);
    // SAFETY: the caller holds the span alone.
    unsafe { span.reset() };
    window();
    if POOL_LEN.fetch_add(1, Ordering::Relaxed) < POOL_RESIDENT_FRAMES {
        POOL.push(frame, &span.pool_next);
    } else {
        POOL_LEN.fetch_sub(1, Ordering::Relaxed);
        span.pooled_at.store(os::now_millis(), Ordering::Relaxed);
        DECAYING_LEN.fetch_add(1, Ordering::Relaxed);
        DECAYING.push(frame, &span.pool_next);
    }
    decay_if_due();
}

/// Lets frames that waited long enough decay, when the program gives a
/// frame back: a load when none waits.
#[inline]
fn decay_if_due() {
    if DECAYING_LEN.load(Ordering::Relaxed) != 0 {
        decay(os::now_millis(), false);
    }
}

/// An empty frame: resident ones first, the longest-waiting last.
fn pop_empty_frame() -> Option<u32> {
    let link = |frame| &span(frame).pool_next;
    if let Some(frame) = POOL.pop(link) {
        POOL_LEN.fetch_sub(1, Ordering::Relaxed);
        return Some(frame);
    }
    if let Some(frame) = DECAYING.pop(link) {
        DECAYING_LEN.fetch_sub(1, Ordering::Relaxed);
        return Some(frame);
    }
    DECOMMITTED.pop(link)
}

/// Gives the memory of frames that waited [`DECAY_MILLIS`] unused (all of
/// them with `everything`) back to the OS. One thread looks at a time, at
/// most twice per delay unless `everything`; the others carry on (and may
/// find fewer frames to reuse meanwhile). False if another thread was
/// looking.
#[cold]
fn decay(now: u32, everything: bool) -> bool {
    let last = LAST_DECAY.load(Ordering::Relaxed);
    if !everything && now.wrapping_sub(last) < DECAY_MILLIS / 2 {
        return true;
    }
    if LAST_DECAY
        .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
        .is_err()
    {
        return false;
    }
    // Taking the whole stack makes this thread its only holder: nobody
    // else reads the links walked below.
    let mut next = DECAYING.take_all();
    while let Some(frame) = next.checked_sub(1) {
        let span = span(frame);
        next = span.pool_next.load(Ordering::Relaxed);
        let waited = now.wrapping_sub(span.pooled_at.load(Ordering::Relaxed));
        if everything || waited >= DECAY_MILLIS {
            DECAYING_LEN.fetch_sub(1, Ordering::Relaxed);
            // SAFETY: the frame is committed (it was assigned), empty, and
            // held by this thread alone.
            unsafe { os::decommit(frame_base(frame), FRAME_SIZE) };
            DECOMMITTED.push(frame, &span.pool_next);
        } else {
            DECAYING.push(frame, &span.pool_next);
        }
    }
    true
}

/// Gives the memory of every empty frame back to the OS now, the resident
/// pool's included. Frees nothing that is in use.
pub(crate) fn decommit_cached() {
    if STATE.load(Ordering::Acquire) != READY {
        return;
    }
    while let Some(frame) = POOL.pop(|frame| &span(frame).pool_next) {
        POOL_LEN.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: a frame popped from the pool is empty and this thread's.
        unsafe { os::decommit(frame_base(frame), FRAME_SIZE) };
        DECOMMITTED.push(frame, &span(frame).pool_next);
    }
    let mut spins = 0;
    while !decay(os::now_millis(), true) {
        crate::sync::backoff(&mut spins);
    }
}

/// Bytes of spans assigned to heaps or abandoned.
pub(crate) fn span_bytes() -> usize {
    SPAN_BYTES.load(Ordering::Relaxed)
}

/// Bytes of empty frames kept resident for reuse.
pub(crate) fn cached_bytes() -> usize {
    let frames = POOL_LEN.load(Ordering::Relaxed) + DECAYING_LEN.load(Ordering::Relaxed);
    frames * FRAME_SIZE
}

// ---- fork ----
//
// A child forked while another thread held one of these locks would wait
// for it forever. The forking thread takes them before the fork (after the
// record lock, whose handler was registered later and so runs first) and
// releases them on both sides.

/// Registers the handlers below, once.
static FORK_HOOKS: RunOnce = RunOnce::new();

unsafe extern "C" fn before_fork() {
    INIT_LOCK.lock();
    COMMIT_LOCK.lock();
}

unsafe extern "C" fn after_fork() {
    COMMIT_LOCK.unlock();
    INIT_LOCK.unlock();
}

unsafe extern "C" fn after_fork_in_child() {
    // SAFETY: the handler of the same fork.
    unsafe { after_fork() };
    FORK_HOOKS.done_after_fork();
}
