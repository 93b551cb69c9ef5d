//! The remote free, in one place: how a slot freed on a thread other than
//! its span's owner gets back to the owner. A freeing thread pushes its
//! slots, a chain at a time (`outbox.rs` collects the chains), onto the
//! span's remote list ([`push_chain`]), which tells an owner that waits for
//! them ([`notify_owner`]) or reclaims an abandoned span whose last slot
//! this was. The owner takes a list back in one exchange and splices it
//! onto the span's free list: one span's ([`collect`]), or every span its
//! mailbox holds ([`take_mailbox`]). Where a span then goes among its
//! heap's class queues is `queues.rs`'s business. A push that leaves a
//! span in its owner's mailbox with every slot back notes it for a sweep
//! (`sweep.rs`), which, holding the owner's lock, takes such a span's list
//! in one compare-and-swap and gives the span to the pool
//! ([`take_emptied`]).
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
//! compare-and-swap; the owner takes the whole list with one. Because head,
//! count and flags change together, no state is seen half-updated and no
//! separate lock is needed.
//!
//! Every decision is made from the word a compare-and-swap replaced, never
//! from a read after it: once a free or an abandonment has published its
//! word, another thread may reclaim the span, reset it and hand the frame to
//! a new owner, so anything read from the span afterwards may belong to
//! someone else. That is why abandonment moves the owner's count of slots
//! out into the word itself.

use crate::base::fatal::{check, fatal};
use crate::base::frame::Frame;
use crate::base::sync::{backoff, window, Ordering};
use crate::memory::link::{self, tail_of, write_link};
use crate::memory::pool;
use crate::memory::region::{self, frame_base, Located};
use crate::memory::types::{OwnedHeap, Span, NIL, QUEUE_FULL};

const HEAD_MASK: u64 = 0xFFFF_FFFF;
const COUNT_SHIFT: u32 = 32;
const COUNT_MASK: u64 = 0x00FF_FFFF << COUNT_SHIFT;
pub(crate) const ARMED: u64 = 1 << 56;
pub(crate) const NOTIFYING: u64 = 1 << 57;
pub(crate) const IN_MAILBOX: u64 = 1 << 58;
pub(crate) const ABANDONED: u64 = 1 << 59;

/// A span's remote word, as one load or compare-and-swap saw it (the layout
/// is in the module docs). Its methods read the fields and flags and make
/// the words the protocol steps write, so that no step packs bits by hand.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RemoteWord(u64);

impl RemoteWord {
    /// Offset of the first slot on the remote list.
    #[inline(always)]
    pub(crate) fn head(self) -> u32 {
        (self.0 & HEAD_MASK) as u32
    }

    /// Slots on the remote list; once abandoned, slots still out.
    #[inline(always)]
    pub(crate) fn count(self) -> u32 {
        ((self.0 & COUNT_MASK) >> COUNT_SHIFT) as u32
    }

    /// Whether any of `flags` (`ARMED`, `NOTIFYING`, `IN_MAILBOX`,
    /// `ABANDONED`) is set.
    #[inline(always)]
    pub(crate) fn has(self, flags: u64) -> bool {
        self.0 & flags != 0
    }

    /// This word with `flags` set.
    #[inline(always)]
    fn with(self, flags: u64) -> RemoteWord {
        RemoteWord(self.0 | flags)
    }

    /// This word with `flags` cleared.
    #[inline(always)]
    fn without(self, flags: u64) -> RemoteWord {
        RemoteWord(self.0 & !flags)
    }

    /// The link a chain pushed onto this list ends in: the list's first
    /// slot, or [`NIL`] for an empty list.
    #[inline(always)]
    fn link_to_list(self) -> u32 {
        if self.count() == 0 {
            NIL
        } else {
            self.head()
        }
    }

    /// This word with a chain of `n` slots pushed in front, the first at
    /// `first`. No overflow: the count stays below the span's slots, and
    /// 2^24 is more than any span has.
    #[inline(always)]
    fn pushed(self, n: u32, first: u32) -> RemoteWord {
        let added = (self.0 & !HEAD_MASK).wrapping_add((n as u64) << COUNT_SHIFT);
        RemoteWord(added | first as u64)
    }

