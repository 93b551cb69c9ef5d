//! Per-thread heaps: the owner side of spans.
//!
//! A thread gets a heap at its first refill. The heap's record is allocated
//! once and never freed: exited threads hand theirs back for reuse, so a
//! stale pointer to a record is never dangling, and `stats()` can walk every
//! record at any time. The thread-local that names the current record has a
//! `const` initialiser and no destructor, so `dealloc` may read it at any
//! point of a thread's life, including other thread-locals' destructors. A
//! second thread-local with a destructor, registered at the first refill,
//! retires the heap when the thread exits: its spans are released or
//! abandoned, and frees that arrive later still work.

use core::cell::{Cell, UnsafeCell};
use core::ptr;

use crate::class::{CLASSES, NUM_CLASSES};
use crate::config::FRAME_SIZE;
use crate::hardening;
use crate::region::{self, frame_base};
use crate::remote::{self, Take};
use crate::span::{
    owner_heap, owner_word, read_link, write_link, Span, NIL, QUEUE_AVAIL, QUEUE_FULL, QUEUE_NONE,
};
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64};

use crate::sync::{backoff, AtomicU32, Ordering};

/// Cumulative counters of one heap. Each is written by its heap's thread
/// alone, with a plain load and store (no read-modify-write instruction),
/// and read by `stats()` from anywhere. Sums over all heaps are taken with
/// wrapping arithmetic, so one thread may subtract what another added.
#[derive(Default)]
pub(crate) struct Counters {
    /// Slots reserved to batches, less the ones given back unused.
    pub batched_boxes: AtomicU64,
    /// Refills served.
    pub reserve_calls: AtomicU64,
}

impl Counters {
    fn add(counter: &AtomicU64, by: u64) {
        counter.store(
            counter.load(Ordering::Relaxed).wrapping_add(by),
            Ordering::Relaxed,
        );
    }

    fn read(&self) -> [u64; 2] {
        [
            self.batched_boxes.load(Ordering::Relaxed),
            self.reserve_calls.load(Ordering::Relaxed),
        ]
    }
}

/// Counters of threads that give slots back without having a heap.
static RETIRED: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

/// The two queues of spans of one class in a heap: intrusive doubly linked
/// lists through `SpanLocal::{prev, next}`, holding frame index + 1.
#[derive(Clone, Copy, Default)]
pub(crate) struct ClassQueues {
    pub avail: u32,
    pub full: u32,
}

/// A heap's owner-only state.
///
/// Invariant: an empty span on an avail queue is that queue's head. A loop
/// that allocates and frees stays on one span, and a heap holds at most one
/// empty span per class; the others go back to the pool as they empty.
pub(crate) struct HeapLocal {
    pub queues: [ClassQueues; NUM_CLASSES],
}

/// A heap, as other threads and `stats()` see it.
pub(crate) struct HeapRecord {
    /// Next record in the registry; set before the record is published.
    next: AtomicPtr<HeapRecord>,
    /// Claimed by a live thread.
    in_use: AtomicBool,
    /// Stack of spans that remote frees took off the full queue: frame
    /// index + 1, linked through `Span::mail_next`.
    pub mailbox: AtomicU32,
    pub counters: Counters,
    local: UnsafeCell<HeapLocal>,
}

// SAFETY: shared fields are atomics; `local` is touched only by the thread
// that claimed the record (handed over by `in_use`'s release and acquire).
unsafe impl Sync for HeapRecord {}

impl HeapRecord {
    /// A record with empty queues and counters.
    pub(crate) fn new(in_use: bool) -> HeapRecord {
        HeapRecord {
            next: AtomicPtr::new(ptr::null_mut()),
            in_use: AtomicBool::new(in_use),
            mailbox: AtomicU32::new(0),
            counters: Counters::default(),
            local: UnsafeCell::new(HeapLocal {
                queues: [ClassQueues::default(); NUM_CLASSES],
            }),
        }
    }

    /// The owner-only state.
    ///
    /// # Safety
    /// - The caller is the thread that claimed this record.
    /// - No other reference returned by this method is live.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn local(&self) -> &mut HeapLocal {
        // SAFETY: exclusive access is the caller's contract.
        unsafe { &mut *self.local.get() }
    }
}

/// Every record ever made, newest first.
static REGISTRY: AtomicPtr<HeapRecord> = AtomicPtr::new(ptr::null_mut());

