//! The reserved address range spans live in, and the frames it is cut into.
//!
//! One reservation holds the span metadata array followed by the frames.
//! Ownership of a pointer is one subtraction and one comparison against a
//! constant length, made before any header is read. Before the reservation
//! the base is 2^63, an address no user-space pointer reaches, so every
//! pointer is rejected; if the full size cannot be reserved the region stays
//! that way and batches fall back to `Box::new`. Frames are committed in chunks as the
//! high-water mark grows, recycled through a lock-free pool, and given back to
//! the OS once the pool holds more than [`POOL_RESIDENT_FRAMES`].

use core::ptr;

use crate::config::{
    COMMIT_FRAMES, FRAME_SHIFT, FRAME_SIZE, PAGE_SIZE, POOL_RESIDENT_FRAMES, REGION_BYTES,
};
use crate::fatal::fatal;
use crate::os;
use crate::span::{Span, SpanLocal};
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize};

use crate::sync::{backoff, Ordering};

/// First frame, with provenance over the whole reservation; the span
/// metadata array ends [`META_BYTES`] before it. [`UNRESERVED`] until the
/// region is ready.
static FRAMES_BASE: AtomicPtr<u8> = AtomicPtr::new(UNRESERVED);

/// A base no pointer lies above: user-space addresses stay below 2^57 on
/// every 64-bit platform, and `p - 2^63` wraps past any region length.
const UNRESERVED: *mut u8 = ptr::without_provenance_mut(1 << (usize::BITS - 1));

/// Most frames a region may have.
const MAX_FRAMES: usize = REGION_BYTES / FRAME_SIZE;

/// Bytes of the metadata array in front of the frames, sized for the largest
/// region so that a span's metadata is a constant distance from the frames.
const META_BYTES: usize = (MAX_FRAMES * size_of::<Span>()).div_ceil(FRAME_SIZE) * FRAME_SIZE;

const UNINIT: usize = 0;
const BUSY: usize = 1;
const READY: usize = 2;
const FAILED: usize = 3;

static STATE: AtomicUsize = AtomicUsize::new(UNINIT);
/// Frames ever handed out (may run past `FRAME_COUNT` once exhausted).
static NEXT_FRAME: AtomicUsize = AtomicUsize::new(0);
/// Frames whose memory and metadata are readable and writable.
static COMMITTED: AtomicUsize = AtomicUsize::new(0);
static COMMIT_LOCK: AtomicBool = AtomicBool::new(false);
/// Treiber stack of empty frames: high 32 bits a tag bumped by every push
/// and pop (so a stale compare-and-swap fails), low 32 bits top index + 1.
static POOL: AtomicU64 = AtomicU64::new(0);
/// Frames in the pool whose memory is still resident.
static POOL_RESIDENT: AtomicUsize = AtomicUsize::new(0);
/// Bytes of spans assigned to heaps or abandoned by exited threads.
static SPAN_BYTES: AtomicUsize = AtomicUsize::new(0);

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
}

