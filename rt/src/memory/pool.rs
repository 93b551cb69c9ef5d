//! The empty frames: single ones, on lock-free stacks, which spans and
//! heap records take one at a time; and free *extents*, runs of contiguous
//! frames that large blocks gave back, kept whole in a small table under a
//! lock for the next large block, whose first frames serve spans too when
//! the stacks are empty.
//!
//! Up to [`POOL_RESIDENT_FRAMES`] single frames stay resident for good.
//! The rest *decay*: a single frame that has waited [`FRAME_DECAY_MILLIS`]
//! on the stacks unused, and a free extent that has waited
//! [`EXTENT_DECAY_MILLIS`], go back to the OS. A frame a program takes
//! again within the delay is reused with its pages (and huge pages) in
//! place, so a loop that builds and drops a structure larger than the
//! resident pool, each iteration shorter than the delay, keeps its
//! memory. There is no thread of the runtime's own: the decay runs at the
//! runtime's next event after the delay ([`decay_if_due`]): a run's
//! refill (a scope's or a batch's), a large block made or freed, a frame
//! given back (a span emptied, a thread's exit); never when a span takes a
//! frame, which reuses those waiting. docs/runtime.md ("When memory goes
//! back") states the promise this keeps. When the table of extents is
//! full, the smallest extent's frames join the stacks.
//!
//! Only memory the kernel said it took back counts as given back: an extent
//! reads as zero, and a large block taken from it skips zeroing, only then.
//! The kernel refuses `MADV_DONTNEED` for locked memory (a program that
//! called `mlockall`); a frame or extent it refused stays resident, counted
//! in `cached_bytes`, keeps its bytes, and is tried again after another
//! delay or at the next `trim`.
//!
//! Across a fork: a walk over frames taken off the stacks holds the decay's
//! lock, which the fork handlers take, so a fork lands between walks; and
//! a forked child counts the stacks again ([`recount_after_fork`]), since
//! a thread of the parent's may have counted a frame it had not pushed or
//! popped yet.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU32, AtomicUsize};

use crate::base::class;
use crate::base::config::{
    EXTENT_DECAY_MILLIS, FRAME_DECAY_MILLIS, FRAME_SHIFT, FRAME_SIZE, POOL_RESIDENT_FRAMES,
    SWEEP_DELAY_MILLIS,
};
use crate::base::fatal::fatal;
use crate::base::frame::Frame;
use crate::base::locks;
use crate::base::os;
use crate::base::sync::{window, IndexStack, Ordering};
use crate::memory::region::{self, frame_base, span};

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
/// When the decay last walked [`DECAYING`], in the clock's milliseconds
/// (written under [`locks::DECAY`]).
static LAST_WALK: AtomicU32 = AtomicU32::new(0);
/// When the first frame on [`DECAYING`] may be due, at the earliest: the
/// last walk sets it from what it left there, and every frame pushed since
/// is stamped later. Until then the decay does not walk. A walk also takes
/// the frames due within the next [`WALK_AHEAD_MILLIS`], so that walks come
/// at least that far apart.
static FRAMES_DUE: AtomicU32 = AtomicU32::new(0);
/// Frames of free extents whose memory is resident (kept with the table,
/// under its lock, read without it), and in the top bit, [`MAIL`], whether
/// other threads' frees may have emptied spans that wait in an owner's
/// mailbox for a sweep (`heap/sweep.rs`). One word, so that an event with
/// nothing to do reads two, this and [`DECAYING_LEN`]. (loom's in the
/// models, which check the note's orderings against the pushes.)
#[cfg(not(loom))]
static EXTENTS_AND_MAIL: AtomicUsize = AtomicUsize::new(0);
#[cfg(loom)]
loom::lazy_static! {
    static ref EXTENTS_AND_MAIL: loom::sync::atomic::AtomicUsize =
        loom::sync::atomic::AtomicUsize::new(0);
}
/// The bit of [`EXTENTS_AND_MAIL`] that says a sweep may find emptied
/// spans: set by [`note_emptied_in_mailbox`], cleared by the sweep that
/// [`take_mail_note`]s it.
const MAIL: usize = 1 << (usize::BITS - 1);
/// When the first of the free extents is due (kept with the table).
static EXTENTS_DUE: AtomicU32 = AtomicU32::new(0);
/// When an event first found [`MAIL`] set since the last sweep, in the
/// clock's milliseconds, or 0 for not yet: the sweep is due
/// [`SWEEP_DELAY_MILLIS`] later.
static MAIL_SINCE: AtomicU32 = AtomicU32::new(0);

/// How far ahead of its delay a walk takes a waiting frame: walks over the
/// waiting frames come at least this far apart, and a frame goes back
/// after waiting between [`FRAME_DECAY_MILLIS`] less this and
/// [`FRAME_DECAY_MILLIS`], at the first event after.
const WALK_AHEAD_MILLIS: u32 = 50;

