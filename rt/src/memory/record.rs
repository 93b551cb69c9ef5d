//! The registry of heap records and the counters they carry.
//!
//! A record is made once, in the region's own memory, and never freed:
//! exited threads hand theirs back for reuse, so a stale pointer to a record
//! is never dangling, and `stats()` can walk every record at any time.
//! Making one never calls the inner allocator, which may be the one failing.

use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicU64};

use crate::base::config::FRAME_SIZE;
use crate::base::locks;
use crate::base::sync::Ordering;
use crate::memory::pool;
use crate::memory::region::{self, frame_base};
use crate::memory::types::{Counters, HeapRecord, OwnedHeap, Tally, NO_HEAP};

/// Counters of give-backs from threads that have no heap (a batch ended on
/// a thread that never refilled, or after its heap retired): what their
/// counters would have held.
static HEAPLESS_COUNTERS: Counters = Counters {
    batched_boxes: AtomicU64::new(0),
    reserve_calls: AtomicU64::new(0),
    scope_slots: AtomicU64::new(0),
    large_blocks: AtomicU64::new(0),
};

/// Every record ever made, newest first. Pushed under `locks::RECORDS`;
/// walked without it.
static REGISTRY: AtomicPtr<HeapRecord> = AtomicPtr::new(ptr::null_mut());

/// Where the next heap record goes, and where its frame ends. Records are
/// carved from frames of the region, so that making one does not depend on
/// the inner allocator (which may be failing) and cannot re-enter it.
static RECORD_CURSOR: AtomicPtr<u8> = AtomicPtr::new(ptr::null_mut());
static RECORD_END: AtomicPtr<u8> = AtomicPtr::new(ptr::null_mut());

/// A record for a thread that starts a heap: an idle one, or a new one.
pub(crate) fn claim_record() -> Option<&'static HeapRecord> {
    let mut record = REGISTRY.load(Ordering::Acquire);
    while !record.is_null() {
        // SAFETY: records are never freed.
        let r = unsafe { &*record };
        // Acquire: the previous owner's writes (its retirement) are visible.
        if !r.in_use.load(Ordering::Relaxed)
            && r.in_use
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return Some(r);
        }
        record = r.next.load(Ordering::Relaxed);
    }
    new_record()
}

/// A new record in the region, in use and published. `None` when no frame
/// is left.
fn new_record() -> Option<&'static HeapRecord> {
    const SIZE: usize = size_of::<HeapRecord>().next_multiple_of(align_of::<HeapRecord>());
    // The region's first mapping registers the fork handlers: it must
    // come before the record lock is first taken (and without a region
    // there is no frame for a record anyway).
    if !region::ensure_ready() {
        return None;
    }
    locks::RECORDS.lock();
    let mut cursor = RECORD_CURSOR.load(Ordering::Relaxed);
    // No wrap: the cursor lies in a frame of the region, far below the top
    // of the address space. (This runs inside `dealloc`, where an overflow
    // check must not panic.)
    let next = cursor.addr().wrapping_add(SIZE);
    if cursor.is_null() || next > RECORD_END.load(Ordering::Relaxed).addr() {
        cursor = match pool::acquire_frame() {
            Some(frame) => frame_base(frame),
            None => ptr::null_mut(),
        };
        RECORD_END.store(cursor.wrapping_add(FRAME_SIZE), Ordering::Relaxed);
    }
    let record = cursor.cast::<HeapRecord>();
    if !record.is_null() {
        RECORD_CURSOR.store(cursor.wrapping_add(SIZE), Ordering::Relaxed);
        // SAFETY: the bytes are part of a frame taken for records alone,
        // handed out once under the lock, aligned (frames are, and SIZE keeps
        // it), and never freed.
        unsafe { record.write(HeapRecord::new(true)) };
        // SAFETY: just written.
        unsafe { &*record }
            .next
            .store(REGISTRY.load(Ordering::Relaxed), Ordering::Relaxed);
        // Release: a walker that sees the record sees it written.
        REGISTRY.store(record, Ordering::Release);
    }
    locks::RECORDS.unlock();
    // SAFETY: records are never freed or moved.
    (!record.is_null()).then(|| unsafe { &*record })
}

/// Calls `f` on every heap record, live or idle.
pub(crate) fn for_each_record(mut f: impl FnMut(&'static HeapRecord)) {
    let mut record = REGISTRY.load(Ordering::Acquire);
    while !record.is_null() {
        // SAFETY: records are never freed.
        let r = unsafe { &*record };
        f(r);
        record = r.next.load(Ordering::Relaxed);
    }
}

/// Sums of all counters: `[batched_boxes, reserve_calls, scope_slots,
/// large_blocks]`.
pub(crate) fn counter_totals() -> [u64; 4] {
    let mut totals = HEAPLESS_COUNTERS.read();
    for_each_record(|r| {
        for (t, c) in totals.iter_mut().zip(r.counters.read()) {
            *t = t.wrapping_add(c);
        }
    });
    totals
}

/// Counts a reservation (a refill) of `slots` slots for `tally` on this
/// thread's heap. Every slot counts as handed out until given back.
pub(crate) fn count_reserve(heap: OwnedHeap, slots: u32, tally: Tally) {
    Counters::add(&heap.counters.reserve_calls, 1);
    Counters::add(heap.counters.slots(tally), slots as u64);
}

/// Uncounts `unused` slots of `tally` given back, on whichever thread gives
/// them: `heap` is that thread's heap, or [`NO_HEAP`].
pub(crate) fn count_given_back(heap: *mut HeapRecord, unused: u32, tally: Tally) {
    let minus = (unused as u64).wrapping_neg();
    if heap == NO_HEAP {
        HEAPLESS_COUNTERS
            .slots(tally)
            .fetch_add(minus, Ordering::Relaxed);
    } else {
        // SAFETY: records are never freed; this thread owns `heap`.
        Counters::add(unsafe { (*heap).counters.slots(tally) }, minus);
    }
}