    /// This word with the list taken: no slots, the flags kept.
    #[inline(always)]
    fn taken(self) -> RemoteWord {
        self.without(HEAD_MASK | COUNT_MASK)
    }

    /// An abandoned span's word with `n` fewer slots out; the caller has
    /// checked that at least `n` are.
    #[inline(always)]
    fn counted_down(self, n: u32) -> RemoteWord {
        RemoteWord(self.0.wrapping_sub((n as u64) << COUNT_SHIFT))
    }

    /// This word abandoned with `out` slots still out: the list and the
    /// mailbox flag dropped (the owner is gone), the other flags kept.
    #[inline(always)]
    fn abandoned(self, out: u32) -> RemoteWord {
        self.taken()
            .without(IN_MAILBOX)
            .with(ABANDONED | ((out as u64) << COUNT_SHIFT))
    }
}

/// The span's remote word, loaded with `order`.
#[inline(always)]
fn load(span: &Span, order: Ordering) -> RemoteWord {
    RemoteWord(span.remote.load(order))
}

/// One weak compare-and-swap of the span's remote word; on failure, the
/// word seen.
#[inline(always)]
fn compare_exchange_weak(
    span: &Span,
    current: RemoteWord,
    new: RemoteWord,
    success: Ordering,
    failure: Ordering,
) -> Result<RemoteWord, RemoteWord> {
    span.remote
        .compare_exchange_weak(current.0, new.0, success, failure)
        .map(RemoteWord)
        .map_err(RemoteWord)
}

/// The span's remote word (an acquire load), for tests.
#[cfg(any(test, loom))]
pub(crate) fn word(span: &Span) -> RemoteWord {
    load(span, Ordering::Acquire)
}

/// What a push onto the remote list leaves to do ([`finish_push`]).
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
/// - As for [`push_to_list`], for a chain of the one slot at `offset`.
#[inline]
pub(crate) unsafe fn push_plain(span: &Span, offset: u32, mut link_last: impl FnMut(u32)) -> bool {
    let mut word = load(span, Ordering::Relaxed);
    loop {
        if word.has(ARMED | ABANDONED) {
            return false;
        }
        // Nobody reads the link until the compare-and-swap below publishes it.
        link_last(word.link_to_list());
        let new = word.pushed(1, offset);
        window();
        // Release: the link is visible to the owner that takes the list.
        // Acquire: see `emptied_in_mailbox`.
        match compare_exchange_weak(span, word, new, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(_) => {
                emptied_in_mailbox(span, new);
                return true;
            }
            Err(seen) => word = seen,
        }
    }
}

/// After a push that published `new`, a word with no notification to
/// make: notes a sweep's work if the span waits in its owner's mailbox with
/// every slot out of it back. The note is for a span on the full queue,
/// whose `used` counts its slots; the push does not know the queue (the
/// owner's free may have moved the span to the avail queue since it was
/// mailed) and compares with `used` either way.
///
/// Acquire, on the push: if the span is on the full queue and this push
/// brings the count to its slot count, the read returns that count. The
/// owner stored it before handing out the slots of the refill that filled
/// the span; each freer got its slot through a hand-over that followed,
/// and the pushes are read-modify-writes of one word, each acquiring the
/// ones before it, so this one comes after every push it counts and every
/// hand-over before them (`notify_owner` argues its read the same way).
///
/// The read is of the owner's line. On a span on the full queue the owner
/// writes it only as it takes the span off, under the lock; one the owner
/// moved to its avail queue has `used` written there, without the lock,
/// by the owner's frees and refills, and the read may take the line from
/// the owner: false sharing, and no more, since
/// `used` is atomic, and a span on the avail queue is its owner's to give
/// back, noted or not. A span drained or reused meanwhile may read as
/// anything: a note too many costs a sweep that finds nothing.
#[inline(always)]
fn emptied_in_mailbox(span: &Span, new: RemoteWord) {
    if new.has(IN_MAILBOX) && !new.has(NOTIFYING) && new.count() == span.used() {
        pool::note_emptied_in_mailbox();
    }
}

