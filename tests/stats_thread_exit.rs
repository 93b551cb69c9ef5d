//! Reproducer for a runtime issue met while testing `#[batch_alloc]`:
//! `stats()` can read a wrong `batched_boxes` (and `reserve_calls`) while a
//! thread that owns a heap exits, even when no batch is in use anywhere.
//!
//! Cause (rt/src/heap.rs): `retire_current` adds the exiting heap's counters
//! to `RETIRED` and then zeroes the heap's own, while `counter_totals` reads
//! `RETIRED` first and the heaps second, with nothing ordering the two. A
//! reading that falls between the add and the zeroing counts the thread
//! twice; one that reads `RETIRED` before the add and the heap after the
//! zeroing misses it. The libtest harness ends a thread after every test, so
//! any test binary comparing two readings can see the count jump.
//!
//! Ignored until the runtime is fixed: `cargo test --test stats_thread_exit
//! -- --ignored`.

use std::sync::{Arc, Barrier};
use std::thread;

use batch_alloc::{stats, Batch, BatchAlloc};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

#[test]
#[ignore = "runtime issue: stats() is not consistent with a thread exiting; see the file's docs"]
fn stats_are_constant_while_idle_threads_exit() {
    let mut wrong = Vec::new();
    for round in 0..200 {
        let threads = 2;
        let ready = Arc::new(Barrier::new(threads + 1));
        let go = Arc::new(Barrier::new(threads + 1));
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (ready, go) = (ready.clone(), go.clone());
                thread::spawn(move || {
                    let mut batch = Batch::with_capacity(100);
                    let boxes: Vec<Box<u64>> = (0..100).map(|i| batch.alloc(i)).collect();
                    drop(batch);
                    drop(boxes);
                    ready.wait();
                    go.wait();
                    // Returning runs the heap's exit guard.
                })
            })
            .collect();
        ready.wait();
        // Every batch has ended: from here on nothing changes the counts.
        let settled = stats().batched_boxes;
        go.wait();
        while !handles.iter().all(|h| h.is_finished()) {
            let now = stats().batched_boxes;
            if now != settled {
                wrong.push((round, settled, now));
            }
        }
        for handle in handles {
            handle.join().unwrap();
        }
        assert_eq!(stats().batched_boxes, settled, "after every thread exited");
    }
    assert!(
        wrong.is_empty(),
        "readings (round, settled, read) while threads exited: {wrong:?}"
    );
}
