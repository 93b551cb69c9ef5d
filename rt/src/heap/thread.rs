//! A thread's heap over its life, the way mimalloc's `init.c` holds
//! `mi_thread_init` and `_mi_thread_done`: made at the thread's first
//! refill or scope, or at its first free of another thread's slot, in a
//! record (see `record.rs`) that outlives the thread; trimmed on request;
//! fixed up in a forked child; retired when the thread exits.
//!
//! The heap retires when the thread exits: its outbox is sent, its runs go
//! back, its spans are released or abandoned, and frees that arrive later
//! still work. Retirement is a pthread-key destructor, armed when the heap
//! is made, not a thread-local's destructor: std destroys a thread's
//! thread-locals first and drops the thread's own `Thread` handle later,
//! from a key destructor, and a program's key destructors run then too. A
//! heap made in that cleanup (a thread whose first free of a slot is its
//! name's, say) arms the key there, and the C library calls key
//! destructors again for keys armed while they ran, so the heap still
//! retires; a thread-local's destructor registered that late would never
//! run. After retirement the thread makes no heap: its frees push each
//! slot with one compare-and-swap, its scopes do not open, its batches hand
//! out plain boxes. The C library stops after a few rounds
//! (`PTHREAD_DESTRUCTOR_ITERATIONS`, 4 on glibc and musl): a heap whose
//! first making is in the last round, in a destructor that runs after this
//! one's, never retires, which takes a key destructor that re-arms itself
//! three rounds running and only then frees a slot. On Windows the hook is
//! a fiber-local slot's callback instead (see `base/os/windows.rs`).

use core::ffi::c_void;
use core::sync::atomic::{AtomicBool, AtomicUsize};

use crate::base::class::NUM_CLASSES;
use crate::base::fatal::check;
use crate::base::frame::Frame;
use crate::base::os;
use crate::base::sync::{nothing_around_fork, window, CallOnce, Ordering};
use crate::heap::outbox;
use crate::heap::queues::{drain_mailbox, give_back_runs, release_empty_spans};
use crate::heap::remote;
use crate::heap::sweep;
use crate::heap::this_thread::{
    current, current_owned, has_retired, mark_retired, scope_state, set_current, set_scope_state,
    ScopeState,
};
use crate::memory::pool;
use crate::memory::record::claim_record;
use crate::memory::region;
use crate::memory::types::{ClassQueues, OwnedHeap, OwnerWord, Span, NO_HEAP, QUEUE_NONE};

/// This thread's heap, made on first use. `None` once the thread is exiting
/// or when the region cannot be mapped.
pub(crate) fn current_or_init() -> Option<OwnedHeap> {
    if let Some(heap) = current_owned() {
        return Some(heap);
    }
    init_current()
}

/// Makes this thread's heap from inside `dealloc` (a thread's first free of
/// another thread's slot; the callers have found it has none): safe there,
/// since making one allocates nothing through the global allocator and
/// cannot unwind. `None` once the thread's heap has retired.
pub(crate) fn init_in_dealloc() -> Option<OwnedHeap> {
    init_current()
}

#[cold]
fn init_current() -> Option<OwnedHeap> {
    if has_retired() || !region::ensure_ready() {
        return None;
    }
    // Registering the handlers is all the call does: made again in a child
    // forked while it was under way, it registers them only if they were
    // not (a registration is whole or absent in the child, and one that
    // is there marks the call done from its child handler). Without them
    // (the C library had no memory) a child could wait for good on a
    // notification a vanished thread left half done: no heap is made.
    FORK_HOOKS.call(|| {
        if os::at_fork(
            nothing_around_fork,
            nothing_around_fork,
            after_fork_in_child,
        ) {
            FORK_HOOKS_REGISTERED.store(true, Ordering::Relaxed);
        }
    });
    // Relaxed: the call's release and acquire order the store before this.
    if !FORK_HOOKS_REGISTERED.load(Ordering::Relaxed) {
        return None;
    }
    // Before any span is touched: a heap that could not retire is never
    // made.
    if !arm_retirement() {
        return None;
    }
    let record = claim_record()?;
    // `try_with`, not `set`: this runs inside `dealloc` too (a thread's
    // first free of another thread's slot), where a panic must not start.
    // SAFETY: this thread just claimed the record for its heap.
    let heap = unsafe { OwnedHeap::new(record) };
    if !set_current(heap.as_ptr()) {
        record.hand_back();
        return None;
    }
    Some(heap)
}

