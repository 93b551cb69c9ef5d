//! Without `BatchAlloc` as the global allocator, batches still work: every
//! box is a plain `Box::new` and no span slot is ever handed out.

use batch_alloc_rt::{is_active, stats, Batch};

use workloads::testing::{assert_boxes_disjoint, assert_span_bytes_sane};

#[test]
fn batches_fall_back_to_plain_boxes() {
    assert!(!is_active());
    let mut batch = Batch::with_capacity(64);
    let boxes: Vec<Box<[u64; 8]>> = (0..64).map(|i| batch.alloc([i; 8])).collect();
    drop(batch);
    for (i, b) in boxes.iter().enumerate() {
        assert_eq!(**b, [i as u64; 8]);
    }
    assert_boxes_disjoint(&boxes);
    // Plain boxes go back to the system allocator, on any thread.
    std::thread::spawn(move || drop(boxes)).join().unwrap();
    let s = stats();
    assert_span_bytes_sane(&s);
    assert_eq!(
        (s.batched_boxes, s.reserve_calls, s.live_slots, s.span_bytes),
        (0, 0, 0, 0)
    );
}

#[test]
fn unbatched_types_fall_back_too() {
    let mut zst = Batch::new();
    let unit: Box<()> = zst.alloc(());
    assert_eq!(*unit, ());
    let mut big = Batch::new();
    let huge: Box<[u8; 1 << 16]> = big.alloc([7; 1 << 16]);
    assert_eq!(huge[12345], 7);
}
