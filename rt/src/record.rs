//! Heap records: what a heap is, as other threads and `stats()` see it.
//!
//! A record is made once, in the region's own memory, and never freed:
//! exited threads hand theirs back for reuse, so a stale pointer to a record
//! is never dangling, and `stats()` can walk every record at any time.
//! Making one never calls the inner allocator, which may be the one failing.

use core::cell::UnsafeCell;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64};

use crate::class::NUM_CLASSES;
use crate::config::FRAME_SIZE;
use crate::region::{self, frame_base};
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

    /// Hands the record back for the next thread that starts a heap.
    /// Release: that thread sees the record clean, and sees every span of
    /// this heap disowned.
    pub(crate) fn hand_back(&self) {
        self.in_use.store(false, Ordering::Release);
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

/// A record for a thread that starts a heap: an idle one, or a new one.
pub(crate) fn claim_record() -> Option<&'static HeapRecord> {
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
fn for_each_record(mut f: impl FnMut(&HeapRecord)) {
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
    use crate::heap::NO_HEAP;
    let minus = (unused as u64).wrapping_neg();
    if heap == NO_HEAP {
        RETIRED[0].fetch_add(minus, Ordering::Relaxed);
    } else {
        // SAFETY: records are never freed; this thread owns `heap`.
        Counters::add(unsafe { &(*heap).counters.batched_boxes }, minus);
    }
}
