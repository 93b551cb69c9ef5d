//! The remote word: how slots freed by other threads get back to a span.
//!
//! Each span has one 64-bit atomic word:
//!
//! ```text
//! bits  0..32  head: offset of the first slot on the remote list
//! bits 32..56  count: slots on the remote list; once abandoned, slots
//!              still out of the span
//! bit  56      ARMED: the span sits on its owner's full queue; the next
//!              remote free must tell the owner
//! bit  57      NOTIFYING: a freer is putting the span in the owner's
//!              mailbox; the owner's heap must stay alive until it clears
//! bit  58      IN_MAILBOX: the span is linked in its owner's mailbox and
//!              must not leave the heap until the owner takes it out
//! bit  59      ABANDONED: the owner thread exited; frees only count down,
//!              and the free that brings the count to zero reclaims the span
//! ```
//!
//! A freer pushes its slot (and possibly takes ARMED, setting NOTIFYING and
//! IN_MAILBOX, then pushes the span onto the owner's mailbox) with one
//! compare-and-swap; the owner takes the whole list with one. Because head, count and flags change together, no state is seen
//! half-updated and no separate lock is needed.
//!
//! Every decision is made from the word a compare-and-swap replaced, never
//! from a read after it: once a free or an abandonment has published its
//! word, another thread may reclaim the span, reset it and hand the frame to
//! a new owner, so anything read from the span afterwards may belong to
//! someone else. That is why abandonment moves the owner's count of slots
//! out into the word itself.

use crate::fatal::fatal;
use crate::sync::{backoff, window, Ordering};
use crate::types::{owner_heap, Span, NIL};

const HEAD_MASK: u64 = 0xFFFF_FFFF;
const COUNT_ONE: u64 = 1 << 32;
const COUNT_MASK: u64 = 0x00FF_FFFF << 32;
pub(crate) const ARMED: u64 = 1 << 56;
pub(crate) const NOTIFYING: u64 = 1 << 57;
pub(crate) const IN_MAILBOX: u64 = 1 << 58;
pub(crate) const ABANDONED: u64 = 1 << 59;

/// Offset of the first slot on the remote list.
#[inline]
pub(crate) fn head(word: u64) -> u32 {
    (word & HEAD_MASK) as u32
}

/// Slots on the remote list.
#[inline]
pub(crate) fn count(word: u64) -> u32 {
    ((word & COUNT_MASK) >> 32) as u32
}

/// What a remote free leaves for its caller to do.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// Nothing more.
    Done,
    /// The span was armed: put it in the owner's mailbox, then clear
    /// NOTIFYING.
    Notify,
    /// The span was abandoned and this free was its last slot: reclaim it.
    Reclaim,
}

/// Pushes one slot onto the remote list of a span in the common state (owned
/// and not armed): one compare-and-swap, nothing else. Returns false, having
/// done nothing, when the span is armed or abandoned: the caller then takes
/// [`push_chain`], which handles both.
///
/// # Safety
/// - As for [`push_chain`], for a chain of the one slot at `offset`.
#[inline]
pub(crate) unsafe fn push_plain(span: &Span, offset: u32, mut link_last: impl FnMut(u32)) -> bool {
    let mut word = span.remote.load(Ordering::Relaxed);
    loop {
        if word & (ARMED | ABANDONED) != 0 {
            return false;
        }
        // Nobody reads the link until the compare-and-swap below publishes it.
        link_last(if count(word) == 0 { NIL } else { head(word) });
        // No overflow: the count stays below the span's slots (2^24 > any).
        let new = (word & !HEAD_MASK).wrapping_add(COUNT_ONE) | offset as u64;
        window();
        // Release: the link is visible to the owner that takes the list.
        match span
            .remote
            .compare_exchange_weak(word, new, Ordering::Release, Ordering::Relaxed)
        {
            Ok(_) => return true,
            Err(seen) => word = seen,
        }
    }
}

