//! Everything the runtime asks of the operating system: address space
//! (reserve a range, make parts of it usable, give parts of it back), giving
//! up the CPU, hooks around `fork` and at thread exit, the process id, and
//! warnings on stderr.
//! Nothing else in the runtime talks to the OS, and nothing here allocates
//! through the global allocator or unwinds: every call is a plain system or
//! C library call.
//!
//! Under Miri, which understands neither `PROT_NONE` nor `madvise`, the range
//! comes from `System` with frame alignment and is usable from the start,
//! a decommit writes zeros (what the kernel's leaves behind) and gives
//! nothing back, and there are no fork hooks (Miri cannot fork).
//! Thread-exit hooks, the process id and stderr are the C library's everywhere on
//! Unix, Miri included.

#[cfg(all(unix, not(miri)))]
mod imp {
    use core::ptr::{self, NonNull};

    /// Reserves `len` bytes of address space that no access may touch yet.
    pub fn reserve_address_space(len: usize) -> Option<NonNull<u8>> {
        // SAFETY: an anonymous private mapping at an address of the kernel's
        // choosing has no preconditions; failure is reported as MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            None
        } else {
            NonNull::new(p.cast())
        }
    }

    /// Makes `[start, start + len)` readable and writable.
    ///
    /// # Safety
    /// - The range lies inside one range returned by [`reserve_address_space`] and is
    ///   page-aligned.
    pub unsafe fn commit(start: *mut u8, len: usize) -> bool {
        // SAFETY: by the caller's contract the range is ours and aligned;
        // raising the protection of reserved pages changes no live data.
        unsafe { libc::mprotect(start.cast(), len, libc::PROT_READ | libc::PROT_WRITE) == 0 }
    }

    /// Asks for `[start, start + len)` to be backed by transparent huge
    /// pages where the system allows them (`madvise` mode, the common
    /// default, grants them only to ranges that ask). A hint: failure (a
    /// kernel without transparent huge pages) changes nothing but speed,
    /// so its result is not looked at.
    ///
    /// # Safety
    /// - The range lies inside one range returned by [`reserve_address_space`].
    pub unsafe fn advise_huge_pages(start: *mut u8, len: usize) {
        // SAFETY: by the caller's contract the range is ours; the advice
        // changes how pages are backed, never their contents.
        unsafe {
            libc::madvise(start.cast(), len, libc::MADV_HUGEPAGE);
        }
    }

    /// Returns the memory of `[start, start + len)` to the OS: true if the
    /// kernel took it, and the range then reads as zero. False if it
    /// refused (it does for locked memory, under `mlock` or `mlockall`, and
    /// may for want of resources): then some, all or none of the pages may
    /// have been dropped, so the range keeps unknown contents, and whatever
    /// was not dropped stays resident. The range stays usable either way.
    ///
    /// # Safety
    /// - The range is committed, page-aligned, and holds nothing anyone will
    ///   read again.
    pub unsafe fn decommit(start: *mut u8, len: usize) -> bool {
        #[cfg(test)]
        if super::refusals::refused() {
            return false;
        }
        // SAFETY: by the caller's contract no live data is in the range.
        // MADV_DONTNEED on private anonymous memory only drops the pages.
        unsafe { libc::madvise(start.cast(), len, libc::MADV_DONTNEED) == 0 }
    }

    /// Milliseconds of a monotonic clock, wrapping: for telling how long
    /// a frame has waited. The coarse clock is read from the vDSO, without
    /// a system call.
    pub fn now_millis() -> u32 {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: writes the time into `now`, which outlives the call.
        // Its only failures are a clock the kernel lacks (this one is there
        // since Linux 2.6.32) and a bad pointer (not this one); after one,
        // `now` stays zero and time stands still, as under Miri: frames
        // then go back to the OS at `trim` only, never early.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut now) };
        (now.tv_sec as u64)
            .wrapping_mul(1000)
            .wrapping_add(now.tv_nsec as u64 / 1_000_000) as u32
    }

    /// Registers `f` to run at normal process exit.
    #[cfg(feature = "report")]
    pub fn at_exit(f: extern "C" fn()) -> bool {
        // SAFETY: `f` is a function of this program, valid for its life.
        unsafe { libc::atexit(f) == 0 }
    }

    /// Lets another thread run.
    #[cfg_attr(loom, allow(dead_code))]
    pub fn yield_cpu() {
        // SAFETY: no preconditions. It cannot fail on Linux, and a yield
        // that did not happen only makes the caller's wait spin once more.
        unsafe {
            libc::sched_yield();
        }
    }

    /// Sleeps for `micros` microseconds (the race amplifier's widest window).
    #[allow(dead_code)]
    pub fn sleep_micros(micros: u32) {
        // SAFETY: no preconditions. A sleep cut short (a signal) only
        // narrows one window of the race amplifier.
        unsafe {
            libc::usleep(micros);
        }
    }

    /// Registers handlers that run around `fork()` in the forking thread:
    /// `prepare` before, then `parent` in the parent or `child` in the child.
    /// Prepare handlers run in the reverse order of registration, the others
    /// in order. False if the C library refused (it can only be out of
    /// memory); true where nothing can fork, so that nothing needs them.
    pub fn at_fork(
        prepare: unsafe extern "C" fn(),
        parent: unsafe extern "C" fn(),
        child: unsafe extern "C" fn(),
    ) -> bool {
        // SAFETY: the handlers are functions of this program, valid for its
        // whole life.
        unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) == 0 }
    }
}

