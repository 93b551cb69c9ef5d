//! The runtime's system calls on Unix (Linux, macOS, FreeBSD and the
//! others), through `libc`. Under Miri only the thread-exit hooks, the
//! process id, stderr and abort are used from here (Miri runs those C
//! library calls); the rest is `miri.rs`'s.

use core::ffi::c_void;
use core::ptr;
#[cfg(not(miri))]
use core::ptr::NonNull;

/// Maps `len` bytes of address space that no access may touch yet.
#[cfg(not(miri))]
pub fn map_address_space(len: usize) -> Option<NonNull<u8>> {
    // Linux would otherwise count the whole range against the commit limit
    // under strict overcommit; the BSDs charge only what is made writable.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const NO_RESERVE: libc::c_int = libc::MAP_NORESERVE;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    const NO_RESERVE: libc::c_int = 0;
    // SAFETY: an anonymous private mapping at an address of the kernel's
    // choosing has no preconditions; failure is reported as MAP_FAILED.
    let p = unsafe {
        libc::mmap(
            ptr::null_mut(),
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | NO_RESERVE,
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

/// The size of the system's memory pages, in bytes (0 if it cannot be read).
#[cfg(not(miri))]
pub fn page_size() -> usize {
    // SAFETY: no preconditions; -1 (no answer) becomes 0 below.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).unwrap_or(0)
}

/// Makes `[start, start + len)` readable and writable.
///
/// # Safety
/// - The range lies inside one range returned by [`map_address_space`] and is
///   page-aligned.
#[cfg(not(miri))]
pub unsafe fn commit(start: *mut u8, len: usize) -> bool {
    // SAFETY: by the caller's contract the range is ours and aligned;
    // raising the protection of inaccessible pages changes no live data.
    unsafe { libc::mprotect(start.cast(), len, libc::PROT_READ | libc::PROT_WRITE) == 0 }
}

/// Asks for `[start, start + len)` to be backed by transparent huge
/// pages where the system allows them (`madvise` mode, the common
/// default, grants them only to ranges that ask). A hint: failure (a
/// kernel without transparent huge pages) changes nothing but speed,
/// so its result is not looked at. Linux only: FreeBSD promotes to
/// superpages by itself, macOS has no such advice.
///
/// # Safety
/// - The range lies inside one range returned by [`map_address_space`].
#[cfg(not(miri))]
pub unsafe fn advise_huge_pages(start: *mut u8, len: usize) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: by the caller's contract the range is ours; the advice
    // changes how pages are backed, never their contents.
    unsafe {
        libc::madvise(start.cast(), len, libc::MADV_HUGEPAGE);
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = (start, len);
}

/// Returns the memory of `[start, start + len)` to the OS: true if the
/// kernel took it, and the range then reads as zero. False if it
/// refused (Linux does for locked memory, under `mlock` or `mlockall`, and
/// may for want of resources): then some, all or none of the pages may
/// have been dropped, so the range keeps unknown contents, and whatever
/// was not dropped stays resident. The range stays usable either way.
///
/// # Safety
/// - The range is committed, page-aligned, and holds nothing anyone will
///   read again.
#[cfg(not(miri))]
pub unsafe fn decommit(start: *mut u8, len: usize) -> bool {
    #[cfg(test)]
    if super::refusals::refused() {
        return false;
    }
    // SAFETY: the caller's contract, passed on.
    unsafe { drop_pages(start, len) }
}

/// Linux: `MADV_DONTNEED` drops private anonymous pages, which then fault
/// in again as zero pages.
///
/// # Safety
/// As [`decommit`].
#[cfg(all(not(miri), any(target_os = "linux", target_os = "android")))]
unsafe fn drop_pages(start: *mut u8, len: usize) -> bool {
    // SAFETY: by the caller's contract no live data is in the range.
    // MADV_DONTNEED on private anonymous memory only drops the pages.
    unsafe { libc::madvise(start.cast(), len, libc::MADV_DONTNEED) == 0 }
}

/// Elsewhere `MADV_DONTNEED` may keep the pages and their bytes (macOS,
/// FreeBSD), and `MADV_FREE` leaves them unknown until reclaimed: a fresh
/// anonymous mapping laid over the range in place (`MAP_FIXED`) drops the
/// old pages at once, and the new ones read as zero, as every anonymous
/// mapping does. If the kernel fails the new mapping, whether the old one
/// is still there depends on the kernel: XNU (macOS) puts it back, so the
/// range is as it was and the refusal is reported; a kernel that took it
/// down first may have left a hole, which no frame may be handed out over,
/// so the runtime stops with a message.
///
/// # Safety
/// As [`decommit`].
#[cfg(all(not(miri), not(any(target_os = "linux", target_os = "android"))))]
unsafe fn drop_pages(start: *mut u8, len: usize) -> bool {
    // SAFETY: by the caller's contract the range is ours (inside the
    // region's range, which nothing else maps over) and no live data is in
    // it, so replacing its pages loses nothing.
    let p = unsafe {
        libc::mmap(
            start.cast(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == start.cast() {
        return true;
    }
    if cfg!(target_vendor = "apple") {
        return false;
    }
    // (`fatal` is a layer above this one: its message and abort, here.)
    write_stderr(b"batch-alloc: the OS could not map memory it was given back in place\n");
    abort()
}

/// Milliseconds of a monotonic clock, wrapping: for telling how long
/// a frame has waited. The coarse clock of Linux and FreeBSD is read
/// without a system call.
#[cfg(not(miri))]
pub fn now_millis() -> u32 {
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
    const CLOCK: libc::clockid_t = libc::CLOCK_MONOTONIC_COARSE;
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
    const CLOCK: libc::clockid_t = libc::CLOCK_MONOTONIC;
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes the time into `now`, which outlives the call.
    // Its only failures are a clock the kernel lacks (Linux has the coarse
    // one since 2.6.32, FreeBSD its alias since 10) and a bad pointer (not
    // this one); after one, `now` stays zero and time stands still, as
    // under Miri: frames then go back to the OS at `trim` only, never early.
    unsafe { libc::clock_gettime(CLOCK, &mut now) };
    (now.tv_sec as u64)
        .wrapping_mul(1000)
        .wrapping_add(now.tv_nsec as u64 / 1_000_000) as u32
}

/// Registers `f` to run at normal process exit.
#[cfg(all(not(miri), feature = "report"))]
pub fn at_exit(f: extern "C" fn()) -> bool {
    // SAFETY: `f` is a function of this program, valid for its life.
    unsafe { libc::atexit(f) == 0 }
}

/// Lets another thread run.
#[cfg(not(miri))]
#[cfg_attr(loom, allow(dead_code))]
pub fn yield_cpu() {
    // SAFETY: no preconditions. It cannot fail on Linux, and a yield
    // that did not happen only makes the caller's wait spin once more.
    unsafe {
        libc::sched_yield();
    }
}

/// Sleeps for `micros` microseconds (the race amplifier's widest window).
#[cfg(not(miri))]
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
/// memory).
#[cfg(not(miri))]
pub fn at_fork(
    prepare: unsafe extern "C" fn(),
    parent: unsafe extern "C" fn(),
    child: unsafe extern "C" fn(),
) -> bool {
    // SAFETY: the handlers are functions of this program, valid for its
    // whole life.
    unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) == 0 }
}

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
            _ if interrupted() => {}
            _ => return,
        }
    }
}

/// Whether this thread's last failed call was cut short by a signal
/// (`errno` is `EINTR`), read from the C library's `errno` rather than
/// through `std::io::Error`, whose drop the no-unwind proof cannot see
/// through. False where the runtime does not know where `errno` lives.
fn interrupted() -> bool {
    #[cfg(any(target_os = "linux", target_os = "redox"))]
    // SAFETY: the C library's pointer to this thread's errno, always valid.
    let errno = unsafe { *libc::__errno_location() };
    #[cfg(any(target_os = "android", target_os = "netbsd", target_os = "openbsd"))]
    // SAFETY: as above.
    let errno = unsafe { *libc::__errno() };
    #[cfg(any(
        target_vendor = "apple",
        target_os = "freebsd",
        target_os = "dragonfly"
    ))]
    // SAFETY: as above.
    let errno = unsafe { *libc::__error() };
    #[cfg(not(any(
        target_os = "linux",
        target_os = "redox",
        target_os = "android",
        target_os = "netbsd",
        target_os = "openbsd",
        target_vendor = "apple",
        target_os = "freebsd",
        target_os = "dragonfly"
    )))]
    let errno = 0;
    errno == libc::EINTR
}

/// Ends the process at once. The C library's `abort`, not
/// `std::process::abort`, so that the optimiser knows the call cannot
/// unwind (see `NoUnwind` in `no_unwind.rs`).
pub fn abort() -> ! {
    // SAFETY: no preconditions; never returns.
    unsafe { libc::abort() }
}

/// What runs at a thread's exit: a pthread key's destructor.
pub type ThreadExitCallback = unsafe extern "C" fn(*mut c_void);

/// Makes a key whose destructor `on_exit` runs when a thread that has
/// armed it ([`arm_thread_exit`]) exits: after the thread's
/// thread-locals are destroyed, among the other keys' destructors,
/// which the C library calls again, up to a few rounds, for keys armed
/// while they ran. `None` if no key is left.
pub fn thread_exit_key(on_exit: ThreadExitCallback) -> Option<usize> {
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