/// Pushes a chain of `n` free slots onto the span's remote list, the first
/// at `first_offset`. `link_last` writes the link of the chain's last slot
/// (so a remote list always ends in [`NIL`]); earlier links are the
/// caller's.
///
/// # Safety
/// - The chain's slots belong to `span`, are out of it (counted in `used`),
///   and are owned by the caller, who gives them up.
pub(crate) unsafe fn push_chain(
    span: &Span,
    first_offset: u32,
    n: u32,
    mut link_last: impl FnMut(u32),
) -> Pushed {
    let add = (n as u64) << 32;
    let mut word = span.remote.load(Ordering::Relaxed);
    loop {
        let new = if word & ABANDONED != 0 {
            if count(word) < n {
                fatal("batch-alloc: more slots freed into a span than were out (double free?)");
            }
            word.wrapping_sub(add)
        } else {
            // Nobody reads the link until the compare-and-swap publishes it.
            link_last(if count(word) == 0 { NIL } else { head(word) });
            let mut new = (word & !HEAD_MASK).wrapping_add(add) | first_offset as u64;
            if word & ARMED != 0 {
                new = (new & !ARMED) | NOTIFYING | IN_MAILBOX;
            }
            new
        };
        window();
        // Release: the links are visible to the owner that takes the list,
        // and this thread's writes to the slots happen before whoever
        // reclaims the span reuses them. Acquire: if this free reclaims, the
        // other freers' and the abandoning owner's writes are visible.
        match span
            .remote
            .compare_exchange_weak(word, new, Ordering::AcqRel, Ordering::Relaxed)
        {
            Ok(_) => {
                window();
                return if word & ABANDONED != 0 {
                    if count(new) == 0 {
                        Pushed::Reclaim
                    } else {
                        Pushed::Done
                    }
                } else if word & ARMED != 0 {
                    Pushed::Notify
                } else {
                    Pushed::Done
                };
            }
            Err(seen) => word = seen,
        }
    }
}

/// Puts the span (frame `frame`) in its owner's mailbox, then ends the
/// notification that a remote free into the armed span started. The owner
/// cannot exit meanwhile: retiring a span waits for NOTIFYING, which this
/// thread set, to clear.
#[cold]
pub(crate) fn notify_owner(frame: u32, span: &Span) {
    let owner = owner_heap(span.owner.load(Ordering::Acquire));
    // SAFETY: the owner is alive while NOTIFYING is set (see above), and
    // records are never freed.
    let mailbox = unsafe { &(*owner).mailbox };
    mailbox.push(frame, &span.mail_next);
    window();
    // Release: the mailbox push happens before the owner may go away.
    span.remote.fetch_and(!NOTIFYING, Ordering::Release);
}

/// What the owner asks of [`take`] besides taking the list.
#[derive(Clone, Copy)]
pub(crate) struct Take {
    /// The span came out of the mailbox: clear IN_MAILBOX.
    pub from_mailbox: bool,
    /// The span is on the full queue: arm it if nothing was freed.
    pub arm_if_empty: bool,
}

/// Whether the span is in, or on its way into, its owner's mailbox: a
/// plain load, for the owner.
#[inline]
pub(crate) fn in_mailbox(span: &Span) -> bool {
    span.remote.load(Ordering::Relaxed) & IN_MAILBOX != 0
}

/// Whether a free into the span should be pushed now rather than wait in
/// an outbox: its owner waits for one (armed), or is gone (abandoned). A
/// plain load.
#[inline]
pub(crate) fn needs_prompt_free(span: &Span) -> bool {
    span.remote.load(Ordering::Relaxed) & (ARMED | ABANDONED) != 0
}

/// Whether frees wait on the remote list: a plain load, for the owner to
/// skip [`take`] when there is nothing to take.
#[inline]
pub(crate) fn has_pending(span: &Span) -> bool {
    span.remote.load(Ordering::Relaxed) & COUNT_MASK != 0
}

/// Takes the remote list, owner only. Returns the list's first slot offset
/// and length (0 for none).
pub(crate) fn take(span: &Span, how: Take) -> (u32, u32) {
    let mut word = span.remote.load(Ordering::Relaxed);
    loop {
        let mut new = word & !(HEAD_MASK | COUNT_MASK);
        if how.from_mailbox {
            new &= !IN_MAILBOX;
        }
        // A freer still notifying would notify again once re-armed; the
        // owner waits for it (it only has to clear NOTIFYING) in `quiesce`.
        if how.arm_if_empty && count(word) == 0 && new & (IN_MAILBOX | NOTIFYING) == 0 {
            new |= ARMED;
        }
        if new == word {
            return (0, 0);
        }
        window();
        // Acquire: the links the freers wrote are visible.
        match span
            .remote
            .compare_exchange_weak(word, new, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => return (head(word), count(word)),
            Err(seen) => word = seen,
        }
    }
}

