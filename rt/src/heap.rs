//! This thread's heap: which record it is, whether a batch scope is open on
//! it, and what happens to it when the thread exits.
//!
//! A thread gets a heap at its first refill or scope, or at its first free
//! of another thread's slot, in a record (see `record.rs`) that outlives
//! the thread. The thread-locals the allocator path reads (the current
//! record, the scope state, whether the heap has retired) have `const`
//! initialisers and no destructor, so `dealloc` may read them at any point
//! of a thread's life, other thread-locals' destructors included.
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
//! three rounds running and only then frees a slot.

use core::cell::Cell;
use core::ffi::c_void;
use core::ptr;
use core::sync::atomic::AtomicUsize;

use crate::class::NUM_CLASSES;
use crate::fatal::check;
use crate::os;
use crate::outbox;
use crate::pool;
use crate::queues::{drain_mailbox, give_back, release, release_empty_spans};
use crate::record::claim_record;
use crate::region::{self, frame_base};
use crate::remote;
use crate::sync::{window, Ordering, RunOnce};
use crate::types::{
    linked_frame, ClassQueues, HeapRecord, OwnerWord, Reservation, Span, Tally, NO_HEAP, QUEUE_NONE,
};

thread_local! {
    static CURRENT: Cell<*mut HeapRecord> = const { Cell::new(NO_HEAP) };
    static SCOPE: Cell<ScopeState> = const { Cell::new(ScopeState::UNKNOWN) };
    /// The heap has retired: the thread is exiting, and makes no other.
    static EXITED: Cell<bool> = const { Cell::new(false) };
}

/// Whether a batch scope is open on a thread, and how, in one word, so that
/// the allocator path reads one thread-local and opening a scope writes
/// one: the thread's heap record (whose runs a scope allocates from; 64-byte
/// aligned, so its six low bits are free) with flags:
///
/// ```text
/// null                          not known yet: the first scope finds out
/// DISABLED                      scopes never open here (no BatchAlloc, no
///                               region, the thread exiting)
/// heap | READY                  no scope open; one can open at once
/// heap | READY | OPEN           a scope is open: annotated Box::new sites
///                               take slots from the runs
/// heap | READY | OPEN | CAPTURING   and it captures every allocation the
///                               runtime can serve
/// ```
///
/// A `#[repr(transparent)]` word: every test and change of the flags is a
/// method here, and compiles to the same bit operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct ScopeState(*mut HeapRecord);

/// A scope is open and captures.
pub(crate) const CAPTURING: usize = 1;
/// A scope is open.
const OPEN: usize = 2;
/// The heap is known: a scope can open.
const READY: usize = 4;
/// Scopes never open on this thread.
const DISABLED: usize = 8;
const FLAGS: usize = 63;

impl ScopeState {
    /// Not known yet.
    pub(crate) const UNKNOWN: ScopeState = ScopeState(ptr::null_mut());

    /// The state of a thread where scopes never open.
    #[inline(always)]
    pub(crate) fn disabled() -> ScopeState {
        ScopeState(ptr::without_provenance_mut(DISABLED))
    }

    /// The state of a thread with `heap` and no scope open.
    #[inline(always)]
    pub(crate) fn ready(heap: &HeapRecord) -> ScopeState {
        ScopeState((heap as *const HeapRecord as *mut HeapRecord).map_addr(|a| a | READY))
    }

    /// Whether a scope is open.
    #[inline(always)]
    pub(crate) fn is_open(self) -> bool {
        self.0.addr() & OPEN != 0
    }

    /// Whether a scope is open that captures.
    #[inline(always)]
    pub(crate) fn captures(self) -> bool {
        self.0.addr() & CAPTURING != 0
    }

    /// Whether entering a scope joins rather than opens one: a scope is
    /// open, or none can open on this thread.
    #[inline(always)]
    pub(crate) fn joins(self) -> bool {
        self.0.addr() & (OPEN | DISABLED) != 0
    }

    /// Whether the heap is known, so that a scope can open at once.
    #[inline(always)]
    pub(crate) fn is_ready(self) -> bool {
        self.0.addr() & READY != 0
    }

    /// This state with a scope open; `capture` is [`CAPTURING`] or 0.
    #[inline(always)]
    pub(crate) fn opened(self, capture: usize) -> ScopeState {
        ScopeState(self.0.map_addr(|a| a | OPEN | (capture & CAPTURING)))
    }

