//! `trim()` on a long-lived thread after a burst: the thread's runs give
//! their unused slots back, its empty spans go back, and every cached frame
//! is decommitted; inside a scope the runs stay, and the rest goes back all
//! the same. Alone in the process while it runs ([`serially`], as every
//! test of this binary), so that the process-wide statistics are this
//! thread's alone.

use std::sync::mpsc::channel;
use std::thread;

use batch_alloc_rt::testing::Guard;
use batch_alloc_rt::{stats, trim, Batch};

use workloads::testing::serially;

/// Strings this many, in a burst: enough for several spans of each class
/// (frames shrink under Miri, and Miri is slow).
const BURST: usize = if cfg!(miri) { 300 } else { 3_000 };

/// Strings of three size classes (below the largest class in every build,
/// Miri's included), made in a scope and dropped.
fn burst(n: usize) -> u64 {
    let before = stats().scoped_allocations;
    let guard = Guard::new();
    guard.enter();
    let strings: Vec<String> = (0..n).map(|i| "x".repeat([12, 60, 200][i % 3])).collect();
    assert!(strings.iter().all(|s| s.bytes().all(|b| b == b'x')));
    drop(strings);
    drop(guard);
    stats().scoped_allocations - before
}

#[test]
fn trim_hands_back_a_threads_runs_and_empty_spans() {
    serially(|| {
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
        let guard = Guard::new();
        guard.enter();
        let first: Vec<Box<[u64; 4]>> = (0..100).map(|i| Box::new([i; 4])).collect();
        let served = stats().scoped_allocations;
        trim();
        let second: Vec<Box<[u64; 4]>> = (0..100).map(|i| Box::new([i; 4])).collect();
        assert!(stats().scoped_allocations >= served + 100);
        drop(guard);
        for (i, (a, b)) in first.iter().zip(&second).enumerate() {
            assert_eq!((a[3], b[0]), (i as u64, i as u64));
        }
        drop((first, second));
        trim();
        assert_eq!(stats().span_bytes, before.span_bytes);
        assert_eq!(stats().live_slots, before.live_slots);

        inside_a_scope_only_the_runs_stay();
        assert_eq!(stats().span_bytes, before.span_bytes);
        assert_eq!(stats().live_slots, before.live_slots);
    });
}

/// Inside a scope, `trim` sends the frees waiting in the thread's outbox
/// and releases the thread's empty spans; it leaves the runs alone.
///
/// On a fresh thread, so that its spans are its own: it frees the boxes of
/// an owner thread that stays alive (the frees wait in its outbox, and the
/// owner's span cannot empty until they are sent), and empties a span of
/// its own, then trims inside a scope. The owner then trims too and reads
/// the span bytes: what is left is the scope's run alone.
fn inside_a_scope_only_the_runs_stay() {
    thread::spawn(|| {
        type Owned = [u64; 8];
        let base = stats().span_bytes;
        let (to_freer, boxes) = channel::<Vec<Box<Owned>>>();
        let (go, wait) = channel::<()>();
        let (report, span_bytes) = channel::<u64>();
        let owner = thread::spawn(move || {
            let mut batch = Batch::with_capacity(100);
            let boxes: Vec<Box<Owned>> = (0..100).map(|i| batch.alloc([i; 8])).collect();
            drop(batch);
            to_freer.send(boxes).unwrap();
            wait.recv().unwrap();
            // Takes back what the freer sent and releases the emptied span.
            trim();
            report.send(stats().span_bytes).unwrap();
        });
        let boxes = boxes.recv().unwrap();
        let mut own = Batch::with_capacity(64);
        drop(
            (0..64)
                .map(|i| own.alloc([i; 4]))
                .collect::<Vec<Box<[u64; 4]>>>(),
        );
        drop(own);

        let guard = Guard::new();
        guard.enter();
        let first = Box::new([1u64; 2]);
        drop(boxes);
        trim();
        let second = Box::new([2u64; 2]);
        drop(guard);
        let class = batch_alloc_rt::testing::size_classes()
            .iter()
            .find(|c| c.size as usize >= size_of::<[u64; 2]>())
            .unwrap();
        let stride = class.size as usize;
        assert_eq!(
            (&raw const *second).addr(),
            (&raw const *first).addr() + stride,
            "trim inside a scope gave back the run it serves from"
        );

        go.send(()).unwrap();
        let after = span_bytes.recv().unwrap();
        owner.join().unwrap();
        let run_span = class.span_bytes() as u64;
        assert_eq!(
            after,
            base + run_span,
            "trim inside a scope kept the outbox's frees or the empty span \
             (span bytes {base} before, the scope's run is one span)"
        );
        drop((first, second));
    })
    .join()
    .unwrap();
}
