//! For the scope, capture and large-block tests: an inner allocator that
//! counts the blocks it serves on each thread, so a test can tell an
//! allocation a scope captured from one the inner allocator served; and a
//! scope opened as `#[batch_alloc]` opens one.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use batch_alloc_rt::testing::Guard;
use batch_alloc_rt::{stats, Stats};

/// The system allocator, counting the blocks it hands out (`alloc`,
/// `alloc_zeroed`, `realloc`) on each thread.
pub struct Counting;

thread_local! {
    // `const`, no destructor: safe to touch on the allocator path at any
    // point of a thread's life.
    static INNER_CALLS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    let _ = INNER_CALLS.try_with(|calls| calls.set(calls.get() + 1));
}

/// Blocks the inner allocator has handed out on this thread so far.
pub fn inner_calls() -> u64 {
    INNER_CALLS.with(Cell::get)
}

/// Runs `f` and returns its result with the number of blocks the inner
/// allocator handed out on this thread meanwhile: 0 when every allocation
/// `f` made was captured (or it made none).
pub fn inner_calls_in<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = inner_calls();
    let r = f();
    (r, inner_calls() - before)
}

// SAFETY: forwards every call to `System` unchanged; counting touches only
// a thread-local with no destructor and never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Runs `f` under a scope guard, as `#[batch_alloc]` expands a loop: the
/// guard, entered before the loop, opens this thread's scope (or joins the
/// one open), and its drop, when the loop ends, closes what it opened.
pub fn in_scope<R>(f: impl FnOnce() -> R) -> R {
    let guard = Guard::new();
    guard.enter();
    let out = f();
    drop(guard);
    out
}

/// Allocations served from scope runs since `before`.
pub fn scoped_since(before: &Stats) -> u64 {
    stats().scoped_allocations - before.scoped_allocations
}

/// Slots out now, less those out at `before`.
pub fn live_since(before: &Stats) -> i64 {
    stats().live_slots as i64 - before.live_slots as i64
}
