//! Per-thread heaps: the owner side of spans.
//!
//! A thread gets a heap at its first refill, in a record (see `record.rs`)
//! that outlives the thread. The thread-local that names the current record
//! has a `const` initialiser and no destructor, so `dealloc` may read it at
//! any point of a thread's life, including other thread-locals'
//! destructors. A second thread-local with a destructor, registered at the
//! first refill, retires the heap when the thread exits: its spans are
//! released or abandoned, and frees that arrive later still work.

use core::cell::Cell;
use core::ptr;

use crate::class::{self, NUM_CLASSES};
use crate::link::{self, tail_of, write_link};
use crate::os;
use crate::record::claim_record;
use crate::region::{self, frame_base};
use crate::remote::{self, Pushed, Take};
use crate::sync::{window, Ordering, RunOnce};
use crate::types::{
    link_to, linked_frame, owner_heap, owner_word, ClassQueues, HeapLocal, HeapRecord, Span, NIL,
    NO_HEAP, QUEUE_AVAIL, QUEUE_FULL, QUEUE_NONE,
};

thread_local! {
    static CURRENT: Cell<*mut HeapRecord> = const { Cell::new(NO_HEAP) };
    static EXITED: Cell<bool> = const { Cell::new(false) };
    static EXIT_GUARD: ExitGuard = const { ExitGuard };
}

struct ExitGuard;

impl Drop for ExitGuard {
    fn drop(&mut self) {
        retire_current();
    }
}

/// This thread's heap record, or [`NO_HEAP`] before its first refill and
/// after it exits. Safe in the allocator path at any point of a thread's
/// life.
#[inline(always)]
pub(crate) fn current() -> *mut HeapRecord {
    CURRENT.try_with(Cell::get).unwrap_or(NO_HEAP)
}

/// This thread's heap, made on first use. `None` once the thread is exiting
/// or when the region cannot be reserved.
pub(crate) fn current_or_init() -> Option<&'static HeapRecord> {
    let heap = current();
    if heap != NO_HEAP {
        // SAFETY: records are never freed.
        return Some(unsafe { &*heap });
    }
    init_current()
}

#[cold]
fn init_current() -> Option<&'static HeapRecord> {
    if EXITED.try_with(Cell::get).unwrap_or(true) || !region::ensure_ready() {
        return None;
    }
    static FORK_HOOKS: RunOnce = RunOnce::new();
    FORK_HOOKS.run(|| {
        os::at_fork(nothing_before_fork, nothing_after_fork, after_fork_in_child);
    });
    // Registering the guard may allocate; do it before any span is touched.
    EXIT_GUARD.try_with(|_| ()).ok()?;
    let record = claim_record()?;
    CURRENT.set(record as *const HeapRecord as *mut HeapRecord);
    Some(record)
}

// ---- class queues ----

fn queue_head(local: &mut HeapLocal, class: u8, queue: u8) -> &mut u32 {
    let queues = local.queues_of(class);
    match queue {
        QUEUE_AVAIL => &mut queues.avail,
        _ => &mut queues.full,
    }
}

/// Puts a span at the front of one of its class's queues.
///
/// # Safety
/// - This thread owns the span, which is on no queue, and holds no
///   reference from `Span::local` for it or its new neighbour.
pub(crate) unsafe fn push_front(local: &mut HeapLocal, frame: u32, queue: u8) {
    let span = region::span(frame);
    if queue == QUEUE_AVAIL {
        // SAFETY: the caller holds no reference to this span's state.
        let class = unsafe { span.local().class };
        if let Some(head) = linked_frame(local.queues_of(class).avail) {
            let old = region::span(head);
            if head != frame && old.used() == 0 {
                // The old head would stop being the head while empty.
                // SAFETY: the old head is another span of this heap.
                unsafe { release_if_idle(local, head, old) };
            }
        }
    }
    // SAFETY: the caller owns the span and holds no reference to its state.
    let sl = unsafe { span.local() };
    let head = queue_head(local, sl.class, queue);
    sl.queue = queue;
    let heap = owner_heap(span.owner.load(Ordering::Relaxed));
    span.owner
        .store(owner_word(heap, queue == QUEUE_FULL), Ordering::Relaxed);
    sl.prev = 0;
    sl.next = *head;
    if let Some(next) = linked_frame(*head) {
        // SAFETY: the neighbour is another span of this heap.
        unsafe { region::span(next).local().prev = link_to(frame) };
    }
    *head = link_to(frame);
}