#[cfg(miri)]
mod imp {
    use crate::config::FRAME_SIZE;
    use core::ptr::NonNull;
    use std::alloc::{GlobalAlloc, Layout, System};

    pub fn reserve_address_space(len: usize) -> Option<NonNull<u8>> {
        let layout = Layout::from_size_align(len, FRAME_SIZE).ok()?;
        // SAFETY: the layout has a non-zero size.
        NonNull::new(unsafe { System.alloc_zeroed(layout) })
    }

    /// # Safety
    /// - The range lies inside one range returned by [`reserve_address_space`].
    pub unsafe fn commit(_start: *mut u8, _len: usize) -> bool {
        true
    }

    /// # Safety
    /// - The range lies inside one range returned by [`reserve_address_space`].
    pub unsafe fn advise_huge_pages(_start: *mut u8, _len: usize) {}

    /// What the kernel does for private anonymous memory: the range reads
    /// as zero afterwards (written here, since nothing goes back). A
    /// refusal only when the unit tests inject one.
    ///
    /// # Safety
    /// - The range lies inside one range returned by [`reserve_address_space`]
    ///   and holds nothing anyone will read again.
    pub unsafe fn decommit(start: *mut u8, len: usize) -> bool {
        #[cfg(test)]
        if super::refusals::refused() {
            return false;
        }
        // SAFETY: by the caller's contract the range is ours and unused;
        // pointers into the region carry its provenance.
        unsafe { start.write_bytes(0, len) };
        true
    }

    /// Under Miri, time stands still: frames decay only on `trim`.
    pub fn now_millis() -> u32 {
        0
    }

    #[cfg(feature = "report")]
    pub fn at_exit(_f: extern "C" fn()) -> bool {
        false
    }

    pub fn yield_cpu() {
        std::thread::yield_now();
    }

    #[allow(dead_code)]
    pub fn sleep_micros(micros: u32) {
        std::thread::sleep(std::time::Duration::from_micros(micros.into()));
    }

    /// Nothing to register: Miri cannot fork.
    pub fn at_fork(
        _prepare: unsafe extern "C" fn(),
        _parent: unsafe extern "C" fn(),
        _child: unsafe extern "C" fn(),
    ) -> bool {
        true
    }
}

#[cfg(not(any(unix, miri)))]
mod imp {
    use core::ptr::NonNull;

    pub fn reserve_address_space(_len: usize) -> Option<NonNull<u8>> {
        None
    }

    /// # Safety
    /// - Never called: [`reserve`] never succeeds here.
    pub unsafe fn commit(_start: *mut u8, _len: usize) -> bool {
        false
    }

    /// # Safety
    /// - Never called: [`reserve`] never succeeds here.
    pub unsafe fn advise_huge_pages(_start: *mut u8, _len: usize) {}

    /// # Safety
    /// - Never called: [`reserve`] never succeeds here.
    pub unsafe fn decommit(_start: *mut u8, _len: usize) -> bool {
        false
    }

