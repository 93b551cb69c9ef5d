//! The empty frames: single ones, on lock-free stacks, which spans and
//! heap records take one at a time; and free *extents*, runs of contiguous
//! frames that large blocks gave back, kept whole in a small table under a
//! lock for the next large block, whose first frames serve spans too when
//! the stacks are empty.
//!
//! Up to [`POOL_RESIDENT_FRAMES`] single frames stay resident for good; the
//! rest, and every free extent, stay resident for [`DECAY_MILLIS`] without
//! reuse before their memory goes back to the OS (or at once, on
//! [`trim`](crate::trim)). Single frames go back only as far as the program
//! did not need them: no more of them than the fewest that waited at any
//! time in the last one to two [`DECAY_WINDOW_MILLIS`], so that a loop
//! whose every iteration builds and drops more than the resident pool
//! finds its frames, and their huge pages, still there. When the table of
//! extents is full, the smallest extent's frames join the stacks.
//!
//! Only memory the kernel said it took back counts as given back: an extent
//! reads as zero, and a large block taken from it skips zeroing, only then.
//! The kernel refuses `MADV_DONTNEED` for locked memory (a program that
//! called `mlockall`); a frame or extent it refused stays resident, counted
//! in `cached_bytes`, keeps its bytes, and is tried again after another
//! [`DECAY_MILLIS`] or at the next `trim`.
//!
//! Across a fork: a walk over frames taken off the stacks holds the decay's
//! lock, which the fork handlers take, so a fork lands between walks; and
//! a forked child counts the stacks again ([`recount_after_fork`]), since
//! a thread of the parent's may have counted a frame it had not pushed or
//! popped yet.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU32, AtomicUsize};

use crate::class;
use crate::config::{
    DECAY_MILLIS, DECAY_WINDOW_MILLIS, FRAME_SHIFT, FRAME_SIZE, POOL_RESIDENT_FRAMES,
};
use crate::fatal::fatal;
use crate::frame::Frame;
use crate::locks;
use crate::os;
use crate::region::{self, frame_base, span};
use crate::sync::{window, IndexStack, Ordering};

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
/// The fewest frames [`DECAYING`] held since [`WINDOW_STARTED`] (lowered as
/// the program takes frames from it; set to its length when a window
/// starts), and in the window before: as many frames as the smaller of the
/// two waited unused through a whole window at least. Frames the decay gives
/// back are taken off both, so that they are not counted again.
static UNNEEDED_NOW: AtomicUsize = AtomicUsize::new(0);
static UNNEEDED_BEFORE: AtomicUsize = AtomicUsize::new(0);
/// When the current window of [`DECAY_WINDOW_MILLIS`] started. The first
/// decay of a process starts one, with nothing known unneeded before it.
static WINDOW_STARTED: AtomicU32 = AtomicU32::new(0);

// ---- single frames ----

/// An empty frame for a new span or heap records: from the stacks of empty
/// frames, else the first frame of a free extent, else past the high-water
/// mark. `None` when the region is not ready, exhausted, or cannot commit.
pub(crate) fn acquire_frame() -> Option<Frame> {
    if !region::ensure_ready() {
        return None;
    }
    // No decay here: a program taking frames is about to reuse the ones
    // waiting, and giving their memory back now would fault it in again.
    if let Some(frame) = pop_empty_frame() {
        return Some(frame);
    }
    if let Some((frame, _)) = take_extent(1) {
        return Some(frame);
    }
    region::fresh_frames(1)
}

/// Returns an empty span's frame to the empty frames, resetting its
/// metadata: to the resident pool while it has room, else to wait for reuse
/// before its memory goes back to the OS.
///
/// # Safety
/// - No slot of the span is out, no thread will touch its remote word
///   again, and the caller holds the span alone (it owns it, or reclaims it
///   after abandonment): it is on no queue and no freer is notifying.
pub(crate) unsafe fn release_frame(frame: Frame) {
    let span = span(frame);
    if span.slot_size.load(Ordering::Relaxed) == 0 {
        fatal("batch-alloc: a span released twice");
    }
    // SAFETY: the caller holds the span alone.
    let class = unsafe { span.local().class };
    region::note_released(class::shape(class).span_bytes());
    // SAFETY: the caller holds the span alone.
    unsafe { span.reset() };
    window();
    // SAFETY: reset just above, held alone (the caller's contract).
    unsafe { pool_empty_frame(frame) };
}

