//! Runs: what a thread allocates from while a scope is open, and what a
//! `Batch` is.
//!
//! A thread's heap keeps one [`Run`] per size class: slots reserved from one
//! span in one refill, a contiguous stretch handed out by a pointer bump,
//! then a list of recycled slots. While a scope is open (see `scope.rs`),
//! every allocation the runtime can serve (`BatchAlloc::alloc`,
//! `alloc_zeroed`, `realloc` into a size class) takes its slot from the run
//! of the class its layout maps to. A `Batch` is a run of its own. The runs stay with the heap between scopes, so a scope costs
//! nothing to open or close, and a short one does not pay for a refill;
//! their unused slots go back when the thread exits. Every slot handed out
//! is an ordinary slot of its span, freed by `dealloc` on any thread.

use core::alloc::Layout;
use core::ptr::NonNull;

use crate::base::class::{self, class_for};
use crate::base::config::{FIRST_REFILL, MAX_SMALL_SIZE};
use crate::base::sync::Ordering;
use crate::heap::reserve::reserve;
use crate::heap::sweep;
use crate::heap::this_thread::ScopeState;
use crate::memory::link::{self, read_link};
use crate::memory::region::{self, frame_base};
use crate::memory::types::{
    class_index, Counters, HeapRecord, OwnedHeap, Run, Tally, CLASS_BY_WORDS,
};

/// The fast path of a scope's allocation: a bump from the run of
/// `layout`'s class, for the sizes and alignments of everyday types.
/// `None` when that is not enough (a run used up, a large layout, one
/// aligned past 16): the caller takes [`alloc_in_scope`] with
/// [`class_of_layout`].
/// Calls nothing, so that the caller needs no stack frame.
///
/// `state` is the open scope's state, read by the caller.
#[inline(always)]
pub(crate) fn bump_scoped(state: ScopeState, layout: Layout) -> Option<NonNull<u8>> {
    if layout.size() > MAX_SMALL_SIZE || layout.align() > 16 {
        return None;
    }
    // SAFETY: an open scope's state, read on this thread.
    let heap = unsafe { state.owned_heap() };
    // Always in the table (the tests check it), so `?` never returns; a
    // lookup that cannot panic keeps the allocator path free of panics.
    let class = *heap
        .class_by_words
        .get(class_index(layout.size(), layout.align()))?;
    // SAFETY: every entry of the table is a class, below the runs' count.
    let run = unsafe { heap.runs.get_unchecked(class as usize) };
    // SAFETY: a run of this thread's own heap.
    unsafe { take(run, run.size as usize) }
}

/// The next slot of `run` without a refill: a fresh one from its stretch,
/// else a recycled one from its list. In a program that frees as it goes,
/// a run's stretch is soon used up and most refills are lists of freed
/// slots, so both belong on the fast path: while the pop was on the slow
/// path, a parser under `scope()` took a large share of its allocations
/// through it, each several times the cost of a bump (docs/runtime.md has
/// the figures).
///
/// `stride` is the run's slot size: a `Batch` passes its type's class size,
/// a constant, rather than have every bump load it.
///
/// # Safety
/// - The caller owns `run`: a run of this thread's heap, or a batch's
///   through `&mut`.
#[inline(always)]
pub(crate) unsafe fn take(run: &Run, stride: usize) -> Option<NonNull<u8>> {
    let follow = |slot: *mut u8| {
        let frame = run.cursor.frame();
        let key = link::key(region::span(frame));
        // SAFETY: a recycled slot of the run's reservation, linked when it
        // was freed; the last one's link is read but not followed.
        let next = unsafe { read_link(slot, key) };
        frame_base(frame).wrapping_add(next as usize)
    };
    // SAFETY: the caller owns the run, and so its cursor.
    let slot = unsafe { run.cursor.take(stride, follow) }?;
    // SAFETY: a run's slots are this thread's, reserved, never handed out.
    unsafe { link::on_handout(slot.as_ptr()) };
    Some(slot)
}

/// The class that serves `layout`, or [`NO_CLASS`]: the table's for the
/// everyday layouts (every allocation of a run that is used up asks),
/// the search's for the rest.
#[inline]
pub(crate) fn class_of_layout(layout: Layout) -> u8 {
    if layout.size() <= MAX_SMALL_SIZE && layout.align() <= 16 {
        if let Some(&class) = CLASS_BY_WORDS.get(class_index(layout.size(), layout.align())) {
            return class;
        }
    }
    class_for(layout.size(), layout.align())
}