/// What [`current`] returns on a thread with no heap: never a span's owner
/// (an owner is a real record, or null).
pub(crate) const NO_HEAP: *mut HeapRecord = ptr::dangling_mut();

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
    // Registering the guard may allocate; do it before any span is touched.
    EXIT_GUARD.try_with(|_| ()).ok()?;
    let record = claim_record()?;
    CURRENT.set(record as *const HeapRecord as *mut HeapRecord);
    Some(record)
}

fn claim_record() -> Option<&'static HeapRecord> {
    let mut record = REGISTRY.load(Ordering::Acquire);
    while !record.is_null() {
        // SAFETY: records are never freed.
        let r = unsafe { &*record };
        if !r.in_use.load(Ordering::Relaxed)
            && r.in_use
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return Some(r);
        }
        record = r.next.load(Ordering::Relaxed);
    }
    let fresh = new_record()?;
    let mut head = REGISTRY.load(Ordering::Relaxed);
    loop {
        fresh.next.store(head, Ordering::Relaxed);
        let new = fresh as *const HeapRecord as *mut HeapRecord;
        match REGISTRY.compare_exchange_weak(head, new, Ordering::Release, Ordering::Relaxed) {
            Ok(_) => return Some(fresh),
            Err(seen) => head = seen,
        }
    }
}

/// Where the next heap record goes, and where its frame ends. Records are
/// carved from frames of the region, never freed, so that making one does
/// not depend on the inner allocator (which may be failing) and cannot
/// re-enter it.
static RECORD_CURSOR: AtomicPtr<u8> = AtomicPtr::new(ptr::null_mut());
static RECORD_END: AtomicPtr<u8> = AtomicPtr::new(ptr::null_mut());
static RECORD_LOCK: AtomicBool = AtomicBool::new(false);

/// A new record in the region, in use. `None` when no frame is left.
fn new_record() -> Option<&'static HeapRecord> {
    const SIZE: usize = size_of::<HeapRecord>().next_multiple_of(align_of::<HeapRecord>());
    let mut spins = 0;
    while RECORD_LOCK
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        backoff(&mut spins);
    }
    let mut cursor = RECORD_CURSOR.load(Ordering::Relaxed);
    if cursor.is_null() || cursor.addr() + SIZE > RECORD_END.load(Ordering::Relaxed).addr() {
        cursor = match region::acquire_frame() {
            Some(frame) => frame_base(frame),
            None => ptr::null_mut(),
        };
        RECORD_END.store(cursor.wrapping_add(FRAME_SIZE), Ordering::Relaxed);
    }
    let record = cursor.cast::<HeapRecord>();
    if !cursor.is_null() {
        RECORD_CURSOR.store(cursor.wrapping_add(SIZE), Ordering::Relaxed);
    }
    RECORD_LOCK.store(false, Ordering::Release);
    if record.is_null() {
        return None;
    }
    // SAFETY: the bytes are part of a frame taken for records alone, handed
    // out once under the lock, aligned (frames are, and SIZE keeps it), and
    // never freed.
    unsafe { record.write(HeapRecord::new(true)) };
    // SAFETY: just written; records are never freed or moved.
    Some(unsafe { &*record })
}

/// Calls `f` on every heap record, live or idle.
pub(crate) fn for_each_record(mut f: impl FnMut(&HeapRecord)) {
    let mut record = REGISTRY.load(Ordering::Acquire);
    while !record.is_null() {
        // SAFETY: records are never freed.
        let r = unsafe { &*record };
        f(r);
        record = r.next.load(Ordering::Relaxed);
    }
}

/// Sums of all counters: `[batched_boxes, reserve_calls]`.
pub(crate) fn counter_totals() -> [u64; 2] {
    let mut totals = [0u64; 2];
    for (t, r) in totals.iter_mut().zip(&RETIRED) {
        *t = r.load(Ordering::Relaxed);
    }
    for_each_record(|r| {
        for (t, c) in totals.iter_mut().zip(r.counters.read()) {
            *t = t.wrapping_add(c);
        }
    });
    totals
}

/// Counts a refill of `slots` slots on this thread's heap. Every slot counts
/// as handed out until given back.
pub(crate) fn count_reserve(heap: &HeapRecord, slots: u32) {
    Counters::add(&heap.counters.reserve_calls, 1);
    Counters::add(&heap.counters.batched_boxes, slots as u64);
}