/// Takes a span off whichever queue holds it.
///
/// # Safety
/// - This thread owns the span and holds no reference from `Span::local`
///   for it or its neighbours.
pub(crate) unsafe fn unlink(local: &mut HeapLocal, frame: u32) {
    // SAFETY: the caller owns the span and holds no reference to its state.
    let sl = unsafe { region::span(frame).local() };
    let (prev, next, queue) = (sl.prev, sl.next, sl.queue);
    sl.queue = QUEUE_NONE;
    sl.prev = 0;
    sl.next = 0;
    if let Some(prev_frame) = linked_frame(prev) {
        // SAFETY: the neighbour is another span of this heap.
        unsafe { region::span(prev_frame).local().next = next };
    } else if queue != QUEUE_NONE {
        *queue_head(local, sl.class, queue) = next;
    }
    if let Some(next_frame) = linked_frame(next) {
        // SAFETY: the neighbour is another span of this heap.
        unsafe { region::span(next_frame).local().prev = prev };
    }
}

/// Moves a span between its class's queues.
///
/// # Safety
/// - As for [`unlink`].
pub(crate) unsafe fn move_to(local: &mut HeapLocal, frame: u32, queue: u8) {
    // SAFETY: forwarded contract.
    unsafe {
        unlink(local, frame);
        push_front(local, frame, queue);
    }
}

// ---- slots coming back to the owner ----

/// Splices a remote list of `n` slots starting at `head` onto the span's
/// free list and stops counting them as used. Owner only.
///
/// # Safety
/// - This thread owns the span, the list was just taken from its remote
///   word, and no reference from `Span::local` for it is live.
pub(crate) unsafe fn merge_remote(frame: u32, span: &Span, head: u32, n: u32) {
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
        crate::fatal::fatal("batch-alloc: more slots freed into a span than were out");
    };
    span.set_used(used);
}

/// Takes every span that remote frees put in the mailbox off the full
/// queue, collecting what was freed. Owner only.
#[inline]
pub(crate) fn drain_mailbox(heap: &HeapRecord, local: &mut HeapLocal) {
    if !heap.mailbox.is_empty() {
        drain_mailbox_slow(heap, local);
    }
}

#[cold]
fn drain_mailbox_slow(heap: &HeapRecord, local: &mut HeapLocal) {
    let mut top = heap.mailbox.take_all();
    window();
    while let Some(frame) = linked_frame(top) {
        let span = region::span(frame);
        top = span.mail_next.load(Ordering::Relaxed);
        // The pusher has linked the span in; let it finish clearing
        // NOTIFYING so that re-arming cannot start a second notification.
        remote::quiesce(span);
        // SAFETY: spans in the mailbox belong to this heap.
        let in_full = unsafe { span.local().queue } == QUEUE_FULL;
        let (head, n) = remote::take(
            span,
            Take {
                from_mailbox: true,
                arm_if_empty: in_full,
            },
        );
        // SAFETY: this thread owns the span; no local reference is live.
        unsafe {
            merge_remote(frame, span, head, n);
            if n != 0 && in_full {
                move_to(local, frame, QUEUE_AVAIL);
            }
        }
        if span.used() == 0 {
            span_emptied(local, frame, span);
        }
    }
}

/// A span on this heap has no slot out: the head of its avail queue starts
/// over with a fresh run, any other goes back to the pool. Owner only.
pub(crate) fn span_emptied(local: &mut HeapLocal, frame: u32, span: &Span) {
    // SAFETY: the span belongs to this heap; no other local reference is live.
    let sl = unsafe { span.local() };
    sl.restart();
    let class = sl.class;
    if sl.queue == QUEUE_FULL {
        // SAFETY: as above; `sl` is not used past this point.
        unsafe { move_to(local, frame, QUEUE_AVAIL) };
    } else if local.queues_of(class).avail != link_to(frame) {
        // SAFETY: as above.
        unsafe { release_if_idle(local, frame, span) };
    }
}

/// Releases an empty span unless it is in the mailbox, which must be drained
/// first; the drain looks at it again.
///
/// # Safety
/// - This thread owns the span, which is empty, and holds no reference
///   from `Span::local` for it or its neighbours.
unsafe fn release_if_idle(local: &mut HeapLocal, frame: u32, span: &Span) {
    if !remote::in_mailbox(span) {
        // SAFETY: forwarded contract; no freer notifies a span not in the
        // mailbox.
        unsafe {
            unlink(local, frame);
            release(frame, span);
        }
    }
}

