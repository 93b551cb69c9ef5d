//! Boxes smaller than a free-list link (1 to 7 bytes) freed through
//! `drop(b)`, which keeps the box's borrow protected during the free: on the
//! owner thread and on another. Under Miri this checks that the free writes
//! each byte of the link through a pointer allowed to write it.

use std::thread;

use batch_alloc_rt::{stats, Batch};

use workloads::testing::{assert_boxes_disjoint, assert_slots_back_at, serially};

/// Panics unless the boxes hold `make(0)`, `make(1)`, ... and no two
/// overlap.
fn assert_intact<T: PartialEq + std::fmt::Debug>(boxes: &[Box<T>], make: fn(u8) -> T) {
    for (i, b) in boxes.iter().enumerate() {
        assert_eq!(**b, make(i as u8));
    }
    assert_boxes_disjoint(boxes);
}

fn round_trip<T: Send + Copy + PartialEq + std::fmt::Debug + 'static>(make: fn(u8) -> T) {
    let mut batch = Batch::with_capacity(8);
    let boxes: Vec<Box<T>> = (0..8).map(|i| batch.alloc(make(i))).collect();
    drop(batch);
    assert_intact(&boxes, make);
    let (here, there): (Vec<_>, Vec<_>) =
        boxes.into_iter().enumerate().partition(|(i, _)| i % 2 == 0);
    for (i, b) in here {
        assert_eq!(*b, make(i as u8));
        drop(b);
    }
    thread::spawn(move || {
        for (i, b) in there {
            assert_eq!(*b, make(i as u8));
            drop(b);
        }
    })
    .join()
    .unwrap();
    // The slots come back and are handed out again.
    let mut batch = Batch::with_capacity(8);
    let again: Vec<Box<T>> = (0..8).map(|i| batch.alloc(make(i))).collect();
    assert_intact(&again, make);
    for (i, b) in again.into_iter().enumerate() {
        assert_eq!(*b, make(i as u8));
        drop(b);
    }
}

#[test]
fn boxes_smaller_than_a_link_free_cleanly() {
    serially(|| {
        let before = stats();
        round_trip(|i| i);
        round_trip(|i| [i; 3]);
        round_trip(|i| [i; 6]);
        round_trip(u16::from);
        round_trip(|i| [i; 7]);
        let after = stats();
        assert!(
            after.batched_boxes > before.batched_boxes,
            "nothing was batched"
        );
        // This thread lives on, and its heap may keep an empty span per class.
        assert_slots_back_at(&before, &after);
    });
}