/// Pushes one freed slot, at `at`, of `span`, onto the span's remote list
/// now: [`push_plain`]'s one compare-and-swap in the common state, and
/// [`push_chain`] for a span that is armed or abandoned, out of line.
/// `link` writes the slot's link.
///
/// # Safety
/// - As for [`push_to_list`], for a chain of the one slot `at` locates.
#[inline(always)]
pub(crate) unsafe fn push_one(at: Located, span: &Span, link: impl FnMut(u32) + Copy) {
    // SAFETY: forwarded contract.
    if unsafe { push_plain(span, at.offset_in_frame(), link) } {
        return;
    }
    // SAFETY: forwarded contract; the plain push wrote nothing it kept.
    unsafe { push_one_notified(at, span, link) }
}

/// [`push_one`] into a span that is armed or abandoned: the push that
/// notifies its owner, or gives its slot back to the abandoned span's word.
///
/// # Safety
/// - As for [`push_one`].
#[cold]
#[inline(never)]
unsafe fn push_one_notified(at: Located, span: &Span, link: impl FnMut(u32)) {
    // SAFETY: forwarded contract.
    unsafe { push_chain(at.frame(), span, at.offset_in_frame(), 1, link) };
}

/// Pushes a chain of `n` free slots onto the remote list of `span` (of
/// frame `frame`), the first at `first_offset`, and does what the push
/// leaves to do: tells an owner waiting for a free, or reclaims an
/// abandoned span whose last slots these were. `link_last` writes the link
/// of the chain's last slot (so a remote list always ends in [`NIL`]);
/// earlier links are the caller's.
///
/// # Safety
/// - As for [`push_to_list`].
#[inline]
pub(crate) unsafe fn push_chain(
    frame: Frame,
    span: &Span,
    first_offset: u32,
    n: u32,
    link_last: impl FnMut(u32),
) {
    // SAFETY: forwarded contract.
    let pushed = unsafe { push_to_list(span, first_offset, n, link_last) };
    finish_push(pushed, frame, span);
}

/// The word step of [`push_chain`]: pushes the chain with one
/// compare-and-swap and says what is left to do.
///
/// # Safety
/// - The chain's slots belong to `span`, are out of it (counted in `used`),
///   and are owned by the caller, who gives them up.
pub(crate) unsafe fn push_to_list(
    span: &Span,
    first_offset: u32,
    n: u32,
    mut link_last: impl FnMut(u32),
) -> Pushed {
    let mut word = load(span, Ordering::Relaxed);
    loop {
        let new = if word.has(ABANDONED) {
            if word.count() < n {
                fatal("batch-alloc: more slots freed into a span than were out (double free?)");
            }
            word.counted_down(n)
        } else {
            // Nobody reads the link until the compare-and-swap publishes it.
            link_last(word.link_to_list());
            let new = word.pushed(n, first_offset);
            if word.has(ARMED) {
                new.without(ARMED).with(NOTIFYING | IN_MAILBOX)
            } else {
                new
            }
        };
        window();
        // Release: the links are visible to the owner that takes the list,
        // and this thread's writes to the slots happen before whoever
        // reclaims the span reuses them. Acquire: if this free reclaims, the
        // other freers' and the abandoning owner's writes are visible.
        match compare_exchange_weak(span, word, new, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(_) => {
                window();
                return if word.has(ABANDONED) {
                    if new.count() == 0 {
                        Pushed::Reclaim
                    } else {
                        Pushed::Done
                    }
                } else if word.has(ARMED) {
                    Pushed::Notify
                } else {
                    emptied_in_mailbox(span, new);
                    Pushed::Done
                };
            }
            Err(seen) => word = seen,
        }
    }
}

/// Finishes what a push asked for: telling an owner whose span was full, or
/// reclaiming an abandoned span whose last slot this was.
#[inline]
fn finish_push(pushed: Pushed, frame: Frame, span: &Span) {
    match pushed {
        Pushed::Done => {}
        Pushed::Notify => notify_owner(frame, span),
        Pushed::Reclaim => {
            // SAFETY: the span is abandoned and every slot is free: nobody
            // else can reach it, and abandoned spans are never armed.
            unsafe { pool::release_frame(frame) }
        }
    }
}

