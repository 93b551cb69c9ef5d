//! Statistics, computed on demand from counters the allocator keeps anyway.

use crate::base::sync::Ordering;
use crate::heap::outbox;
use crate::heap::remote::slots_out;
use crate::heap::runs::unused_slots;
use crate::heap::this_thread;
use crate::memory::pool::cached_bytes;
use crate::memory::record::{counter_totals, for_each_record};
use crate::memory::region::{self, span_bytes};
#[cfg(feature = "report")]
use crate::memory::types::NO_HEAP;

/// A snapshot of the runtime, for every thread together.
///
/// Slots a batch or a scope's run has reserved count as out of their spans
/// until handed out or given back: a batch gives back its unused slots when
/// it is refilled or dropped, a thread's runs when the thread exits. Slots
/// freed on one thread into another thread's spans may wait in the freeing
/// thread's outbox until it refills, exits or calls `stats()`. The counts
/// below leave the runs' unused slots and the outboxes' slots out, so with
/// other threads quiet (not allocating or freeing, and their batches
/// dropped) every field is exact. A thread's heap gives its runs and
/// chains back when it retires, in the thread's exit handlers, which run
/// after its closure has returned: `JoinHandle::join` waits for them, the
/// joins at the end of `std::thread::scope` do not, so a snapshot taken
/// right after `thread::scope` returns may still count exited threads'
/// slots and spans; join the handles to take it settled.
/// Gathering it walks every span and every heap: call it for diagnostics
/// and tests, not in a hot loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Boxes that [`Batch`](crate::Batch)es handed out since the program
    /// started.
    pub batched_boxes: u64,
    /// Allocations scopes served since the program started: every
    /// allocation made while a scope was open that the runtime could serve,
    /// from the runs or as a large block.
    pub scoped_allocations: u64,
    /// Reservations made since the program started: the calls that hand a
    /// batch or a scope's run the slots it asked for, one per refill.
    pub reserve_calls: u64,
    /// Slots owned by allocations that have not been freed yet.
    pub live_slots: u64,
    /// Bytes of spans held by threads' heaps (including spans of exited
    /// threads that still have live allocations).
    pub span_bytes: u64,
    /// Bytes of empty frames kept resident for reuse, free extents
    /// included: up to 32 MiB for good, the rest until they have waited a
    /// second unused (freed large blocks: 100 ms) and the runtime's next
    /// event (see [`trim`](crate::trim)).
    pub cached_bytes: u64,
}

/// Gathers a [`Stats`] snapshot.
pub fn stats() -> Stats {
    if let Some(heap) = this_thread::current_owned() {
        outbox::send_all(heap);
    }
    let [batched_boxes, reserve_calls, scope_slots, large_blocks] = counter_totals();
    let mut out_of_spans: u64 = 0;
    for frame in region::frames_touched() {
        out_of_spans += slots_out(region::span(frame)) as u64;
    }
    let mut unused_in_runs: u64 = 0;
    let mut in_outboxes: u64 = 0;
    for_each_record(|heap| {
        unused_in_runs += unused_slots(heap);
        in_outboxes += heap.outbox_slots.load(Ordering::Relaxed) as u64;
    });
    Stats {
        batched_boxes,
        // Saturating: a thread refilling or exiting meanwhile can make the
        // two readings disagree for a moment.
        scoped_allocations: scope_slots
            .saturating_sub(unused_in_runs)
            .wrapping_add(large_blocks),
        reserve_calls,
        live_slots: out_of_spans.saturating_sub(unused_in_runs + in_outboxes),
        span_bytes: span_bytes() as u64,
        cached_bytes: cached_bytes() as u64,
    }
}

/// Allocations this thread's scopes have served so far (what
/// [`Stats::scoped_allocations`] counts, for this thread alone): for the
/// per-site report.
#[cfg(feature = "report")]
pub(crate) fn scoped_allocations_on_this_thread() -> u64 {
    let heap = this_thread::current();
    if heap == NO_HEAP {
        return 0;
    }
    // SAFETY: this thread's heap; records are never freed.
    let heap = unsafe { &*heap };
    let [_, _, scope_slots, large_blocks] = heap.counters.read();
    scope_slots
        .saturating_sub(unused_slots(heap))
        .wrapping_add(large_blocks)
}
