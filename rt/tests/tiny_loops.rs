//! A batch's first allocations: the first two of a batch hinted at two or
//! fewer, or not hinted, are plain boxes (a refill would cost more than such
//! a loop saves); the third reserves; a batch hinted at more reserves at
//! once, exactly what the hint says. (`RawBatch::try_alloc` reports which
//! allocations were plain.)

use batch_alloc_rt::{stats, BatchAlloc, RawBatch};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

/// Whether each of `n` allocations from a batch hinted at `capacity` was
/// served by the batch (`true`) or was to be a plain box.
fn served(capacity: usize, n: u64) -> Vec<bool> {
    let mut batch = RawBatch::with_capacity(capacity);
    let mut boxes = Vec::new();
    let mut out = Vec::new();
    for i in 0..n {
        match batch.try_alloc([i; 4]) {
            Ok(b) => {
                boxes.push(b);
                out.push(true);
            }
            Err(value) => {
                boxes.push(Box::new(value));
                out.push(false);
            }
        }
    }
    for (i, b) in boxes.iter().enumerate() {
        assert_eq!(**b, [i as u64; 4]);
    }
    out
}

#[test]
fn tiny_and_hinted_batches() {
    assert!(batch_alloc_rt::is_active());
    for capacity in [0, 1, 2] {
        assert_eq!(
            served(capacity, 5),
            [false, false, true, true, true],
            "a batch hinted at {capacity}"
        );
    }
    for capacity in [3, 8, 100] {
        assert_eq!(
            served(capacity, 5),
            [true; 5],
            "a batch hinted at {capacity}"
        );
    }

    let fresh = format!("{:?}", RawBatch::with_capacity(1));
    assert!(fresh.contains("plain_boxes_next: 2"), "{fresh}");
    assert!(fresh.contains("ready_slots: 0"), "{fresh}");

    // A hint of ten reserves ten slots at the first allocation, which then
    // hands one out; the hint is used up.
    let before = stats().reserve_calls;
    let mut batch = RawBatch::with_capacity(10);
    let first = batch.alloc(7u64);
    let seen = format!("{batch:?}");
    assert!(seen.contains("ready_slots: 9"), "{seen}");
    assert!(seen.contains("hint: 0"), "{seen}");
    assert!(seen.contains("plain_boxes_next: 0"), "{seen}");
    assert_eq!(stats().reserve_calls, before + 1);
    assert_eq!(*first, 7);
}