/// Where `p` lies in the region, or `None` for any pointer the region does
/// not hold. Reads no metadata: a range check first.
#[inline(always)]
pub(crate) fn locate(p: *const u8) -> Option<Located> {
    // Acquire: a thread that sees the base sees the metadata set up before.
    let base = FRAMES_BASE.load(Ordering::Acquire);
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
    unsafe { &*spans.add(frame) }
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

/// Reserves the region on first use. False if the OS refused every size
/// tried: batches then fall back to `Box::new`.
pub(crate) fn ensure_ready() -> bool {
    match STATE.load(Ordering::Acquire) {
        READY => true,
        FAILED => false,
        _ => init_slow(),
    }
}

#[cold]
fn init_slow() -> bool {
    let mut spins = 0;
    loop {
        match STATE.compare_exchange(UNINIT, BUSY, Ordering::Acquire, Ordering::Acquire) {
            Ok(_) => break,
            Err(READY) => return true,
            Err(FAILED) => return false,
            Err(_) => backoff(&mut spins),
        }
    }
    let ready = reserve_region();
    STATE.store(if ready { READY } else { FAILED }, Ordering::Release);
    ready
}

fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// Reserves the metadata array and the frames in one range aligned to a
/// frame. All or nothing: the ownership check compares against the full
/// length.
fn reserve_region() -> bool {
    let Some(start) = os::reserve(META_BYTES + REGION_BYTES + FRAME_SIZE) else {
        return false;
    };
    let start = start.as_ptr();
    let misalign = start.addr() & (FRAME_SIZE - 1);
    let aligned = start.wrapping_add((FRAME_SIZE - misalign) & (FRAME_SIZE - 1));
    // Release: publishes the reservation to every thread that reads the base.
    FRAMES_BASE.store(aligned.wrapping_add(META_BYTES), Ordering::Release);
    true
}

/// Frames whose metadata may be read: the bound for walks over all spans.
pub(crate) fn frames_in_use() -> u32 {
    let handed = NEXT_FRAME.load(Ordering::Acquire);
    handed.min(COMMITTED.load(Ordering::Acquire)) as u32
}

/// An empty frame for a new span: from the pool, else past the high-water
/// mark. `None` when the region is not ready, exhausted, or cannot commit.
pub(crate) fn acquire_frame() -> Option<u32> {
    if !ensure_ready() {
        return None;
    }
    if let Some(frame) = pool_pop() {
        // SAFETY: a frame popped from the pool is held by this thread alone
        // until it is assigned.
        let local = unsafe { span(frame).local() };
        if local.resident {
            POOL_RESIDENT.fetch_sub(1, Ordering::Relaxed);
        }
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
    let mut spins = 0;
    while COMMIT_LOCK
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        backoff(&mut spins);
    }
    let mut ok = true;
    while ok && COMMITTED.load(Ordering::Relaxed) <= frame {
        let from = COMMITTED.load(Ordering::Relaxed);
        let to = (from + COMMIT_FRAMES).min(MAX_FRAMES);
        ok = commit_frames(from, to);
        if ok {
            COMMITTED.store(to, Ordering::Release);
        }
    }
    COMMIT_LOCK.store(false, Ordering::Release);
    ok
}

fn commit_frames(from: usize, to: usize) -> bool {
    let spans = frame_base(0).wrapping_sub(META_BYTES);
    let meta_from = from * size_of::<Span>() / PAGE_SIZE * PAGE_SIZE;
    let meta_to = round_up(to * size_of::<Span>(), PAGE_SIZE);
    let frames = frame_base(from as u32);
    // SAFETY: both ranges are page-aligned and inside the reservation: the
    // metadata area is rounded to whole frames, and `to` is at most the
    // frame count.
    unsafe {
        os::commit(spans.wrapping_add(meta_from), meta_to - meta_from)
            && os::commit(frames, (to - from) << FRAME_SHIFT)
    }
}

/// Counts a span as assigned to a heap.
pub(crate) fn note_assigned(bytes: usize) {
    SPAN_BYTES.fetch_add(bytes, Ordering::Relaxed);
}

/// Returns an empty span's frame to the pool, resetting its metadata, and its
/// memory to the OS once the pool holds enough resident frames.
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
    let resident = POOL_RESIDENT.fetch_add(1, Ordering::Relaxed) < POOL_RESIDENT_FRAMES;
    if !resident {
        POOL_RESIDENT.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: the frame is committed (it was assigned) and, by the
        // caller's contract, holds no live data.
        unsafe { os::decommit(frame_base(frame), FRAME_SIZE) };
    }
    span.owner.store(ptr::null_mut(), Ordering::Relaxed);
    span.used.store(0, Ordering::Relaxed);
    span.slot_size.store(0, Ordering::Relaxed);
    span.remote.store(0, Ordering::Relaxed);
    // SAFETY: the caller holds the span alone.
    unsafe {
        *span.local() = SpanLocal {
            resident,
            ..SpanLocal::default()
        };
    }
    pool_push(frame);
}

fn pool_push(frame: u32) {
    let span = span(frame);
    let mut head = POOL.load(Ordering::Relaxed);
    loop {
        span.pool_next.store(head as u32, Ordering::Relaxed);
        let tag = (head >> 32).wrapping_add(1);
        let new = (tag << 32) | (frame as u64 + 1);
        crate::sync::window();
        // Release: the metadata reset above is visible to whoever pops.
        match POOL.compare_exchange_weak(head, new, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => return,
            Err(seen) => head = seen,
        }
    }
}

fn pool_pop() -> Option<u32> {
    let mut head = POOL.load(Ordering::Acquire);
    loop {
        let top = head as u32;
        if top == 0 {
            return None;
        }
        // May read the link of a frame another thread popped meanwhile; the
        // tag then makes the compare-and-swap below fail.
        let next = span(top - 1).pool_next.load(Ordering::Relaxed);
        let tag = (head >> 32).wrapping_add(1);
        let new = (tag << 32) | next as u64;
        crate::sync::window();
        match POOL.compare_exchange_weak(head, new, Ordering::Acquire, Ordering::Acquire) {
            Ok(_) => return Some(top - 1),
            Err(seen) => head = seen,
        }
    }
}

/// Bytes of spans assigned to heaps or abandoned.
pub(crate) fn span_bytes() -> usize {
    SPAN_BYTES.load(Ordering::Relaxed)
}

/// Bytes of empty frames kept resident in the pool.
pub(crate) fn cached_bytes() -> usize {
    POOL_RESIDENT.load(Ordering::Relaxed) * FRAME_SIZE
}