// ---- trim ----

/// Gives memory back now: what the calling thread's heap holds and nothing
/// uses (the frees of other threads' slots waiting in its outbox, its runs'
/// unused slots, its empty spans, counting slots other threads have freed
/// into them), then the memory of every empty frame, the resident pool's
/// included. Frees nothing that is in use.
///
/// Memory goes back on its own anyway, with the program's events: an
/// empty frame past a resident pool of 32 MiB once it has waited a second
/// unused, a freed large block's frames once they have waited 100 ms,
/// each at the runtime's next refill (of a scope's run or a [`Batch`]),
/// large block made or freed, or frame given back; a thread's runs and
/// spans when it exits; the spans this thread's frees emptied in another
/// thread's heap when that thread refills, or, if it has gone idle, at a
/// sweep 100 ms into the events. A program that goes idle makes none of
/// these events: `trim` is for a long-lived thread about to go idle after
/// a burst. It also sweeps: the spans of every other thread that frees
/// emptied go to the pool and back to the OS with the rest (but for a
/// thread inside the runtime at that moment, which takes its own at its
/// next refill); their runs and the rest of their spans stay theirs.
/// Inside a scope it leaves the thread's runs alone, and gives back the
/// rest.
///
/// [`Batch`]: crate::Batch
pub fn trim() {
    trim_current();
    sweep::sweep_now();
    pool::decommit_cached();
}

/// Hands back what this thread's heap holds and nothing uses: the chains in
/// its outbox, its runs' unused slots (the runs start small again) unless a
/// scope is open on the thread (it allocates from them), and its empty
/// spans (a span that holds a run's slots is not empty). Nothing when the
/// thread has no heap.
pub(crate) fn trim_current() {
    let Some(record) = current_owned() else {
        return;
    };
    outbox::send_all(record);
    if !scope_state().is_open() {
        give_back_runs_and_start_small(record);
    }
    // SAFETY: this thread owns the record; no other reference to its state
    // is live.
    let local = unsafe { record.local() };
    drain_mailbox(record, local);
    release_empty_spans(local);
}

/// Gives back the unused slots of the heap's runs, and makes each run's
/// next refill ask for a few slots again.
fn give_back_runs_and_start_small(record: OwnedHeap) {
    give_back_runs(record);
    for run in &record.runs {
        run.want.store(0, Ordering::Relaxed);
    }
}

// ---- thread exit ----

/// The key whose destructor retires a thread's heap, + 1; 0 until made
/// (or if the C library had none left: then no thread makes a heap).
static EXIT_KEY: AtomicUsize = AtomicUsize::new(0);
static MAKE_EXIT_KEY: CallOnce = CallOnce::new();

/// Arms this thread's retirement, making the key on the process's first
/// call. False if the key or this thread's value for it cannot be had.
fn arm_retirement() -> bool {
    // Made again in a child forked while it was under way, the call makes
    // the key only if the first did not get to store it (at worst a key made
    // and lost in the parent, one of a thousand or so).
    MAKE_EXIT_KEY.call(|| {
        if EXIT_KEY.load(Ordering::Relaxed) == 0 {
            if let Some(key) = os::thread_exit_key(retire_at_exit) {
                EXIT_KEY.store(key.wrapping_add(1), Ordering::Relaxed);
            }
        }
    });
    // Relaxed: the call's release and acquire order the store before this.
    match EXIT_KEY.load(Ordering::Relaxed) {
        0 => false,
        key => os::arm_thread_exit(key.wrapping_sub(1)),
    }
}

/// The exit key's destructor: the C library (a pthread key's destructor)
/// or Windows (the runtime's TLS callback) calls it on an exiting thread
/// whose heap armed the key.
unsafe extern "C" fn retire_at_exit(_armed: *mut c_void) {
    retire_current();
}