/// A slot of `class` from the open scope `state`'s runs, or `None` if
/// `class` is [`NO_CLASS`] or the runtime cannot reserve one.
#[inline(always)]
pub(crate) fn alloc_in_scope(state: ScopeState, class: u8) -> Option<NonNull<u8>> {
    // SAFETY: an open scope's state, read on this thread.
    let heap = unsafe { state.owned_heap() };
    let run = heap.runs.get(class as usize)?;
    // SAFETY: a run of this thread's own heap.
    match unsafe { take(run, run.size as usize) } {
        Some(slot) => Some(slot),
        // SAFETY: as above.
        None => unsafe { next_slot(heap, run, class, Tally::Scope) },
    }
}

/// Once `run` (a scope's, or a batch's) is used up: the first slot of a new
/// reservation of `class` from `heap`, this thread's heap (`None` if none
/// can be had).
///
/// # Safety
/// - As for [`take`]: the caller owns `run`.
#[cold]
#[inline(never)]
pub(crate) unsafe fn next_slot(
    heap: OwnedHeap,
    run: &Run,
    class: u8,
    tally: Tally,
) -> Option<NonNull<u8>> {
    if !refill(heap, run, class, tally) {
        return None;
    }
    // SAFETY: the caller owns the run (its contract).
    unsafe { take(run, run.size as usize) }
}

/// Reserves the run's next slots, which must all have been handed out: the
/// run's request (a few slots at first, a batch's capacity), up to a
/// span's slots, then twice it for the next refill, up to a span. Doubling
/// is the measured policy: the fewest refills for the same memory
/// (docs/policy.md). Asking next for only what a short reservation lacked
/// (a span's end cut it short) kept runs small: on syn's parse, 31% more
/// refills and, warm, 4.5 times the page faults (docs/policy.md). False
/// when the runtime has none to give (no region, no memory).
fn refill(heap: OwnedHeap, run: &Run, class: u8, tally: Tally) -> bool {
    let span_slots = class::shape(class).slots;
    let want = match run.want.load(Ordering::Relaxed) {
        0 => FIRST_REFILL as u32,
        want => want,
    }
    .clamp(1, span_slots);
    let Some(reservation) = reserve(heap, class, want, tally) else {
        return false;
    };
    run.want
        .store(want.saturating_mul(2).min(span_slots), Ordering::Relaxed);
    run.cursor
        .install(frame_base(reservation.frame), &reservation);
    // A refill is one of the events the decay of empty memory and sweeps
    // wait for (`pool.rs`, `sweep.rs`): a program that allocates only from
    // its runs after a burst gets the burst's memory back. Last, where it
    // keeps no register busy.
    sweep::at_event();
    true
}

/// Counts a large block served by the open scope `state`, on its heap.
pub(crate) fn count_large_block(state: ScopeState) {
    // SAFETY: an open scope's state, read on this thread.
    let heap = unsafe { state.owned_heap() };
    Counters::add(&heap.counters.large_blocks, 1);
}

/// Slots the runs of `heap` hold and have not handed out, for statistics
/// (read from any thread: a snapshot, exact when the owner is quiet).
pub(crate) fn unused_slots(heap: &HeapRecord) -> u64 {
    heap.runs
        .iter()
        .map(|run| u64::from(run.cursor.unused(run.size as usize)))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::class::NO_CLASS;

    #[test]
    fn the_word_table_picks_the_class_search_would() {
        for size in 1..=MAX_SMALL_SIZE {
            for align in [1, 2, 4, 8, 16] {
                let class = CLASS_BY_WORDS[class_index(size, align)];
                assert_eq!(class, class_for(size, align), "{size} {align}");
                let layout = Layout::from_size_align(size, align).unwrap();
                assert_eq!(class_of_layout(layout), class, "{size} {align}");
            }
        }
        let page_aligned = Layout::from_size_align(64, 8192).unwrap();
        assert_eq!(class_of_layout(page_aligned), class_for(64, 8192));
        let large = Layout::from_size_align(MAX_SMALL_SIZE + 1, 8).unwrap();
        assert_eq!(class_of_layout(large), NO_CLASS);
    }
}