/// Returns a span with nothing out to the pool.
///
/// # Safety
/// - The caller holds the span alone, no slot is out, it is on no queue and
///   no freer is notifying.
pub(crate) unsafe fn release(frame: u32, span: &Span) {
    // SAFETY: the caller holds the span alone.
    let class = unsafe { span.local().class };
    // SAFETY: forwarded contract.
    unsafe { region::release_frame(frame, class::shape(class).span_bytes()) };
}

/// After a local free or give-back: the span may have left the full queue or
/// become empty. Owner only.
#[cold]
#[inline(never)]
pub(crate) fn after_local_free(heap: &HeapRecord, frame: u32, span: &Span) {
    // SAFETY: this thread owns the heap (the span's owner is its record) and
    // the caller holds no reference to its state.
    let local = unsafe { heap.local() };
    // SAFETY: as above, for the span.
    if unsafe { span.local().queue } == QUEUE_FULL {
        // SAFETY: as above.
        unsafe { move_to(local, frame, QUEUE_AVAIL) };
    }
    if span.used() == 0 {
        span_emptied(local, frame, span);
    }
}

/// Finishes what a remote push asked for: telling an owner whose span was
/// full, or reclaiming an abandoned span whose last slot this was.
#[inline]
pub(crate) fn after_remote_push(pushed: Pushed, frame: u32, span: &Span) {
    match pushed {
        Pushed::Done => {}
        Pushed::Notify => remote::notify_owner(frame, span),
        Pushed::Reclaim => {
            // SAFETY: the span is abandoned and every slot is free: nobody
            // else can reach it, and abandoned spans are never armed.
            unsafe { release(frame, span) }
        }
    }
}

// ---- thread exit ----

fn retire_current() {
    let heap = current();
    let _ = EXITED.try_with(|e| e.set(true));
    if heap == NO_HEAP {
        return;
    }
    // SAFETY: records are never freed; this thread owns it and nothing else
    // of this thread touches it while the guard runs.
    let record = unsafe { &*heap };
    // SAFETY: as above.
    let local = unsafe { record.local() };
    drain_mailbox(record, local);
    for class in 0..NUM_CLASSES {
        let queues = local.queues[class];
        for first in [queues.avail, queues.full] {
            let mut next = first;
            while let Some(frame) = linked_frame(next) {
                let span = region::span(frame);
                // SAFETY: the span belongs to this heap.
                next = unsafe { span.local().next };
                retire_span(frame, span);
            }
        }
        local.queues[class] = ClassQueues::default();
    }
    // Spans that were in the mailbox are on the queues too, and now retired.
    let _ = record.mailbox.take_all();
    // The counters stay: the record's next owner keeps adding to them, so a
    // `stats()` running meanwhile neither misses nor double-counts them.
    let _ = CURRENT.try_with(|c| c.set(NO_HEAP));
    record.hand_back();
}

/// Leaves a span consistent for a world without its owner: released if
/// nothing is out, otherwise abandoned to the frees still to come.
fn retire_span(frame: u32, span: &Span) {
    remote::disarm(span);
    // SAFETY: the span belongs to this exiting heap.
    unsafe {
        let sl = span.local();
        sl.queue = QUEUE_NONE;
        sl.prev = 0;
        sl.next = 0;
    }
    span.owner.store(ptr::null_mut(), Ordering::Relaxed);
    window();
    if remote::abandon(span, span.used()) {
        // SAFETY: every slot is free and nobody notifies a disarmed span.
        unsafe { release(frame, span) };
    }
}

// ---- fork ----

unsafe extern "C" fn nothing_before_fork() {}

unsafe extern "C" fn nothing_after_fork() {}

/// In the child: only the forking thread exists. A thread that was
/// notifying an owner when the process forked is gone, and left NOTIFYING
/// set, which an owner would wait on forever; and its mailbox push may or
/// may not have happened. Clear every such bit, and rebuild this thread's
/// mailbox from the spans that belong in it. (Spans of the other threads'
/// heaps stay theirs: their boxes can still be freed, remotely, and the
/// spans are not reused in the child.)
unsafe extern "C" fn after_fork_in_child() {
    let heap = current();
    let rebuild = heap != NO_HEAP;
    if rebuild {
        // SAFETY: records are never freed; this is this thread's.
        let _ = unsafe { &*heap }.mailbox.take_all();
    }
    for frame in 0..region::frames_touched() {
        let span = region::span(frame);
        let in_mailbox = remote::forget_notifier_after_fork(span);
        if rebuild && in_mailbox && owner_heap(span.owner.load(Ordering::Relaxed)) == heap {
            // SAFETY: as above.
            unsafe { &*heap }.mailbox.push(frame, &span.mail_next);
        }
    }
}
