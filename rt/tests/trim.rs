//! `trim()` on a long-lived thread after a burst: the thread's runs give
//! their unused slots back, its empty spans go back, and every cached frame
//! is decommitted; inside a scope the runs stay. One test, so that the
//! process-wide statistics are this thread's alone.

use batch_alloc_rt::{set_capture, stats, trim, BatchAlloc, Capture, Scope};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

/// Strings this many, in a burst: enough for several spans of each class
/// (frames shrink under Miri, and Miri is slow).
const BURST: usize = if cfg!(miri) { 300 } else { 3_000 };

/// Strings of three size classes (below the largest class in every build,
/// Miri's included), made in a capturing scope and dropped.
fn burst(n: usize) -> u64 {
    let before = stats().scoped_allocations;
    let mut scope = Scope::new();
    scope.enter();
    let strings: Vec<String> = (0..n).map(|i| "x".repeat([12, 60, 200][i % 3])).collect();
    assert!(strings.iter().all(|s| s.bytes().all(|b| b == b'x')));
    drop(strings);
    drop(scope);
    stats().scoped_allocations - before
}

#[test]
fn trim_hands_back_a_threads_runs_and_empty_spans() {
    set_capture(Capture::All);
    let before = stats();
    assert!(
        burst(BURST) >= BURST as u64,
        "the burst was served by the scope"
    );
    let held = stats();
    assert_eq!(held.live_slots, before.live_slots, "everything was dropped");
    assert!(
        held.span_bytes > before.span_bytes,
        "the thread keeps its runs and a span per class: {before:?} -> {held:?}"
    );

    trim();
    let after = stats();
    assert_eq!(
        after.span_bytes, before.span_bytes,
        "trim left spans with the thread: {held:?} -> {after:?}"
    );
    assert_eq!(after.cached_bytes, 0, "trim leaves nothing cached");
    assert_eq!(after.live_slots, before.live_slots);

    // The thread goes on: its runs start over.
    assert!(burst(BURST / 10) >= BURST as u64 / 10);

    // Inside a scope, trim leaves the runs in use alone.
    let mut scope = Scope::new();
    scope.enter();
    let first: Vec<Box<[u64; 4]>> = (0..100).map(|i| Box::new([i; 4])).collect();
    let served = stats().scoped_allocations;
    trim();
    let second: Vec<Box<[u64; 4]>> = (0..100).map(|i| Box::new([i; 4])).collect();
    assert!(stats().scoped_allocations >= served + 100);
    drop(scope);
    for (i, (a, b)) in first.iter().zip(&second).enumerate() {
        assert_eq!((a[3], b[0]), (i as u64, i as u64));
    }
    drop((first, second));
    trim();
    assert_eq!(stats().span_bytes, before.span_bytes);
    assert_eq!(stats().live_slots, before.live_slots);
}
