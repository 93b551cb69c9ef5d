//! Everything the runtime asks of the operating system: address space
//! (map a range, make parts of it usable, give parts of it back), the
//! size of its pages, a clock, giving up the CPU, hooks around `fork` and at
//! thread exit, the process id, and warnings on stderr.
//! Nothing else in the runtime talks to the OS, and nothing here allocates
//! through the global allocator or unwinds: every call is a plain system or
//! C library call.
//!
//! One module per platform, each the only place its system calls are made:
//!
//! - `unix`: Linux, macOS, FreeBSD and the other Unix systems, through
//!   `libc`. Memory goes back with `madvise(MADV_DONTNEED)` on Linux, whose
//!   private anonymous pages then read as zero; elsewhere that advice may
//!   keep the old bytes, so the range is mapped again in place, fresh.
//! - `windows`: `VirtualAlloc` and `VirtualFree`, a TLS callback for
//!   thread exit, through `windows-sys`. No `fork`.
//! - `miri`: under Miri, which understands neither `PROT_NONE` nor `madvise`,
//!   the range comes from `System` with frame alignment and is usable from
//!   the start, a decommit writes zeros (what the kernel's leaves behind)
//!   and gives nothing back, and there are no fork hooks (Miri cannot
//!   fork). Thread-exit hooks, the process id and stderr are the C
//!   library's on Unix, Miri included.
//! - `unsupported`: anywhere else, no region (every allocation is the inner
//!   allocator's) and no thread-exit hook.
//!
//! On every platform [`decommit`] either gives the memory back and leaves
//! the range reading as zero, or says it did not: a free extent whose
//! memory went back serves `alloc_zeroed` without being written.

// `memory`: what Miri replaces (address space, page size, clock, yielding,
// fork and exit hooks); `process`: what Miri runs as it is on Unix (thread
// exit, the process id, stderr, abort).
#[cfg(unix)]
mod unix;
#[cfg(all(unix, not(miri)))]
use unix as memory;
#[cfg(unix)]
use unix as process;

#[cfg(all(windows, not(miri)))]
mod windows;
#[cfg(all(windows, not(miri)))]
use windows as memory;
#[cfg(all(windows, not(miri)))]
use windows as process;

#[cfg(miri)]
mod miri;
#[cfg(miri)]
use miri as memory;

#[cfg(any(not(any(unix, windows)), all(windows, miri)))]
mod unsupported;
#[cfg(not(any(unix, windows, miri)))]
use unsupported as memory;
#[cfg(any(not(any(unix, windows)), all(windows, miri)))]
use unsupported as process;

pub(crate) use memory::{
    advise_huge_pages, at_fork, commit, decommit, map_address_space, now_millis, page_size,
};
// Only the per-site report prints at exit.
#[cfg(feature = "report")]
pub(crate) use memory::at_exit;
pub(crate) use process::{abort, arm_thread_exit, process_id, thread_exit_key, write_stderr};

// Under loom, waits yield to the model checker instead.
#[cfg_attr(loom, allow(unused_imports))]
pub(crate) use memory::yield_cpu;

#[cfg(batch_alloc_race)]
pub(crate) use memory::sleep_micros;

/// The unit tests' fault injection: [`decommit`] on a thread that asked
/// for it fails as the kernel fails it for locked memory, without touching
/// the range. Compiled into the unit tests only; per thread, so that tests
/// running beside each other see only their own refusals.
#[cfg(test)]
pub(crate) mod refusals {
    use core::cell::Cell;

    std::thread_local! {
        // `const`, no destructor: read on the free path (a frame's decay).
        static REFUSE: Cell<bool> = const { Cell::new(false) };
    }

    /// From now on, this thread's decommits fail (`true`) or go to the
    /// kernel (`false`).
    pub(crate) fn refuse_decommit_on_this_thread(refuse: bool) {
        REFUSE.with(|r| r.set(refuse));
    }

    pub(crate) fn refused() -> bool {
        REFUSE.try_with(Cell::get).unwrap_or(false)
    }
}