/// Uncounts `unused` slots given back, on whichever thread gives them.
pub(crate) fn count_given_back(heap: *mut HeapRecord, unused: u32) {
    let minus = (unused as u64).wrapping_neg();
    if heap == NO_HEAP {
        RETIRED[0].fetch_add(minus, Ordering::Relaxed);
    } else {
        // SAFETY: records are never freed; this thread owns `heap`.
        Counters::add(unsafe { &(*heap).counters.batched_boxes }, minus);
    }
}

// ---- class queues ----

fn queue_head(local: &mut HeapLocal, class: u8, queue: u8) -> &mut u32 {
    let queues = &mut local.queues[class as usize];
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
        let head = local.queues[class as usize].avail;
        if head != 0 && head != frame + 1 {
            let old = region::span(head - 1);
            if old.used.load(Ordering::Relaxed) == 0 {
                // The old head would stop being the head while empty.
                // SAFETY: the old head is another span of this heap.
                unsafe { release_if_idle(local, head - 1, old) };
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
    if *head != 0 {
        // SAFETY: the neighbour is another span of this heap.
        unsafe { region::span(*head - 1).local().prev = frame + 1 };
    }
    *head = frame + 1;
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
    if prev != 0 {
        // SAFETY: the neighbour is another span of this heap.
        unsafe { region::span(prev - 1).local().next = next };
    } else if queue != QUEUE_NONE {
        *queue_head(local, sl.class, queue) = next;
    }
    if next != 0 {
        // SAFETY: the neighbour is another span of this heap.
        unsafe { region::span(next - 1).local().prev = prev };
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
        let key = hardening::key(span);
        let mut tail = head;
        for _ in 1..n {
            // SAFETY: the list's slots are free slots of this span whose
            // links the take's acquire made visible.
            tail = unsafe { read_link(base.wrapping_add(tail as usize), key) };
        }
        // SAFETY: the tail is a free slot of this span, now the owner's.
        unsafe { write_link(base.wrapping_add(tail as usize), sl.free_head, key) };
    }
    sl.free_head = head;
    span.add_used(-(n as i64));
}

/// Takes every span that remote frees put in the mailbox off the full
/// queue, collecting what was freed. Owner only.
#[inline]
pub(crate) fn drain_mailbox(heap: &HeapRecord, local: &mut HeapLocal) {
    if heap.mailbox.load(Ordering::Relaxed) != 0 {
        drain_mailbox_slow(heap, local);
    }
}

#[cold]
fn drain_mailbox_slow(heap: &HeapRecord, local: &mut HeapLocal) {
    let mut top = heap.mailbox.swap(0, Ordering::Acquire);
    while top != 0 {
        let frame = top - 1;
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
        if span.used.load(Ordering::Relaxed) == 0 {
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
    } else if local.queues[class as usize].avail != frame + 1 {
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
    if span.remote.load(Ordering::Relaxed) & remote::IN_MAILBOX == 0 {
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
    unsafe { region::release_frame(frame, CLASSES[class as usize].span_bytes()) };
}

/// After a local free or give-back: the span may have left the full queue or
/// become empty. Owner only.
#[cold]
pub(crate) fn after_local_free(heap: &HeapRecord, frame: u32, span: &Span) {
    // SAFETY: this thread owns the heap (the span's owner is its record) and
    // the caller holds no reference to its state.
    let local = unsafe { heap.local() };
    // SAFETY: as above, for the span.
    if unsafe { span.local().queue } == QUEUE_FULL {
        // SAFETY: as above.
        unsafe { move_to(local, frame, QUEUE_AVAIL) };
    }
    if span.used.load(Ordering::Relaxed) == 0 {
        span_emptied(local, frame, span);
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
            while next != 0 {
                let frame = next - 1;
                let span = region::span(frame);
                // SAFETY: the span belongs to this heap.
                next = unsafe { span.local().next };
                retire_span(frame, span);
            }
        }
        local.queues[class] = ClassQueues::default();
    }
    record.mailbox.store(0, Ordering::Relaxed);
    // The counters stay: the record's next owner keeps adding to them, so a
    // `stats()` running meanwhile neither misses nor double-counts them.
    let _ = CURRENT.try_with(|c| c.set(NO_HEAP));
    // Release: the next thread to claim the record sees it clean, and sees
    // every span of this heap disowned.
    record.in_use.store(false, Ordering::Release);
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
    if remote::abandon(span) {
        // SAFETY: every slot is free and nobody notifies a disarmed span.
        unsafe { release(frame, span) };
    }
}