    pub fn now_millis() -> u32 {
        0
    }

    #[cfg(feature = "report")]
    pub fn at_exit(_f: extern "C" fn()) -> bool {
        false
    }

    pub fn yield_cpu() {
        std::thread::yield_now();
    }

    #[allow(dead_code)]
    pub fn sleep_micros(micros: u32) {
        std::thread::sleep(std::time::Duration::from_micros(micros.into()));
    }

    /// Nothing to register: no `fork` here.
    pub fn at_fork(
        _prepare: unsafe extern "C" fn(),
        _parent: unsafe extern "C" fn(),
        _child: unsafe extern "C" fn(),
    ) -> bool {
        true
    }
}

/// Thread-exit hooks, the process id and stderr, the same with and without
/// Miri, which implements these calls.
#[cfg(unix)]
mod posix {
    use core::ffi::c_void;
    use core::ptr;

    /// This process's id: a forked child's differs from its parent's.
    pub fn process_id() -> u32 {
        // SAFETY: no preconditions; `getpid` cannot fail.
        unsafe { libc::getpid() as u32 }
    }

    /// Writes `bytes` to stderr with `write(2)`: no lock (std's stderr
    /// takes one, which a forked child may find held by a thread it does
    /// not have) and no allocation. Best effort, for warnings: what cannot
    /// be written (stderr closed, or failing) is dropped, and nothing else
    /// depends on it.
    pub fn write_stderr(bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            // SAFETY: writes from a valid buffer of `rest.len()` bytes.
            let written = unsafe { libc::write(2, rest.as_ptr().cast(), rest.len()) };
            match usize::try_from(written) {
                Ok(n) if n > 0 => rest = rest.get(n..).unwrap_or_default(),
                // Interrupted before writing anything: try again.
                _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
                _ => return,
            }
        }
    }

    /// Makes a key whose destructor `on_exit` runs when a thread that has
    /// armed it ([`arm_thread_exit`]) exits: after the thread's
    /// thread-locals are destroyed, among the other keys' destructors,
    /// which the C library calls again, up to a few rounds, for keys armed
    /// while they ran. `None` if no key is left.
    pub fn thread_exit_key(on_exit: unsafe extern "C" fn(*mut c_void)) -> Option<usize> {
        let mut key: libc::pthread_key_t = 0;
        // SAFETY: writes the new key into `key`; the destructor is a
        // function of this program, valid for its whole life.
        let made = unsafe { libc::pthread_key_create(&mut key, Some(on_exit)) } == 0;
        made.then_some(key as usize)
    }

    /// Arms `key`, made by [`thread_exit_key`], on this thread. False if
    /// the C library could not (no memory for the thread's key values).
    pub fn arm_thread_exit(key: usize) -> bool {
        // The value only makes the destructor run; it is never read.
        let armed = ptr::without_provenance::<c_void>(1);
        // SAFETY: `key` is a key of this process, never deleted.
        unsafe { libc::pthread_setspecific(key as libc::pthread_key_t, armed) == 0 }
    }
}

#[cfg(not(unix))]
mod posix {
    use core::ffi::c_void;

    pub fn process_id() -> u32 {
        std::process::id()
    }

    pub fn write_stderr(bytes: &[u8]) {
        use std::io::Write;
        // Best effort, for warnings: nothing depends on it.
        let _ = std::io::stderr().write_all(bytes);
    }

    pub fn thread_exit_key(_on_exit: unsafe extern "C" fn(*mut c_void)) -> Option<usize> {
        None
    }

    pub fn arm_thread_exit(_key: usize) -> bool {
        false
    }
}

pub(crate) use imp::{
    advise_huge_pages, at_fork, commit, decommit, now_millis, reserve_address_space,
};
// Only the per-site report prints at exit.
#[cfg(feature = "report")]
pub(crate) use imp::at_exit;
pub(crate) use posix::{arm_thread_exit, process_id, thread_exit_key, write_stderr};

// Under loom, waits yield to the model checker instead.
#[cfg_attr(loom, allow(unused_imports))]
pub(crate) use imp::yield_cpu;

#[cfg(batch_alloc_race)]
pub(crate) use imp::sleep_micros;

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
