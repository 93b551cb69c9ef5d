//! `stats()` stays exact while threads that own heaps exit: a heap record's
//! counters are never folded or zeroed at exit (the record's next owner
//! keeps adding to them), so a reading taken meanwhile neither counts an
//! exiting thread twice nor misses it. Found while testing `#[batch_alloc]`,
//! whose test harness ends a thread after every test.

use std::sync::{Arc, Barrier};
use std::thread;

use batch_alloc::{stats, Batch};
use workloads::testing::serially;

#[test]
fn stats_are_constant_while_idle_threads_exit() {
    serially(|| {
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
    });
}
