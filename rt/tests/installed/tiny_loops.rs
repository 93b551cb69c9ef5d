//! A batch's first allocations: the first two of a batch hinted at two or
//! fewer, or not hinted, take one slot each rather than reserve a run (a
//! refill would cost more than such a loop saves); the third reserves a
//! run; a batch hinted at more reserves at
//! once, exactly what the hint says. (`ErasedBatch::try_alloc` reports an
//! allocation that was to be a plain box, and `refills` the batch's own
//! reservations.)

use batch_alloc_rt::__private::ErasedBatch;
use batch_alloc_rt::stats;

use crate::common::serially;

/// For each of `n` allocations from a batch hinted at `capacity`: whether
/// the runtime served it (rather than handing the value back for a plain
/// box), and how many refills the batch had made once it had.
fn served(capacity: usize, n: u64) -> Vec<(bool, u32)> {
    let mut batch = ErasedBatch::with_capacity(capacity);
    let mut boxes = Vec::new();
    let mut out = Vec::new();
    for i in 0..n {
        let served = match batch.try_alloc([i; 4]) {
            Ok(b) => {
                boxes.push(b);
                true
            }
            Err(value) => {
                boxes.push(Box::new(value));
                false
            }
        };
        out.push((served, batch.refills()));
    }
    for (i, b) in boxes.iter().enumerate() {
        assert_eq!(**b, [i as u64; 4]);
    }
    out
}

#[test]
fn tiny_and_hinted_batches() {
    serially(|| {
        assert!(batch_alloc_rt::is_active());
        for capacity in [0, 1, 2] {
            assert_eq!(
                served(capacity, 5),
                [(true, 0), (true, 0), (true, 1), (true, 1), (true, 1)],
                "a batch hinted at {capacity}"
            );
        }
        // A hint of three reserves three; the fourth allocation outruns it.
        assert_eq!(
            served(3, 5),
            [(true, 1), (true, 1), (true, 1), (true, 2), (true, 2)]
        );
        for capacity in [8, 100] {
            assert_eq!(
                served(capacity, 5),
                [(true, 1); 5],
                "a batch hinted at {capacity}"
            );
        }

        let fresh = format!("{:?}", ErasedBatch::with_capacity(1));
        assert!(fresh.contains("unreserved_next: 2"), "{fresh}");
        assert!(fresh.contains("ready_slots: 0"), "{fresh}");

        // A hint of ten reserves ten slots at the first allocation, which then
        // hands one out; the hint is used up.
        let before = stats().reserve_calls;
        let mut batch = ErasedBatch::with_capacity(10);
        let first = batch.alloc(7u64);
        let seen = format!("{batch:?}");
        assert!(seen.contains("ready_slots: 9"), "{seen}");
        assert!(seen.contains("hint: 0"), "{seen}");
        assert!(seen.contains("unreserved_next: 0"), "{seen}");
        assert_eq!(stats().reserve_calls, before + 1);
        assert_eq!(*first, 7);
    });
}

/// A loop of one or two boxes takes a slot per box, counted as batched
/// and not as a refill: `batched_boxes` moves by exactly the boxes made,
/// `reserve_calls` and `scoped_allocations` do not move, nothing stays
/// reserved, and once the boxes are dropped every slot is back.
#[test]
fn a_tiny_loops_boxes_are_counted_as_batched() {
    serially(|| {
        std::thread::spawn(|| {
            // The thread's heap, made first, so that the counts below see only
            // the tiny loops.
            drop(ErasedBatch::with_capacity(0).alloc([0u64; 4]));
            let before = stats();
            let mut boxes = Vec::new();
            for i in 0..3u64 {
                let mut batch = ErasedBatch::with_capacity(2);
                boxes.push(batch.alloc([i; 4]));
                boxes.push(batch.alloc([i + 10; 4]));
            }
            let during = stats();
            assert_eq!(during.batched_boxes - before.batched_boxes, 6);
            assert_eq!(during.scoped_allocations, before.scoped_allocations);
            assert_eq!(during.reserve_calls, before.reserve_calls, "no refill");
            assert_eq!(during.live_slots - before.live_slots, 6);
            for (k, b) in boxes.iter().enumerate() {
                let i = k as u64 / 2;
                assert_eq!(**b, [if k % 2 == 0 { i } else { i + 10 }; 4]);
            }
            drop(boxes);
            assert_eq!(stats().live_slots, before.live_slots);
        })
        .join()
        .unwrap();
    });
}
