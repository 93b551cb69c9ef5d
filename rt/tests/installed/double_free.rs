//! A double free of a batched box aborts with the runtime's message, and
//! never panics: unwinding out of `dealloc` would be undefined behaviour,
//! and formatting a panic message allocates. The case runs in a child
//! process (this test binary again), since the expected outcome is an abort.
//!
//! Debug builds catch the double free from the span's count of slots out;
//! release builds catch it only with the `hardened` feature (whose other
//! checks, and the double free through `std::alloc::dealloc`, are in
//! `hardened.rs`).

#![cfg(any(debug_assertions, feature = "hardened"))]

use batch_alloc_rt::{stats, Batch};
use workloads::in_child;
use workloads::testing::serially;

/// The child: frees one batched box twice. Never returns normally.
fn free_twice() {
    let before = stats().live_slots;
    let mut batch = Batch::with_capacity(8);
    let b: Box<[u64; 4]> = batch.alloc([7; 4]);
    // The batch gives its seven unused slots back.
    drop(batch);
    assert_eq!(stats().live_slots, before + 1, "the box is a slot");
    let p = Box::into_raw(b);
    // SAFETY: `p` comes from `Box::into_raw` and is freed once here.
    drop(unsafe { Box::from_raw(p) });
    eprintln!("child: freed once");
    // SAFETY: deliberately violated: the slot is already free, which the
    // runtime must refuse with an abort.
    drop(unsafe { Box::from_raw(p) });
    eprintln!("child: survived a double free (unexpected)");
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot spawn processes")]
fn a_double_free_of_a_batched_box_aborts_with_a_message() {
    serially(|| {
        let child = in_child!(
            a_double_free_of_a_batched_box_aborts_with_a_message,
            |_| {},
            free_twice
        );
        let output = &child.output;
        assert!(output.contains("child: freed once"), "{child}");
        assert!(!output.contains("survived"), "{child}");
        assert!(output.contains("batch-alloc: "), "{child}");
        assert!(output.contains("double free"), "{child}");
        assert!(
            !output.contains("panicked"),
            "a panic, not an abort\n{child}"
        );
        assert!(child.aborted(), "{child}");
    });
}
