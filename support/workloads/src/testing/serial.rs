//! The one serial lock of a test binary.
//!
//! The runtime's counters (`stats()`), the panic hook
//! and the process's memory are process-wide. A test that reads or changes
//! them must not run while another test of its binary moves them, and
//! every test that allocates from batches or scopes, or frees their slots,
//! moves them. So in a binary that has such tests, every test that could
//! disturb them or be disturbed by them runs through [`serially`]: one at
//! a time, whichever file of the binary it comes from. A second lock in the same binary would let a test of one file run
//! beside a test of another.
//!
//! Each test runs on a thread of its own, joined before the next test
//! starts. A thread that exits gives back the unused slots of its scope
//! runs and retires its heap, and a `stats()` read meanwhile is not exact;
//! libtest's own threads exit after their test has returned, so a lock
//! alone would let the next test read while the previous one's thread
//! exits.

use std::sync::Mutex;

use batch_alloc::stats;

/// Runs `test` on a thread of its own while no other test of this binary
/// runs through here, and waits for that thread to have exited (its
/// thread-local and key destructors included). A panic in `test` is the
/// caller's.
pub fn serially<R: Send>(test: impl FnOnce() -> R + Send) -> R {
    static SERIAL: Mutex<()> = Mutex::new(());
    // A test that failed while holding the lock poisons it; the others
    // still run, and report their own results.
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // An explicit join waits for the thread itself to end (`pthread_join`),
    // not only for `test` to return as the end of the scope does.
    let outcome = std::thread::scope(|scope| scope.spawn(test).join());
    outcome.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Runs `f`; returns what it returned and how many allocations the runtime
/// served meanwhile from batches and batch scopes together (what the
/// examples' "from batches" column counts). Exact only in a test that runs
/// [`serially`].
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

/// Runs `f` with the panic message silenced. The default hook writes the
/// message (and a backtrace, with `RUST_BACKTRACE`) where the panic is,
/// inside any scope open there, so its buffers and std's backtrace caches
/// would be served by the scope, kept, and counted as slots still out. The
/// hook is the process's: call this from a test that runs [`serially`], so
/// that no other test panics or changes it meanwhile.
pub fn silenced<R>(f: impl FnOnce() -> R) -> R {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(hook);
    result.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}