/// Puts the span (frame `frame`) in its owner's mailbox, then ends the
/// notification that a remote free into the armed span started. The owner
/// cannot exit meanwhile: retiring a span waits for NOTIFYING, which this
/// thread set, to clear.
///
/// If every slot out of the span is back when the notification ends (this
/// free was the last, or others came meanwhile, which left the note to
/// this thread: see `emptied_in_mailbox`), the span is in the mailbox
/// emptied, and this notes a sweep's work.
#[cold]
pub(crate) fn notify_owner(frame: Frame, span: &Span) {
    let owner = span.owner_acquire().heap();
    // SAFETY: the owner is alive while NOTIFYING is set (see above), and
    // records are never freed.
    let mailbox = unsafe { &(*owner).mailbox };
    mailbox.push(frame, &span.mail_next);
    window();
    // Release: the mailbox push happens before the owner may go away.
    // Acquire: the pushes made while this notified are visible.
    let word = RemoteWord(span.remote.fetch_and(!NOTIFYING, Ordering::AcqRel));
    // `used` is read after the word, not before: NOTIFYING does not stop
    // the owner from changing it (its own free into the span moves it to
    // the avail queue, a refill takes the slots back and parks it full
    // again), so an earlier read could miss the count a refill stored and
    // compare it with frees of the slots that refill handed out. Read now:
    // - If the span is on the full queue with every slot on the list, the
    //   read returns the slot count. The owner stored it before it handed
    //   out the slots of the refill that filled the span; each freer got
    //   its slot through a hand-over (a channel, a join) that followed, and
    //   the pushes, the owner's takes and this `fetch_and` are
    //   read-modify-writes of one word, the pushes' releases acquired by
    //   this one, so it comes after every push it counts and every
    //   hand-over before them. A later store is the owner's drain or its
    //   free into the span, which takes the span off the full queue.
    // - Otherwise a note may be made for nothing: the count matched a
    //   `used` the owner changed since (the span is then its to take, and
    //   pushes from then on find NOTIFYING clear and note for themselves),
    //   or a sweep released the span and a new owner reused the frame.
    //   A note too many costs a sweep that finds nothing.
    if word.count() == span.used() {
        pool::note_emptied_in_mailbox();
    }
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
    load(span, Ordering::Relaxed).has(IN_MAILBOX)
}

/// Whether a free into the span should be pushed now rather than wait in
/// an outbox: its owner waits for one (armed), or is gone (abandoned). A
/// plain load.
#[inline]
pub(crate) fn needs_prompt_free(span: &Span) -> bool {
    load(span, Ordering::Relaxed).has(ARMED | ABANDONED)
}

/// Whether frees wait on the remote list: a plain load, for the owner to
/// skip [`take`] when there is nothing to take.
#[inline]
pub(crate) fn has_pending(span: &Span) -> bool {
    load(span, Ordering::Relaxed).count() != 0
}

/// Takes the remote list, owner only. Returns the list's first slot offset
/// and length (0 for none).
pub(crate) fn take(span: &Span, how: Take) -> (u32, u32) {
    let mut word = load(span, Ordering::Relaxed);
    loop {
        let mut new = word.taken();
        if how.from_mailbox {
            new = new.without(IN_MAILBOX);
        }
        // A freer still notifying would notify again once re-armed; the
        // owner waits for it (it only has to clear NOTIFYING) in `quiesce`.
        if how.arm_if_empty && word.count() == 0 && !new.has(IN_MAILBOX | NOTIFYING) {
            new = new.with(ARMED);
        }
        if new == word {
            return (0, 0);
        }
        window();
        // Acquire: the links the freers wrote are visible.
        match compare_exchange_weak(span, word, new, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => return (word.head(), word.count()),
            Err(seen) => word = seen,
        }
    }
}

