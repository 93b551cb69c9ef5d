//! Running the tests of a binary one at a time, for tests that read the
//! runtime's process-wide counters or change its process-wide capture
//! setting.
//!
//! Each test runs on a thread of its own, joined before the next test
//! starts. A thread that exits gives back the unused slots of its scope
//! runs, and a `stats()` read meanwhile is not exact; libtest's own
//! threads exit after their test has returned, so a lock alone would let
//! the next test read while the previous one's thread exits.

// Each test binary uses part of what is here.
#![allow(dead_code)]

use std::sync::Mutex;

use batch_alloc::{capture, set_capture, stats, Capture};

/// Runs `test` on a thread of its own while no other test of this binary
/// runs, and waits for that thread to exit. A panic in `test` is the
/// caller's.
pub fn serially<R: Send>(test: impl FnOnce() -> R + Send) -> R {
    static SERIAL: Mutex<()> = Mutex::new(());
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let outcome = std::thread::scope(|scope| scope.spawn(test).join());
    outcome.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// [`serially`], with batch scopes capturing as `setting` says; puts the
/// setting back afterwards, even if `test` panics.
pub fn with_capture<R: Send>(setting: Capture, test: impl FnOnce() -> R + Send) -> R {
    struct Restore(Capture);
    impl Drop for Restore {
        fn drop(&mut self) {
            set_capture(self.0);
        }
    }
    serially(|| {
        let _restore = Restore(capture());
        set_capture(setting);
        test()
    })
}

/// Runs `f`; returns what it returned and how many allocations the runtime
/// served meanwhile from batches and batch scopes together (what the
/// examples' "from batches" column counts).
pub fn served<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = stats();
    let result = f();
    let after = stats();
    let from_batches = after.batched_boxes - before.batched_boxes;
    (
        result,
        from_batches + after.scoped_allocations - before.scoped_allocations,
    )
}
