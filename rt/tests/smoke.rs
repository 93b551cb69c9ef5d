use batch_alloc_rt::{is_active, stats, Batch, BatchAlloc};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

#[test]
fn smoke() {
    assert!(is_active());
    let before = stats();
    let mut batch = Batch::with_capacity(100);
    let boxes: Vec<Box<[u64; 8]>> = (0..100).map(|i| batch.alloc([i; 8])).collect();
    drop(batch);
    let mid = stats();
    println!("{before:?}\n{mid:?}");
    assert_eq!(mid.batched_boxes - before.batched_boxes, 100);
    assert_eq!(mid.live_slots - before.live_slots, 100);
    for (i, b) in boxes.iter().enumerate() {
        assert_eq!(**b, [i as u64; 8]);
    }
    let t = std::thread::spawn(move || drop(boxes));
    t.join().unwrap();
    let after = stats();
    println!("{after:?}");
    assert_eq!(after.live_slots, before.live_slots);
}
