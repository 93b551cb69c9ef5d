//! Sweeps: another thread takes the spans that other threads' frees
//! emptied out of a heap whose owner has not taken them back, and gives
//! them to the pool, where they go back to the OS as every empty frame
//! does.
//!
//! An owner takes back what other threads free into its spans at its own
//! refills (`reserve.rs`), and only then gives the spans they emptied to
//! the pool. An owner that makes none (it waits on a channel, or allocates
//! only outside scopes) would keep them for good: a worker that made a
//! structure, sent it to another thread and went to sleep kept all of it
//! resident after the structure was dropped. mimalloc has the same shape
//! (a page's remote frees wait for its owner); its v3 abandons full pages
//! at once, so that any thread may free one that empties. Here the owner
//! keeps its full spans, and a sweep takes the emptied ones out of its
//! mailbox, where the first remote free into a full span puts it:
//!
//! 1. A push that leaves a span in its owner's mailbox with every slot out
//!    of it back notes it (`remote.rs`, `emptied_in_mailbox` and
//!    `notify_owner`; `pool::note_emptied_in_mailbox`).
//! 2. The runtime's events (a refill, a large block made or freed) see the
//!    note with the pool's own check, at no cost when there is none
//!    (`pool::decay_if_due`); the first starts a delay
//!    ([`SWEEP_DELAY_MILLIS`]), so that an owner at work takes its own,
//!    and the first past it sweeps, on whichever thread it is.
//! 3. The sweep takes the note, then each other heap's lock if it is free
//!    and the spans of its mailbox: a span on the full queue whose every
//!    slot out is on its remote list leaves the queue and goes to the pool
//!    (`remote::take_emptied`); any other goes back in the mailbox for its
//!    owner. A heap whose lock is taken is at work: the sweep marks the
//!    lock, and the owner, letting it go, makes the note again for a later
//!    sweep (a lock never let go, in a forked child, makes none).
//!
//! What the owner's fast paths touch (its runs, the spans on its avail
//! queues, their free lists and counts) a sweep never touches: it costs
//! them nothing. The owner takes its lock only where it touches what a
//! sweep does: a span parked full or leaving the full queue, and the drain
//! of its mailbox (`queues.rs`, `reserve.rs`).
//!
//! `trim()` sweeps at once, on any thread.

use core::ptr;

#[cfg(doc)]
use crate::base::config::SWEEP_DELAY_MILLIS;
use crate::base::fatal::check;
use crate::base::frame::Frame;
use crate::base::locks;
use crate::base::sync::{backoff, Ordering};
use crate::heap::queues::unlink_full;
use crate::heap::remote;
use crate::heap::this_thread;
use crate::memory::pool;
use crate::memory::record::for_each_record;
use crate::memory::region;
use crate::memory::types::{FullQueues, HeapRecord, Span};

/// One of the runtime's events of the heap's layer (a refill, a large
/// block made or freed): lets the pool's frames decay, and sweeps when a
/// sweep is due. Two loads when nothing waits, as the decay alone.
#[inline(always)]
pub(crate) fn at_event() {
    if pool::decay_if_due() {
        sweep_due();
    }
}

/// The sweep an event found due; none if another thread sweeps now.
#[cold]
#[inline(never)]
fn sweep_due() {
    if locks::SWEEP.try_lock() {
        sweep(false);
        locks::SWEEP.unlock();
    }
}

/// Sweeps now, whatever the notes say, waiting a moment for a heap whose
/// owner holds its lock: for `trim`.
pub(crate) fn sweep_now() {
    if !region::is_ready() {
        return;
    }
    locks::SWEEP.lock();
    sweep(true);
    locks::SWEEP.unlock();
}

/// Tries for a heap's lock this many times (spinning, then yielding)
/// before `trim`'s sweep leaves the heap to its owner: the owner holds it
/// for a refill's steps or a drain, and a thread that held it when the
/// process forked (then the heap's never is free) is not waited for.
const TRIM_TRIES: u32 = 128;

/// Every other heap's mailbox, with [`locks::SWEEP`] held. `patient`: wait
/// a moment for a heap's lock.
fn sweep(patient: bool) {
    pool::take_mail_note();
    let own = this_thread::current();
    for_each_record(|record| {
        // This thread's own mailbox is its refills' to drain.
        if ptr::eq(record, own) || record.mailbox.is_empty() {
            return;
        }
        sweep_heap(record, patient, region::span, |full, frame| {
            // SAFETY: `sweep_heap` releases a span on the full queue whose
            // lock `full` holds, which is then empty, on no queue, in no
            // mailbox, with no notifier, and of which nobody holds a slot.
            unsafe {
                unlink_full(full, frame);
                pool::release_frame(frame);
            }
        });
    });
}

impl Drop for FullQueues<'_> {
    /// Lets the heap's lock go; if a sweep found it taken and left the
    /// mailbox, notes the sweep's work for a later one, in case the owner
    /// makes no refill that drains it.
    fn drop(&mut self) {
        // SAFETY: the guard is being dropped, once.
        if unsafe { self.let_go() } {
            pool::note_emptied_in_mailbox();
        }
    }
}

/// The lock of `record`'s heap: if free, or (`patient`) once its holder
/// lets it go within [`TRIM_TRIES`] tries. The last try marks a lock it
/// finds taken, so that its holder notes the sweep's work as it lets go.
fn lock(record: &HeapRecord, patient: bool) -> Option<FullQueues<'_>> {
    let mut spins = 0;
    for _ in 1..if patient { TRIM_TRIES } else { 1 } {
        if let Some(full) = record.try_lock_full() {
            return Some(full);
        }
        backoff(&mut spins);
    }
    record.try_lock_full_or_mark()
}

/// One heap's part of a sweep: with its lock, takes the spans of its
/// mailbox, and `release`s each one on the full queue whose every slot out
/// is back (off the queue, to the pool); the others go back in the
/// mailbox. A heap whose lock is taken is at work, and drains its mailbox
/// at its next refill: the lock is marked, and its holder, letting it go,
/// notes the sweep's work so that a later sweep looks again, in case it
/// makes none. The note is the holder's, not the sweep's, so that a lock
/// never let go (in a forked child, held by a thread the fork left out)
/// brings no sweep back to it. `span_of` finds a frame's span (the
/// region's; the models' own).
pub(crate) fn sweep_heap<'a>(
    record: &'a HeapRecord,
    patient: bool,
    span_of: impl Fn(Frame) -> &'a Span,
    mut release: impl FnMut(&mut FullQueues<'a>, Frame),
) {
    let Some(mut full) = lock(record, patient) else {
        return;
    };
    let mut next = record.mailbox.take_all();
    while let Some(frame) = Frame::from_link(next) {
        let span = span_of(frame);
        // Read before the span goes back in the mailbox, which relinks it.
        next = span.mail_next.load(Ordering::Relaxed);
        let owner = span.owner();
        check!(
            ptr::eq(owner.heap(), record),
            "a span in another heap's mailbox"
        );
        // A span its owner moved to the avail queue (a local free) is the
        // owner's alone. On the full queue, `used` counts the span's slots
        // and stays so while the lock is held.
        if owner.on_full_queue() && remote::take_emptied(span, span.used()) {
            release(&mut full, frame);
        } else {
            record.mailbox.push(frame, &span.mail_next);
        }
    }
}