    /// This state with no scope open.
    #[inline(always)]
    pub(crate) fn closed(self) -> ScopeState {
        ScopeState(self.0.map_addr(|a| a & !(OPEN | CAPTURING)))
    }

    /// The heap an open scope's state names.
    #[inline(always)]
    pub(crate) fn heap(self) -> *mut HeapRecord {
        self.0.map_addr(|a| a & !FLAGS)
    }
}

/// This thread's heap record, or [`NO_HEAP`] before its first refill and
/// after it exits. Safe in the allocator path at any point of a thread's
/// life.
#[inline(always)]
pub(crate) fn current() -> *mut HeapRecord {
    CURRENT.try_with(Cell::get).unwrap_or(NO_HEAP)
}

/// This thread's scope state (see [`ScopeState`]). Safe in the allocator
/// path.
#[inline(always)]
pub(crate) fn scope_state() -> ScopeState {
    SCOPE.try_with(Cell::get).unwrap_or(ScopeState::UNKNOWN)
}

/// Sets this thread's scope state. A state naming a heap must name this
/// thread's own, which exists until the thread exits (and the exit disables
/// scopes).
#[inline(always)]
pub(crate) fn set_scope_state(state: ScopeState) {
    let _ = SCOPE.try_with(|scope| scope.set(state));
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

/// Makes this thread's heap from inside `dealloc` (a thread's first free of
/// another thread's slot; the callers have found it has none): safe there,
/// since making one allocates nothing through the global allocator and
/// cannot unwind. `None` once the thread's heap has retired.
pub(crate) fn init_in_dealloc() -> Option<&'static HeapRecord> {
    init_current()
}

#[cold]
fn init_current() -> Option<&'static HeapRecord> {
    if EXITED.try_with(Cell::get).unwrap_or(true) || !region::ensure_ready() {
        return None;
    }
    // Registering the handlers is all the run does: run again in a child
    // forked while it was under way, it registers them only if they were
    // not (a registration is whole or absent in the child, and one that
    // is there marks the run done from its child handler).
    FORK_HOOKS.run(|| {
        os::at_fork(nothing_before_fork, nothing_after_fork, after_fork_in_child);
    });
    // Before any span is touched: a heap that could not retire is never
    // made.
    if !arm_retirement() {
        return None;
    }
    let record = claim_record()?;
    // `try_with`, not `set`: this runs inside `dealloc` too (a thread's
    // first free of another thread's slot), where a panic must not start.
    let heap = record as *const HeapRecord as *mut HeapRecord;
    if CURRENT.try_with(|c| c.set(heap)).is_err() {
        record.hand_back();
        return None;
    }
    Some(record)
}

// ---- trim ----

/// Gives memory back now: what the calling thread's heap holds and nothing
/// uses (the frees of other threads' slots waiting in its outbox, its runs'
/// unused slots, its empty spans, counting slots other threads have freed
/// into them), then the memory of every empty frame, the resident pool's
/// included. Frees nothing that is in use.
///
/// Memory goes back on its own anyway (empty frames past a resident pool of
/// 32 MiB after 100 ms unused, a thread's runs and spans when it exits);
/// `trim` is for a long-lived thread about to go idle after a burst. Other
/// threads' runs and spans stay theirs. Inside a batch scope it leaves the
/// thread's runs alone, and gives back the rest.
pub fn trim() {
    trim_current();
    pool::decommit_cached();
}

/// Hands back what this thread's heap holds and nothing uses: the chains in
/// its outbox, its runs' unused slots (the runs start small again) unless a
/// scope is open on the thread (it allocates from them), and its empty
/// spans (a span that holds a run's slots is not empty). Nothing when the
/// thread has no heap.
pub(crate) fn trim_current() {
    let heap = current();
    if heap == NO_HEAP {
        return;
    }
    // SAFETY: records are never freed, and this one is this thread's.
    let record = unsafe { &*heap };
    outbox::send_all(record);
    if !scope_state().is_open() {
        give_back_runs(record);
        for run in &record.runs {
            run.want.store(0, Ordering::Relaxed);
        }
    }
    // SAFETY: this thread owns the record; no other reference to its state
    // is live.
    let local = unsafe { record.local() };
    drain_mailbox(record, local);
    release_empty_spans(local);
}

// ---- thread exit ----

