//! Statistics, computed on demand from counters the allocator keeps anyway.

use crate::record::counter_totals;
use crate::region::{self, cached_bytes, span_bytes};
use crate::remote::slots_out;

/// A snapshot of the runtime, for every thread together.
///
/// A batch's reserved slots count as handed out and live until the batch
/// gives back the ones it did not use (when it is refilled or dropped); with
/// other threads quiet and their batches dropped, every field is exact.
/// Gathering it walks every span and every heap: call it for diagnostics
/// and tests, not in a hot loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Boxes handed out from batch slots since the program started.
    pub batched_boxes: u64,
    /// Refills served since the program started.
    pub reserve_calls: u64,
    /// Slots owned by boxes that have not been freed yet.
    pub live_slots: u64,
    /// Bytes of spans held by threads' heaps (including spans of exited
    /// threads that still have live boxes).
    pub span_bytes: u64,
    /// Bytes of empty frames kept resident for reuse; past a limit, freed
    /// frames go back to the operating system instead.
    pub cached_bytes: u64,
}

/// Gathers a [`Stats`] snapshot.
pub fn stats() -> Stats {
    let [batched_boxes, reserve_calls] = counter_totals();
    let mut out_of_spans: u64 = 0;
    for frame in 0..region::frames_touched() {
        out_of_spans += slots_out(region::span(frame)) as u64;
    }
    Stats {
        batched_boxes,
        reserve_calls,
        live_slots: out_of_spans,
        span_bytes: span_bytes() as u64,
        cached_bytes: cached_bytes() as u64,
    }
}