/// Arms a span the owner is moving to its full queue. False when frees are
/// already waiting on the remote list: the span is not full after all. A
/// span already armed, or still in the mailbox (a notification came before
/// the owner took back its slots and filled it again), is left as it is:
/// the owner's next drain finds the latter, and re-arms it if nothing was
/// freed. Release: the free that takes ARMED sees what the owner wrote
/// before. The notes' reads of `used` do not rest on it (a span parked
/// while in the mailbox is not written here, and `take`'s re-arm is an
/// acquire only): see `emptied_in_mailbox`.
pub(crate) fn arm(span: &Span) -> bool {
    let mut word = load(span, Ordering::Relaxed);
    loop {
        if word.count() != 0 {
            return false;
        }
        if word.has(ARMED | IN_MAILBOX) {
            // Already armed, or the mailbox will bring it back.
            return true;
        }
        match compare_exchange_weak(
            span,
            word,
            word.with(ARMED),
            Ordering::Release,
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
    let mut word = load(span, Ordering::Acquire);
    loop {
        if word.has(NOTIFYING) {
            backoff(&mut spins);
            word = load(span, Ordering::Acquire);
            continue;
        }
        if !word.has(ARMED) {
            return;
        }
        window();
        match compare_exchange_weak(
            span,
            word,
            word.without(ARMED),
            Ordering::Acquire,
            Ordering::Acquire,
        ) {
            Ok(_) => return,
            Err(seen) => word = seen,
        }
    }
}

/// Waits until no freer is in the middle of notifying the owner. Owner only.
fn quiesce(span: &Span) {
    let mut spins = 0;
    while load(span, Ordering::Acquire).has(NOTIFYING) {
        backoff(&mut spins);
    }
}

// ---- the owner takes the slots back ----

/// Takes the span's remote list onto its own free list. Owner only.
#[cold]
pub(crate) fn collect(frame: Frame, span: &Span) {
    let (head, n) = take(
        span,
        Take {
            from_mailbox: false,
            arm_if_empty: false,
        },
    );
    // SAFETY: this thread owns the span; no local reference is live.
    unsafe { merge(frame, span, head, n) };
}

/// The spans remote frees put in a heap's mailbox, taken out of it at once:
/// [`take_mailbox`]. Holds the owner's handle, so it stays on the owner
/// thread.
pub(crate) struct Mailed {
    heap: OwnedHeap,
    /// The next span's frame link, or 0.
    next: u32,
}

/// Empties `heap`'s mailbox: each span it held comes out of the iterator
/// with the slots freed into it already on its free list, and how many
/// there were; the caller, its owner, puts the span where they leave it
/// (`queues.rs`). Owner only.
pub(crate) fn take_mailbox(heap: OwnedHeap) -> Mailed {
    let next = heap.mailbox.take_all();
    window();
    Mailed { heap, next }
}

impl Iterator for Mailed {
    type Item = (Frame, &'static Span, u32);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let frame = Frame::from_link(self.next)?;
        let span = region::span(frame);
        self.next = span.mail_next.load(Ordering::Relaxed);
        check!(
            span.owner().heap() == self.heap.as_ptr(),
            "a span in another heap's mailbox"
        );
        // SAFETY: spans in the mailbox belong to its heap, `self.heap`,
        // this thread's; no local reference is live.
        let on_full_queue = unsafe { span.local().queue } == QUEUE_FULL;
        let (head, n) = take_mailed(span, on_full_queue);
        // SAFETY: as above.
        unsafe { merge(frame, span, head, n) };
        Some((frame, span, n))
    }
}

/// Takes the remote list of a span just out of its owner's mailbox,
/// clearing IN_MAILBOX; a span still on the full queue (`on_full_queue`)
/// that got nothing is armed again. Owner only.
pub(crate) fn take_mailed(span: &Span, on_full_queue: bool) -> (u32, u32) {
    // The pusher has linked the span in; let it finish clearing NOTIFYING
    // so that re-arming cannot start a second notification.
    quiesce(span);
    take(
        span,
        Take {
            from_mailbox: true,
            arm_if_empty: on_full_queue,
        },
    )
}

/// Splices a remote list of `n` slots starting at `head` onto the span's
/// free list and stops counting them as used. Owner only.
///
/// # Safety
/// - This thread owns the span, the list was just taken from its remote
///   word, and no reference from `Span::local` for it is live.
unsafe fn merge(frame: Frame, span: &Span, head: u32, n: u32) {
    if n == 0 {
        return;
    }
    // SAFETY: the caller owns the span and holds no reference to its state.
    let sl = unsafe { span.local() };
    if sl.free_head != NIL {
        let base = frame_base(frame);
        let key = link::key(span);
        // SAFETY: the list's slots are free slots of this span whose links
        // the take's acquire made visible.
        let tail = unsafe { tail_of(base, head, n, key) };
        // SAFETY: the tail is a free slot of this span, now the owner's.
        unsafe { write_link(base.wrapping_add(tail as usize), sl.free_head, key) };
    }
    sl.free_head = head;
    let Some(used) = span.used().checked_sub(n) else {
        fatal("batch-alloc: more slots freed into a span than were out");
    };
    span.set_used(used);
    check!(
        // SAFETY: `sl` is the owner's; the merged links are visible (above).
        unsafe { span.is_valid(sl, frame_base(frame)) },
        "span counts after a drain"
    );
}

// ---- a sweep takes an emptied span ----

/// For a sweep, holding the lock of the span's owner heap, which parked
/// the span full (so `used` counts its slots, and nobody changes it while
/// the lock is held): a span it took out of the owner's mailbox. If every
/// slot out of the span is on its remote list, takes the list (and clears
/// IN_MAILBOX) and returns true: the span is empty, off the mailbox, with
/// no notifier, and nobody will push to it again (a push needs a slot
/// out), so the sweep may release it. False otherwise, having changed
/// nothing: the sweep puts the span back in the mailbox.
///
/// A span whose notifier is still at work (NOTIFYING: it has put the span
/// in the mailbox and not yet said so) is left too, rather than waited
/// for with the owner's lock held: the notifier looks at the count when
/// it is done, and notes the span for the next sweep if it is emptied
/// (`notify_owner`). No notification can start meanwhile: only an armed
/// span notifies, a span in the mailbox is not armed, and only its owner
/// arms it again, under the lock the sweep holds.
pub(crate) fn take_emptied(span: &Span, used: u32) -> bool {
    let mut word = load(span, Ordering::Acquire);
    loop {
        if !word.has(IN_MAILBOX) || word.has(ARMED | ABANDONED) {
            fatal("batch-alloc: a span in a mailbox that is not marked so");
        }
        if used == 0 || word.count() != used || word.has(NOTIFYING) {
            return false;
        }
        window();
        // Acquire: the freers' writes to the slots happen before the frame
        // is reused.
        let new = word.taken().without(IN_MAILBOX);
        match compare_exchange_weak(span, word, new, Ordering::Acquire, Ordering::Acquire) {
            Ok(_) => return true,
            Err(seen) => word = seen,
        }
    }
}

// ---- the owner's exit ----

/// Marks the span abandoned by its exiting owner, which has `used` slots
/// out of it (counting those on the remote list). The caller has disarmed
/// it (so no freer is notifying) and cleared its owner. The word then
/// counts the slots still out, and frees count it down. True if none is
/// out, so the caller reclaims the span now; decided from the word this
/// swap replaced, since once it is published the last free may reclaim the
/// span and a new owner may reuse it.
pub(crate) fn abandon(span: &Span, used: u32) -> bool {
    let mut word = load(span, Ordering::Relaxed);
    loop {
        if word.has(NOTIFYING | ARMED) {
            fatal("batch-alloc: abandoning a span a freer may still notify");
        }
        let Some(out) = used.checked_sub(word.count()) else {
            fatal("batch-alloc: more slots freed into a span than were out (double free?)");
        };
        let new = word.abandoned(out);
        window();
        // Release: the owner's writes to the span happen before the freer
        // that reclaims it resets it. Acquire: if this reclaims, the freers'
        // writes to the slots happen before the frame is reused.
        match compare_exchange_weak(span, word, new, Ordering::AcqRel, Ordering::Relaxed) {
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
    let word = RemoteWord(span.remote.fetch_and(!NOTIFYING, Ordering::Relaxed));
    word.has(IN_MAILBOX)
}

/// Slots out of the span as the remote word and `used` count them, for
/// statistics: owned, `used` less what waits on the remote list; abandoned,
/// what the word counts.
pub(crate) fn slots_out(span: &Span) -> u32 {
    let word = load(span, Ordering::Acquire);
    if word.has(ABANDONED) {
        word.count()
    } else {
        span.used().saturating_sub(word.count())
    }
}