/// The key whose destructor retires a thread's heap, + 1; 0 until made
/// (or if the C library had none left: then no thread makes a heap).
static EXIT_KEY: AtomicUsize = AtomicUsize::new(0);
static MAKE_EXIT_KEY: RunOnce = RunOnce::new();

/// Arms this thread's retirement, making the key on the process's first
/// call. False if the key or this thread's value for it cannot be had.
fn arm_retirement() -> bool {
    // Run again in a child forked while it was under way, it makes the key
    // only if the first run did not get to store it (at worst a key made
    // and lost in the parent, one of a thousand or so).
    MAKE_EXIT_KEY.run(|| {
        if EXIT_KEY.load(Ordering::Relaxed) == 0 {
            if let Some(key) = os::thread_exit_key(retire_at_exit) {
                EXIT_KEY.store(key.wrapping_add(1), Ordering::Relaxed);
            }
        }
    });
    // Relaxed: the run's release and acquire order the store before this.
    match EXIT_KEY.load(Ordering::Relaxed) {
        0 => false,
        key => os::arm_thread_exit(key.wrapping_sub(1)),
    }
}

/// The exit key's destructor: the C library calls it on an exiting thread
/// whose heap armed the key.
unsafe extern "C" fn retire_at_exit(_armed: *mut c_void) {
    retire_current();
}

fn retire_current() {
    let heap = current();
    let _ = EXITED.try_with(|e| e.set(true));
    set_scope_state(ScopeState::disabled());
    if heap == NO_HEAP {
        return;
    }
    // SAFETY: records are never freed; this thread owns it and nothing else
    // of this thread touches it while the guard runs.
    let record = unsafe { &*heap };
    outbox::send_all(record);
    give_back_runs(record);
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

/// Gives back every run's unused slots, leaving the runs empty. Owner only,
/// with no scope open (a run is only read while one is).
pub(crate) fn give_back_runs(heap: &HeapRecord) {
    for run in &heap.runs {
        let cur = run.cur.load(Ordering::Relaxed);
        let end = run.end.load(Ordering::Relaxed);
        let list_len = run.list_left.load(Ordering::Relaxed);
        if cur == end && list_len == 0 {
            continue;
        }
        let frame = run.frame.load(Ordering::Relaxed);
        let base = frame_base(frame);
        let size = region::span(frame).slot_size.load(Ordering::Relaxed);
        let offset = |p: *mut u8| p.addr().wrapping_sub(base.addr()) as u32;
        let list_head = match list_len {
            0 => 0,
            _ => offset(run.list.load(Ordering::Relaxed)),
        };
        let run_len = match size {
            0 => 0,
            size => (end.addr() - cur.addr()) as u32 / size,
        };
        let unused = Reservation {
            frame,
            list_head,
            list_len,
            bump_start: offset(cur),
            bump_end: offset(end),
            len: list_len + run_len,
        };
        run.cur.store(ptr::null_mut(), Ordering::Relaxed);
        run.end.store(ptr::null_mut(), Ordering::Relaxed);
        run.list.store(ptr::null_mut(), Ordering::Relaxed);
        run.list_left.store(0, Ordering::Relaxed);
        // SAFETY: the run's slots were reserved by this heap, linked as
        // reserved, and never handed out.
        unsafe {
            give_back(
                heap as *const HeapRecord as *mut HeapRecord,
                unused,
                Tally::Run,
            )
        };
    }
}

/// Leaves a span consistent for a world without its owner: released if
/// nothing is out, otherwise abandoned to the frees still to come.
fn retire_span(frame: u32, span: &Span) {
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
    if remote::abandon(span, span.used()) {
        // SAFETY: every slot is free and nobody notifies a disarmed span.
        unsafe { release(frame, span) };
    }
}

// ---- fork ----

/// Registers this module's fork handlers, once.
static FORK_HOOKS: RunOnce = RunOnce::new();

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
    FORK_HOOKS.done_after_fork();
    let heap = current();
    let rebuild = heap != NO_HEAP;
    if rebuild {
        // SAFETY: records are never freed; this is this thread's.
        let _ = unsafe { &*heap }.mailbox.take_all();
    }
    for frame in 0..region::frames_touched() {
        let span = region::span(frame);
        let in_mailbox = remote::forget_notifier_after_fork(span);
        if rebuild && in_mailbox && span.owner().heap() == heap {
            // SAFETY: as above.
            unsafe { &*heap }.mailbox.push(frame, &span.mail_next);
        }
    }
}
