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

use crate::common::{child_role, describe, run_child, serially, test_name};

/// Exit signal of a child killed by `abort`.
const SIGABRT: i32 = 6;

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
        if child_role().is_some() {
            free_twice();
            return;
        }
        let test = test_name(
            module_path!(),
            "a_double_free_of_a_batched_box_aborts_with_a_message",
        );
        let output = run_child(&test, "double-free", None);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let what = describe(&output);
        assert!(stderr.contains("child: freed once"), "{what}");
        assert!(!stderr.contains("survived"), "{what}");
        assert!(stderr.contains("batch-alloc: "), "{what}");
        assert!(stderr.contains("double free"), "{what}");
        assert!(
            !stderr.contains("panicked"),
            "a panic, not an abort\n{what}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(output.status.signal(), Some(SIGABRT), "{what}");
        }
        assert!(!output.status.success(), "{what}");
    });
}