/// The decay's clock: the OS's monotonic milliseconds, wrapping (every
/// 49.7 days; the decay compares times less than 24.8 days apart). In the
/// unit tests, ahead by what they advanced it ([`test_clock`]).
fn now() -> u32 {
    let now = os::now_millis();
    #[cfg(test)]
    let now = now.wrapping_add(test_clock::ahead());
    now
}

/// Whether time `now` is at or past `due`.
fn reached(now: u32, due: u32) -> bool {
    now.wrapping_sub(due) as i32 >= 0
}

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
        span.pooled_at.store(now(), Ordering::Relaxed);
        DECAYING_LEN.fetch_add(1, Ordering::Relaxed);
        DECAYING.push(frame, &span.pool_next);
    }
    decay_if_due();
}

/// Lets frames and extents that waited long enough decay: the runtime's
/// events call it (a frame given back, a large block made or freed, a
/// run's refill). Two loads when nothing waits; a clock read when
/// something does. True when a sweep is due: spans other threads emptied
/// may wait in an owner's mailbox, and have for [`SWEEP_DELAY_MILLIS`]
/// since an event first saw it; the events of the heap's layer then
/// sweep (`heap/sweep.rs`), the others leave it to them.
#[inline]
pub(crate) fn decay_if_due() -> bool {
    if DECAYING_LEN.load(Ordering::Relaxed) != 0 || EXTENTS_AND_MAIL.load(Ordering::Relaxed) != 0 {
        return decay(now());
    }
    false
}

