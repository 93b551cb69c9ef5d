//! The runtime's process-wide locks, in the one order they nest, and the
//! fork handlers that hold all of them across a `fork`.
//!
//! A thread may take a lock only while it holds none of the same or a later
//! rank (in debug builds `SpinLock::lock` checks it and aborts otherwise),
//! and the fork handlers take them all in that same order. A fork landing
//! while another thread holds one therefore waits for it to be released,
//! and the child starts with every lock free. With each module registering
//! handlers for its own locks, their order was the order of registration,
//! which nothing tied to the order the code takes them in: the free
//! extents' handler, registered last and so run first, held that lock while
//! a thread carving a heap record held the record lock and waited for it.

use core::sync::atomic::AtomicBool;

use crate::base::os;
use crate::base::sync::{CallOnce, Ordering, SpinLock};

/// Held while the per-site report's lists are read or written
/// (`report.rs`, feature `report`), whose growth goes to the inner
/// allocator (outside any scope) and takes no other lock.
pub(crate) static REPORT: SpinLock = SpinLock::new(0);
/// Held while a heap record is carved and published (`record.rs`); a new
/// record may take a frame from the free extents or commit frames.
pub(crate) static RECORDS: SpinLock = SpinLock::new(1);
/// Held by a sweep (`heap/sweep.rs`) from its first heap to its last, so
/// that one sweep runs at a time and a fork lands between sweeps: the
/// forking thread's heap lock is then free in the child (its own thread is
/// outside the runtime when it forks), and a heap whose lock another
/// thread held at the fork is one the child never sweeps (and, since only
/// a holder letting the lock go makes the note a sweep that found it taken
/// leaves, one that brings no sweep back).
pub(crate) static SWEEP: SpinLock = SpinLock::new(2);
/// The rank of every heap's lock (`HeapLock`, `HeapRecord::full_lock`): a
/// sweep takes one under [`SWEEP`]; an owner holding its own may take the
/// extents', decay's and commit locks (a span released or made), never
/// [`SWEEP`] or a second heap's. There is one per heap, so the fork
/// handlers do not take them (see [`SWEEP`]).
pub(crate) const HEAP: u8 = 3;
/// Held while the table of free extents is read or written (`pool.rs`).
pub(crate) static EXTENTS: SpinLock = SpinLock::new(4);
/// Held while the decay or `trim` walks the empty frames it took off the
/// pool's stacks (`pool.rs`): a fork waits until they are back.
pub(crate) static DECAY: SpinLock = SpinLock::new(5);
/// Held while the region is mapped (`region.rs`).
pub(crate) static REGION_INIT: SpinLock = SpinLock::new(6);
/// Held while frames are committed (`region.rs`).
pub(crate) static COMMIT: SpinLock = SpinLock::new(7);

/// Every process-wide lock above, in rank order. (A function: a `const`
/// may not refer to statics on the supported Rust versions.)
fn all() -> [&'static SpinLock; 7] {
    [
        &REPORT,
        &RECORDS,
        &SWEEP,
        &EXTENTS,
        &DECAY,
        &REGION_INIT,
        &COMMIT,
    ]
}

/// Registers the handlers below, once.
static FORK_HANDLERS: CallOnce = CallOnce::new();
/// Whether the handlers are registered: set by the call that registered
/// them, and by their child handler (a child forked between the
/// registration and the call's store has the one but not the other).
static REGISTERED: AtomicBool = AtomicBool::new(false);

/// Registers the fork handlers, once per process: before any of the locks
/// is first taken (the region's first mapping calls it, and every lock
/// is taken only once the region is there). Registering them is all the call
/// does: made again in a child forked while it was under way, it registers
/// them only if they were not (a registration is whole or absent in the
/// child, and one that is there marks the call done from its child
/// handler).
///
/// False if the C library refused (it can only be out of memory): then a
/// fork while another thread held a lock would leave the child waiting on
/// it for good, so the caller maps no region, and no lock is ever
/// taken (batches and scopes serve plain boxes).
pub(crate) fn register_fork_handlers() -> bool {
    FORK_HANDLERS.call(|| {
        if os::at_fork(before_fork, after_fork, after_fork_in_child) {
            REGISTERED.store(true, Ordering::Relaxed);
        }
    });
    // Relaxed: the call's release and acquire order the store before this.
    REGISTERED.load(Ordering::Relaxed)
}

unsafe extern "C" fn before_fork() {
    for lock in all() {
        lock.lock();
    }
}

unsafe extern "C" fn after_fork() {
    for lock in all().into_iter().rev() {
        lock.unlock();
    }
}

unsafe extern "C" fn after_fork_in_child() {
    // SAFETY: the handler of the same fork.
    unsafe { after_fork() };
    // Before the call is done, whose release publishes it.
    REGISTERED.store(true, Ordering::Relaxed);
    FORK_HANDLERS.done_after_fork();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In debug builds a lock taken while one of a later rank is held aborts
    /// with the runtime's message (checked in a child: the test binary run
    /// again, which takes the extents' lock and then the records').
    #[test]
    #[cfg(debug_assertions)]
    #[cfg_attr(miri, ignore = "Miri cannot run a child process")]
    fn a_lock_taken_out_of_rank_order_aborts() {
        const CHILD: &str = "BATCH_ALLOC_LOCK_ORDER_CHILD";
        if std::env::var_os(CHILD).is_some() {
            EXTENTS.lock();
            RECORDS.lock();
            std::process::exit(0);
        }
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "base::locks::tests::a_lock_taken_out_of_rank_order_aborts",
                "--exact",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{stderr}");
        assert!(stderr.contains("a lock taken while holding one of the same or a later rank"));
    }

    /// The handlers take the locks in `all()`'s order, which in debug builds
    /// aborts unless it is the rank order.
    #[test]
    fn the_fork_handlers_take_every_lock_and_release_them() {
        // SAFETY: the handlers' own pairing, on this thread.
        unsafe {
            before_fork();
            after_fork();
        }
        for lock in all() {
            lock.lock();
            lock.unlock();
        }
    }
}