/// Arms a span the owner is moving to its full queue. False when frees are
/// already waiting on the remote list: the span is not full after all.
pub(crate) fn arm(span: &Span) -> bool {
    let mut word = span.remote.load(Ordering::Relaxed);
    loop {
        if count(word) != 0 {
            return false;
        }
        if word & (ARMED | IN_MAILBOX) != 0 {
            // Already armed, or the mailbox will bring it back.
            return true;
        }
        match span.remote.compare_exchange_weak(
            word,
            word | ARMED,
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => return true,
            Err(seen) => word = seen,
        }
    }
}

/// Waits until no freer is in the middle of notifying the owner, then
/// disarms the span so that none can start. Owner only; the window it waits
/// out is a few instructions long.
pub(crate) fn disarm(span: &Span) {
    let mut spins = 0;
    let mut word = span.remote.load(Ordering::Acquire);
    loop {
        if word & NOTIFYING != 0 {
            backoff(&mut spins);
            word = span.remote.load(Ordering::Acquire);
            continue;
        }
        if word & ARMED == 0 {
            return;
        }
        window();
        match span.remote.compare_exchange_weak(
            word,
            word & !ARMED,
            Ordering::Acquire,
            Ordering::Acquire,
        ) {
            Ok(_) => return,
            Err(seen) => word = seen,
        }
    }
}

/// Waits until no freer is in the middle of notifying the owner. Owner only.
pub(crate) fn quiesce(span: &Span) {
    let mut spins = 0;
    while span.remote.load(Ordering::Acquire) & NOTIFYING != 0 {
        backoff(&mut spins);
    }
}

/// Marks the span abandoned by its exiting owner, which has `used` slots
/// out of it (counting those on the remote list). The caller has disarmed
/// it (so no freer is notifying) and cleared its owner. The word then
/// counts the slots still out, and frees count it down. True if none is
/// out, so the caller reclaims the span now; decided from the word this
/// swap replaced, since once it is published the last free may reclaim the
/// span and a new owner may reuse it.
pub(crate) fn abandon(span: &Span, used: u32) -> bool {
    let mut word = span.remote.load(Ordering::Relaxed);
    loop {
        if word & (NOTIFYING | ARMED) != 0 {
            fatal("batch-alloc: abandoning a span a freer may still notify");
        }
        let Some(out) = used.checked_sub(count(word)) else {
            fatal("batch-alloc: more slots freed into a span than were out (double free?)");
        };
        let kept = word & !(IN_MAILBOX | HEAD_MASK | COUNT_MASK);
        let new = kept | ABANDONED | ((out as u64) << 32);
        window();
        // Release: the owner's writes to the span happen before the freer
        // that reclaims it resets it. Acquire: if this reclaims, the freers'
        // writes to the slots happen before the frame is reused.
        match span
            .remote
            .compare_exchange_weak(word, new, Ordering::AcqRel, Ordering::Relaxed)
        {
            Ok(_) => return out == 0,
            Err(seen) => word = seen,
        }
    }
}

/// In a child process just forked: a thread that was notifying the span's
/// owner does not exist here, so nobody will clear NOTIFYING; clear it.
/// Returns whether the span belongs in its owner's mailbox (its mailbox
/// push may or may not have happened).
pub(crate) fn forget_notifier_after_fork(span: &Span) -> bool {
    let word = span.remote.fetch_and(!NOTIFYING, Ordering::Relaxed);
    word & IN_MAILBOX != 0
}

/// Slots out of the span as the remote word and `used` count them, for
/// statistics: owned, `used` less what waits on the remote list; abandoned,
/// what the word counts.
pub(crate) fn slots_out(span: &Span) -> u32 {
    let word = span.remote.load(Ordering::Acquire);
    if word & ABANDONED != 0 {
        count(word)
    } else {
        span.used
            .load(Ordering::Relaxed)
            .saturating_sub(count(word))
    }
}