fn retire_current() {
    let heap = current_owned();
    mark_retired();
    set_scope_state(ScopeState::disabled());
    // Nothing else of this thread touches the heap while it retires.
    let Some(record) = heap else {
        return;
    };
    outbox::send_all(record);
    // The record's next thread starts its runs small, as a new heap's.
    give_back_runs_and_start_small(record);
    // SAFETY: as above.
    let local = unsafe { record.local() };
    drain_mailbox(record, local);
    // From here to the mailbox's last take, no sweep looks at the spans:
    // those that remote frees put in the mailbox meanwhile are abandoned
    // while still linked in it.
    let mut full = record.lock_full();
    for class in 0..NUM_CLASSES {
        let avail = local.queues[class].avail;
        let parked = *full.head(class as u8);
        for first in [avail, parked] {
            let mut next = first;
            while let Some(frame) = Frame::from_link(next) {
                let span = region::span(frame);
                // SAFETY: the span belongs to this heap, and the lock is
                // held for those on the full queue.
                next = unsafe { span.local().next };
                retire_span(frame, span);
            }
        }
        local.queues[class] = ClassQueues::default();
        *full.head(class as u8) = 0;
    }
    // Spans that were in the mailbox are on the queues too, and now retired.
    let _ = record.mailbox.take_all();
    drop(full);
    // The counters stay: the record's next owner keeps adding to them, so a
    // `stats()` running meanwhile neither misses nor double-counts them.
    set_current(NO_HEAP);
    record.hand_back();
}

/// Leaves a span consistent for a world without its owner: released if
/// nothing is out, otherwise abandoned to the frees still to come. The
/// heap's lock is held.
fn retire_span(frame: Frame, span: &Span) {
    if abandon_span(frame, span) {
        // SAFETY: every slot is free, the span is on no queue, and nobody
        // notifies a disarmed span.
        unsafe { pool::release_frame(frame) };
    }
}

/// [`retire_span`]'s steps on the span but its release: disarms it, takes
/// it off its queue and its owner, and abandons it. True if no slot is
/// out, so the caller releases it. (The loom models run it.)
pub(crate) fn abandon_span(frame: Frame, span: &Span) -> bool {
    check!(
        // SAFETY: the span belongs to this exiting heap, which holds no
        // reference to its state; its free list's links are visible to it.
        unsafe { span.is_valid(span.local(), region::frame_base(frame)) },
        "span counts at abandonment"
    );
    remote::disarm(span);
    // SAFETY: the span belongs to this exiting heap.
    unsafe {
        let sl = span.local();
        sl.queue = QUEUE_NONE;
        sl.prev = 0;
        sl.next = 0;
    }
    span.set_owner(OwnerWord::NONE);
    window();
    remote::abandon(span, span.used())
}

// ---- fork ----

/// Registers this module's fork handlers, once.
static FORK_HOOKS: CallOnce = CallOnce::new();
/// Whether they are registered: set by the call that registered them, and
/// by their child handler (a child forked between the registration and the
/// call's store has the one but not the other).
static FORK_HOOKS_REGISTERED: AtomicBool = AtomicBool::new(false);

/// In the child: only the forking thread exists. A thread that was
/// notifying an owner when the process forked is gone, and left NOTIFYING
/// set, which an owner would wait on forever; and its mailbox push may or
/// may not have happened. Clear every such bit, and rebuild this thread's
/// mailbox from the spans that belong in it. A thread that was pooling or
/// taking an empty frame is gone too: count the pool's stacks again.
/// (Spans of the other threads' heaps stay theirs: their boxes can still be
/// freed, remotely, and the spans are not reused in the child.)
unsafe extern "C" fn after_fork_in_child() {
    // Before the call is done, whose release publishes it.
    FORK_HOOKS_REGISTERED.store(true, Ordering::Relaxed);
    FORK_HOOKS.done_after_fork();
    pool::recount_after_fork();
    let heap = current();
    let rebuild = heap != NO_HEAP;
    if rebuild {
        // SAFETY: records are never freed; this is this thread's.
        let _ = unsafe { &*heap }.mailbox.take_all();
    }
    for frame in region::frames_touched() {
        let span = region::span(frame);
        let in_mailbox = remote::forget_notifier_after_fork(span);
        if rebuild && in_mailbox && span.owner().heap() == heap {
            // SAFETY: as above.
            unsafe { &*heap }.mailbox.push(frame, &span.mail_next);
        }
    }
}
