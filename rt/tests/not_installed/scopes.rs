//! Without `BatchAlloc` as the global allocator, a scope guard opens
//! nothing and `box_in_scope` is `Box::new`: a library annotated with
//! `#[batch_alloc]` runs as written in a program that does not install it.

use batch_alloc_rt::testing::{box_in_scope, scope_on_this_thread, Guard};
use batch_alloc_rt::{is_active, stats};

#[test]
fn scopes_open_nothing_and_boxed_is_box_new() {
    assert!(!is_active());
    let guard = Guard::new();
    let mut boxes = Vec::new();
    for i in 0..100u64 {
        guard.enter();
        assert_eq!(scope_on_this_thread(), None);
        boxes.push(box_in_scope([i; 4]));
        boxes.push(Box::new([i + 1; 4]));
    }
    drop(guard);
    for (i, b) in boxes.iter().enumerate() {
        assert_eq!(**b, [(i / 2 + i % 2) as u64; 4]);
    }
    // Freed on another thread, by the system allocator.
    std::thread::spawn(move || drop(boxes)).join().unwrap();
    let s = stats();
    assert_eq!(
        (s.scoped_allocations, s.live_slots, s.span_bytes),
        (0, 0, 0)
    );
}