/// An empty frame: resident ones first, the most recently pooled first.
fn pop_empty_frame() -> Option<Frame> {
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

/// Gives back the memory of the frames and extents that are due at `now`.
/// One thread walks the frames at a time: one that finds another walking
/// leaves the frames to it. True when a sweep is due (see
/// [`decay_if_due`]).
#[cold]
#[inline(never)]
fn decay(now: u32) -> bool {
    if frames_due(now) && locks::DECAY.try_lock() {
        // Checked again: a walk may have ended just before.
        if frames_due(now) {
            decay_frames(now, false);
        }
        locks::DECAY.unlock();
    }
    let waiting = EXTENTS_AND_MAIL.load(Ordering::Relaxed);
    if waiting & !MAIL != 0 && reached(now, EXTENTS_DUE.load(Ordering::Relaxed)) {
        with_extents(|table| decay_extents(table, now, false));
    }
    waiting & MAIL != 0 && sweep_due(now)
}

// ---- the sweeps' clock ----

/// Notes that a free may have emptied a span that waits in its owner's
/// mailbox: a sweep on another thread may take it, once the delay has
/// passed (`heap/sweep.rs`). From the thread whose push or notification
/// left the span both in the mailbox and with every slot back. AcqRel:
/// the sweep that takes the note ([`take_mail_note`]) sees that push.
#[cold]
#[inline(never)]
pub(crate) fn note_emptied_in_mailbox() {
    EXTENTS_AND_MAIL.fetch_or(MAIL, Ordering::AcqRel);
}

/// Whether the sweep a note asks for is due at `now`: the first event to
/// see the note starts the delay, and the first one past it sweeps.
fn sweep_due(now: u32) -> bool {
    let since = MAIL_SINCE.load(Ordering::Relaxed);
    if since == 0 {
        // 0 means "not yet": the clock's own 0 counts as 1.
        let _ = MAIL_SINCE.compare_exchange(0, now.max(1), Ordering::Relaxed, Ordering::Relaxed);
        return false;
    }
    reached(now, since.wrapping_add(SWEEP_DELAY_MILLIS))
}

/// Whether a note waits for a sweep, for the models.
#[cfg(loom)]
pub(crate) fn mail_noted() -> bool {
    EXTENTS_AND_MAIL.load(Ordering::Acquire) & MAIL != 0
}

/// Takes the note, for a sweep about to look at every mailbox: a free
/// that empties a span after this notes again. AcqRel: the pushes noted
/// so far are visible to the sweep.
pub(crate) fn take_mail_note() {
    EXTENTS_AND_MAIL.fetch_and(!MAIL, Ordering::AcqRel);
    MAIL_SINCE.store(0, Ordering::Relaxed);
}

/// Whether a walk of the waiting frames is due: some wait, and the first
/// of them is due. (After more than 24.8 days without a walk, `reached`
/// reads backwards; a second of it then lets the walk run.)
fn frames_due(now: u32) -> bool {
    let since_walk = now.wrapping_sub(LAST_WALK.load(Ordering::Relaxed));
    DECAYING_LEN.load(Ordering::Relaxed) != 0
        && (reached(now, FRAMES_DUE.load(Ordering::Relaxed)) || since_walk >= FRAME_DECAY_MILLIS)
}

/// Gives the memory of the frames that waited [`FRAME_DECAY_MILLIS`] on
/// [`DECAYING`] (or will have within [`WALK_AHEAD_MILLIS`]; all of them
/// with `everything`) back to the OS, oldest first, and notes when the
/// first of the others is due.
///
/// The caller holds [`locks::DECAY`]: the walk holds the frames off the
/// stack, and a fork must not land meanwhile.
fn decay_frames(now: u32, everything: bool) {
    LAST_WALK.store(now, Ordering::Relaxed);
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
    // Frames pushed during the walk were stamped after it began.
    let mut first_due = now.wrapping_add(FRAME_DECAY_MILLIS);
    let mut next = oldest_first;
    while let Some(frame) = Frame::from_link(next) {
        let span = span(frame);
        next = span.pool_next.load(Ordering::Relaxed);
        let pooled_at = span.pooled_at.load(Ordering::Relaxed);
        let ahead = now.wrapping_add(WALK_AHEAD_MILLIS);
        let due = everything || reached(ahead, pooled_at.wrapping_add(FRAME_DECAY_MILLIS));
        // SAFETY: committed (it was assigned), empty, held by this thread alone.
        if due && unsafe { os::decommit(frame_base(frame), FRAME_SIZE) } {
            DECAYING_LEN.fetch_sub(1, Ordering::Relaxed);
            DECOMMITTED.push(frame, &span.pool_next);
            continue;
        }
        let waits_until = match due {
            // The OS refused: still resident, it waits another delay.
            true => {
                span.pooled_at.store(now, Ordering::Relaxed);
                now.wrapping_add(FRAME_DECAY_MILLIS)
            }
            false => pooled_at.wrapping_add(FRAME_DECAY_MILLIS),
        };
        if !reached(waits_until, first_due) {
            first_due = waits_until;
        }
        DECAYING.push(frame, &span.pool_next);
    }
    FRAMES_DUE.store(first_due, Ordering::Relaxed);
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
    let now = now();
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
    decay_frames(now, true);
    locks::DECAY.unlock();
    with_extents(|table| decay_extents(table, now, true));
}

/// Bytes of empty frames kept resident for reuse, free extents included.
pub(crate) fn cached_bytes() -> usize {
    let frames = POOL_LEN.load(Ordering::Relaxed) + DECAYING_LEN.load(Ordering::Relaxed);
    let extents = with_extents(|_| EXTENTS_AND_MAIL.load(Ordering::Relaxed) & !MAIL);
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

/// Runs `f` on the table of free extents, under its lock, and notes what
/// the table then holds resident and when the first of it is due.
fn with_extents<R>(f: impl FnOnce(&mut [FreeExtent; FREE_EXTENTS]) -> R) -> R {
    locks::EXTENTS.lock();
    // SAFETY: the lock is held, so no other reference to the table is live.
    let table = unsafe { &mut *TABLE.0.get() };
    let result = f(table);
    let mut resident = 0usize;
    let mut first_due = None::<u32>;
    for entry in table.iter().filter(|e| e.frames != 0 && !e.decommitted) {
        resident = resident.wrapping_add(entry.frames as usize);
        let due = entry.since.wrapping_add(EXTENT_DECAY_MILLIS);
        if first_due.is_none_or(|first| !reached(due, first)) {
            first_due = Some(due);
        }
    }
    // Only the lock's holder changes the low bits, so one addition moves
    // them from what they were to `resident`, keeping [`MAIL`].
    let was = EXTENTS_AND_MAIL.load(Ordering::Relaxed) & !MAIL;
    EXTENTS_AND_MAIL.fetch_add(resident.wrapping_sub(was), Ordering::Relaxed);
    EXTENTS_DUE.store(first_due.unwrap_or(0), Ordering::Relaxed);
    locks::EXTENTS.unlock();
    result
}

/// Puts `frames` free frames from `first` into the table of free extents,
/// merged with free neighbours; when the table is full, the smallest
/// extent's frames go to the stacks of single empty frames instead.
pub(crate) fn give_extent(first: Frame, frames: u32) {
    let now = now();
    let evicted = with_extents(|table| {
        // Those due go back before the new one merges with them, which
        // would start their wait again.
        decay_extents(table, now, false);
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
    decay_if_due();
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

/// Gives the memory of extents that waited [`EXTENT_DECAY_MILLIS`] (all
/// of them with `everything`) back to the OS.
fn decay_extents(table: &mut [FreeExtent; FREE_EXTENTS], now: u32, everything: bool) {
    for entry in table.iter_mut() {
        let due = everything || reached(now, entry.since.wrapping_add(EXTENT_DECAY_MILLIS));
        if entry.frames != 0 && !entry.decommitted && due {
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

/// The unit tests' control of the decay's clock: [`advance`] moves it
/// ahead for every thread, so that a test sees the delays pass without
/// waiting them out (and under Miri, whose clock stands still).
#[cfg(test)]
pub(crate) mod test_clock {
    use core::sync::atomic::{AtomicU32, Ordering};

    static AHEAD: AtomicU32 = AtomicU32::new(0);

    /// Moves the decay's clock `millis` ahead.
    pub(crate) fn advance(millis: u32) {
        AHEAD.fetch_add(millis, Ordering::Relaxed);
    }

    pub(super) fn ahead() -> u32 {
        AHEAD.load(Ordering::Relaxed)
    }
}