/// Puts an empty frame, whose metadata is all unassigned, among the empty
/// frames: the resident pool while it has room, else to wait for reuse
/// before its memory goes back to the OS.
///
/// # Safety
/// - The frame is committed, nothing in it is in use, its metadata is
///   reset, and the caller holds it alone.
pub(crate) unsafe fn pool_empty_frame(frame: Frame) {
    let span = span(frame);
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
/// frame back or grows the region for a large block: a load when none
/// waits.
#[inline]
pub(crate) fn decay_if_due() {
    if DECAYING_LEN.load(Ordering::Relaxed) != 0 {
        decay(os::now_millis(), false);
    }
}

/// An empty frame: resident ones first, the longest-waiting last.
fn pop_empty_frame() -> Option<Frame> {
    let link = |frame| &span(frame).pool_next;
    if let Some(frame) = POOL.pop(link) {
        POOL_LEN.fetch_sub(1, Ordering::Relaxed);
        return Some(frame);
    }
    if let Some(frame) = DECAYING.pop(link) {
        let left = DECAYING_LEN.fetch_sub(1, Ordering::Relaxed).wrapping_sub(1);
        UNNEEDED_NOW.fetch_min(left, Ordering::Relaxed);
        return Some(frame);
    }
    let frame = DECOMMITTED.pop(link)?;
    // The program needed more than waited: none of it was unneeded.
    UNNEEDED_NOW.store(0, Ordering::Relaxed);
    Some(frame)
}

/// Gives the memory of frames that waited [`DECAY_MILLIS`] unused back to
/// the OS, as many as the program left unneeded through the last window
/// (all of them with `everything`). One thread looks at a time, under
/// [`locks::DECAY`] (a fork waits until the frames it took off the stack
/// are back), at most twice per delay unless `everything`; the others
/// carry on (and may find fewer frames to reuse meanwhile).
#[cold]
fn decay(now: u32, everything: bool) {
    let last = LAST_DECAY.load(Ordering::Relaxed);
    if !everything && now.wrapping_sub(last) < DECAY_MILLIS / 2 {
        return;
    }
    match everything {
        true => locks::DECAY.lock(),
        false if !locks::DECAY.try_lock() => return,
        false => {}
    }
    decay_walk(now, everything);
    locks::DECAY.unlock();
}

/// [`decay`]'s walk, under its lock.
fn decay_walk(now: u32, everything: bool) {
    LAST_DECAY.store(now, Ordering::Relaxed);
    if now.wrapping_sub(WINDOW_STARTED.load(Ordering::Relaxed)) >= DECAY_WINDOW_MILLIS {
        WINDOW_STARTED.store(now, Ordering::Relaxed);
        let waiting = DECAYING_LEN.load(Ordering::Relaxed);
        let unneeded = UNNEEDED_NOW.swap(waiting, Ordering::Relaxed);
        UNNEEDED_BEFORE.store(unneeded, Ordering::Relaxed);
    }
    let unneeded = match everything {
        true => usize::MAX,
        false => UNNEEDED_NOW
            .load(Ordering::Relaxed)
            .min(UNNEEDED_BEFORE.load(Ordering::Relaxed)),
    };
    if unneeded == 0 {
        return;
    }
    // Taking the whole stack makes this thread its only holder: nobody
    // else reads or writes the links relinked and walked below. Reversed,
    // it runs from the longest-waiting frame up, so that those go back
    // first, and pushing the rest back in that order keeps the stack's.
    let mut next = DECAYING.take_all();
    let mut oldest_first = 0;
    while let Some(frame) = Frame::from_link(next) {
        let link = &span(frame).pool_next;
        next = link.load(Ordering::Relaxed);
        link.store(oldest_first, Ordering::Relaxed);
        oldest_first = frame.link();
    }
    let mut given_back_count: usize = 0;
    let mut next = oldest_first;
    while let Some(frame) = Frame::from_link(next) {
        let span = span(frame);
        next = span.pool_next.load(Ordering::Relaxed);
        let waited = now.wrapping_sub(span.pooled_at.load(Ordering::Relaxed));
        let due = given_back_count < unneeded && (everything || waited >= DECAY_MILLIS);
        // SAFETY: committed (it was assigned), empty, held by this thread alone.
        let given_back = due && unsafe { os::decommit(frame_base(frame), FRAME_SIZE) };
        if given_back {
            given_back_count = given_back_count.wrapping_add(1);
            DECAYING_LEN.fetch_sub(1, Ordering::Relaxed);
            DECOMMITTED.push(frame, &span.pool_next);
        } else {
            if due {
                // The OS refused: still resident, it waits another delay.
                span.pooled_at.store(now, Ordering::Relaxed);
            }
            DECAYING.push(frame, &span.pool_next);
        }
    }
    let less = |count: usize| Some(count.saturating_sub(given_back_count));
    // `less` always returns `Some`, so neither can fail.
    let _ = UNNEEDED_NOW.fetch_update(Ordering::Relaxed, Ordering::Relaxed, less);
    let _ = UNNEEDED_BEFORE.fetch_update(Ordering::Relaxed, Ordering::Relaxed, less);
}

/// In a child just forked (from `thread.rs`'s fork handler): sets the
/// stacks' counts to what they hold. A thread of the parent's that was
/// between counting a frame and pushing or popping it does not exist here,
/// and the frame it held is lost to this process (64 KiB at most per such
/// thread); the counts must not say otherwise. No walk is under way: the
/// decay's lock, which the fork handlers held, keeps walks and forks apart.
pub(crate) fn recount_after_fork() {
    let count = |stack: &IndexStack| {
        let mut frames = 0usize;
        let mut next = stack.peek();
        while let Some(frame) = Frame::from_link(next) {
            frames = frames.wrapping_add(1);
            next = span(frame).pool_next.load(Ordering::Relaxed);
        }
        frames
    };
    if region::is_ready() {
        POOL_LEN.store(count(&POOL), Ordering::Relaxed);
        DECAYING_LEN.store(count(&DECAYING), Ordering::Relaxed);
    }
}

/// Gives the memory of every empty frame back to the OS now, the resident
/// pool's included. Frees nothing that is in use.
pub(crate) fn decommit_cached() {
    if !region::is_ready() {
        return;
    }
    locks::DECAY.lock();
    // Taking the whole stack makes this thread its only holder, so that a
    // frame the OS refused can go back on it without being met again here.
    let mut next = POOL.take_all();
    while let Some(frame) = Frame::from_link(next) {
        let link = &span(frame).pool_next;
        next = link.load(Ordering::Relaxed);
        // SAFETY: a frame of the pool is empty, and this thread's alone.
        let given_back = unsafe { os::decommit(frame_base(frame), FRAME_SIZE) };
        if given_back {
            POOL_LEN.fetch_sub(1, Ordering::Relaxed);
            DECOMMITTED.push(frame, link);
        } else {
            POOL.push(frame, link);
        }
    }
    let now = os::now_millis();
    decay_walk(now, true);
    locks::DECAY.unlock();
    with_extents(|table| {
        for entry in table.iter_mut().filter(|e| e.frames != 0 && !e.decommitted) {
            decommit_extent(entry, now);
        }
    });
}

/// Bytes of empty frames kept resident for reuse, free extents included.
pub(crate) fn cached_bytes() -> usize {
    let frames = POOL_LEN.load(Ordering::Relaxed) + DECAYING_LEN.load(Ordering::Relaxed);
    let extents: usize = with_extents(|table| {
        table
            .iter()
            .filter(|e| !e.decommitted)
            .map(|e| e.frames as usize)
            .sum()
    });
    (frames + extents) * FRAME_SIZE
}

// ---- extents ----

/// Entries of the table of free extents.
const FREE_EXTENTS: usize = 64;

#[derive(Clone, Copy)]
struct FreeExtent {
    first: Frame,
    /// Frames; 0 for an unused entry.
    frames: u32,
    /// When it was freed, or the OS last refused to take it back, in the
    /// clock's milliseconds.
    since: u32,
    /// Whether the OS took its memory back, and said so: it reads as zero.
    decommitted: bool,
}

const NONE: FreeExtent = FreeExtent {
    first: Frame::FIRST,
    frames: 0,
    since: 0,
    decommitted: false,
};

struct Table(UnsafeCell<[FreeExtent; FREE_EXTENTS]>);

// SAFETY: the table is read and written only under `locks::EXTENTS`.
unsafe impl Sync for Table {}

static TABLE: Table = Table(UnsafeCell::new([NONE; FREE_EXTENTS]));

/// Runs `f` on the table of free extents, under its lock.
fn with_extents<R>(f: impl FnOnce(&mut [FreeExtent; FREE_EXTENTS]) -> R) -> R {
    locks::EXTENTS.lock();
    // SAFETY: the lock is held, so no other reference to the table is live.
    let result = f(unsafe { &mut *TABLE.0.get() });
    locks::EXTENTS.unlock();
    result
}

/// Puts `frames` free frames from `first` into the table of free extents,
/// merged with free neighbours; when the table is full, the smallest
/// extent's frames go to the stacks of single empty frames instead.
pub(crate) fn give_extent(first: Frame, frames: u32) {
    let now = os::now_millis();
    let evicted = with_extents(|table| {
        decay_extents(table, now);
        let mut extent = FreeExtent {
            first,
            frames,
            since: now,
            decommitted: false,
        };
        // Merge with the extents just before and just after.
        for entry in table.iter_mut().filter(|e| e.frames != 0) {
            if entry.first.plus(entry.frames) == extent.first
                || extent.first.plus(extent.frames) == entry.first
            {
                extent.first = extent.first.min(entry.first);
                extent.frames = extent.frames.wrapping_add(entry.frames);
                extent.decommitted &= entry.decommitted;
                *entry = NONE;
            }
        }
        let slot = match table.iter().position(|e| e.frames == 0) {
            Some(free) => free,
            None => smallest(table),
        };
        match table.get_mut(slot) {
            Some(entry) => core::mem::replace(entry, extent),
            None => NONE,
        }
    });
    for i in 0..evicted.frames {
        // SAFETY: the frames of a free extent are committed, unused and
        // unassigned, and taken out of the table above, so this thread
        // holds them alone.
        unsafe { pool_empty_frame(evicted.first.plus(i)) };
    }
}

/// The index of the table's smallest extent.
fn smallest(table: &[FreeExtent; FREE_EXTENTS]) -> usize {
    table
        .iter()
        .enumerate()
        .min_by_key(|(_, entry)| entry.frames)
        .map_or(0, |(i, _)| i)
}

/// The smallest free extent of at least `frames` frames, cut to that
/// length (the rest stays in the table): its first frame, and whether its
/// memory reads as zero.
pub(crate) fn take_extent(frames: u32) -> Option<(Frame, bool)> {
    with_extents(|table| take_best_fit(table, frames))
}

fn take_best_fit(table: &mut [FreeExtent; FREE_EXTENTS], frames: u32) -> Option<(Frame, bool)> {
    let entry = table
        .iter_mut()
        .filter(|entry| entry.frames >= frames)
        .min_by_key(|entry| entry.frames)?;
    // Only memory the OS took back reads as zero.
    let taken = (entry.first, entry.decommitted);
    entry.first = entry.first.plus(frames);
    entry.frames = entry.frames.wrapping_sub(frames);
    if entry.frames == 0 {
        *entry = NONE;
    }
    Some(taken)
}

/// Whether a free extent of at least `frames` frames waits.
pub(crate) fn has_extent(frames: u32) -> bool {
    with_extents(|table| table.iter().any(|e| e.frames >= frames))
}

/// Takes `frames` frames from `first` on, if a free extent starts there and
/// has them: how a large block grows in place.
pub(crate) fn take_extent_at(first: Frame, frames: u32) -> bool {
    with_extents(|table| take_at(table, first, frames))
}

fn take_at(table: &mut [FreeExtent; FREE_EXTENTS], first: Frame, frames: u32) -> bool {
    let Some(entry) = table
        .iter_mut()
        .find(|e| e.frames >= frames && e.first == first)
    else {
        return false;
    };
    entry.first = entry.first.plus(frames);
    entry.frames = entry.frames.wrapping_sub(frames);
    if entry.frames == 0 {
        *entry = NONE;
    }
    true
}

/// Gives the memory of extents that waited long enough back to the OS.
fn decay_extents(table: &mut [FreeExtent; FREE_EXTENTS], now: u32) {
    for entry in table.iter_mut() {
        if entry.frames != 0 && !entry.decommitted && now.wrapping_sub(entry.since) >= DECAY_MILLIS
        {
            decommit_extent(entry, now);
        }
    }
}

/// Gives an extent's memory back to the OS. Only if the OS took it does the
/// extent read as zero; if it refused, the extent stays resident and waits
/// another delay from `now`.
fn decommit_extent(entry: &mut FreeExtent, now: u32) {
    // SAFETY: a free extent's frames are committed, and nothing in them is
    // in use.
    entry.decommitted = unsafe {
        os::decommit(
            frame_base(entry.first),
            (entry.frames as usize) << FRAME_SHIFT,
        )
    };
    if !entry.decommitted {
        entry.since = now;
    }
}
