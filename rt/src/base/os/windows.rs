//! The runtime's system calls on Windows, through `windows-sys` (and the C
//! runtime's `atexit` and `abort`, through `libc`): the region is mapped
//! (`MEM_RESERVE`) and committed with `VirtualAlloc`, memory goes back with
//! `VirtualFree(MEM_DECOMMIT)`, and a fiber-local slot's callback retires a
//! thread's heap at its exit (with MSVC's toolchain, a TLS callback too, for
//! heaps made in thread-local destructors). There is no `fork`.

use core::ffi::c_void;
use core::mem::MaybeUninit;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, Ordering};

use windows_sys::Win32::Foundation::INVALID_HANDLE_VALUE;
use windows_sys::Win32::Storage::FileSystem::WriteFile;
use windows_sys::Win32::System::Console::{GetStdHandle, STD_ERROR_HANDLE};
use windows_sys::Win32::System::Memory::{
    VirtualAlloc, VirtualFree, MEM_COMMIT, MEM_DECOMMIT, MEM_RESERVE, PAGE_NOACCESS, PAGE_READWRITE,
};
use windows_sys::Win32::System::SystemInformation::{GetSystemInfo, GetTickCount64, SYSTEM_INFO};
use windows_sys::Win32::System::Threading::{GetCurrentProcessId, Sleep, SwitchToThread};

/// Maps `len` bytes of address space that no access may touch yet (what
/// Windows calls reserving it).
pub fn map_address_space(len: usize) -> Option<NonNull<u8>> {
    // SAFETY: a mapping at an address of the system's choosing has no
    // preconditions; failure is reported as null.
    let p = unsafe { VirtualAlloc(ptr::null(), len, MEM_RESERVE, PAGE_NOACCESS) };
    NonNull::new(p.cast())
}

/// The size of the system's memory pages, in bytes.
pub fn page_size() -> usize {
    let mut info = MaybeUninit::<SYSTEM_INFO>::uninit();
    // SAFETY: writes the whole structure; it cannot fail.
    let info = unsafe {
        GetSystemInfo(info.as_mut_ptr());
        info.assume_init()
    };
    info.dwPageSize as usize
}

/// Makes `[start, start + len)` readable and writable (commits it).
///
/// # Safety
/// - The range lies inside one range returned by [`map_address_space`] and is
///   page-aligned.
pub unsafe fn commit(start: *mut u8, len: usize) -> bool {
    // SAFETY: by the caller's contract the range is ours and aligned;
    // committing pages already committed leaves their contents as they are.
    let p = unsafe { VirtualAlloc(start.cast(), len, MEM_COMMIT, PAGE_READWRITE) };
    !p.is_null()
}

/// Nothing: large pages on Windows need a privilege (`SeLockMemoryPrivilege`)
/// and are never paged out, so the region keeps to ordinary ones.
///
/// # Safety
/// - The range lies inside one range returned by [`map_address_space`].
pub unsafe fn advise_huge_pages(_start: *mut u8, _len: usize) {}

/// Returns the memory of `[start, start + len)` to the OS and commits it
/// again: true if the system took it, and the range then reads as zero
/// (Windows fills every newly committed page with zeros when it is first
/// touched). False if `VirtualFree` refused, which leaves the range as it
/// was. The range stays usable either way: commit is charged again at
/// once, but no memory is used until a page is touched. If the system,
/// having just taken the range's commit back, cannot charge it again (its
/// commit limit reached by another thread between the two calls), the
/// range is unusable and no frame may be handed out over it: the runtime
/// stops with a message.
///
/// # Safety
/// - The range is committed, page-aligned, and holds nothing anyone will
///   read again.
pub unsafe fn decommit(start: *mut u8, len: usize) -> bool {
    #[cfg(test)]
    if super::refusals::refused() {
        return false;
    }
    // SAFETY: by the caller's contract the range is ours, committed, and
    // holds no live data.
    if unsafe { VirtualFree(start.cast(), len, MEM_DECOMMIT) } == 0 {
        return false;
    }
    // SAFETY: as for `commit`: the range lies inside the region's range.
    if unsafe { commit(start, len) } {
        return true;
    }
    // (`fatal` is a layer above this one: its message and abort, here.)
    write_stderr(b"batch-alloc: Windows could not commit again memory it had just taken back\n");
    abort()
}

/// Milliseconds since the system started, wrapping (the tick count moves
/// in steps of 10 to 16 ms): for telling how long a frame has waited.
pub fn now_millis() -> u32 {
    // SAFETY: no preconditions.
    unsafe { GetTickCount64() as u32 }
}

/// Registers `f` to run at normal process exit (the C runtime's `atexit`).
#[cfg(feature = "report")]
pub fn at_exit(f: extern "C" fn()) -> bool {
    // SAFETY: `f` is a function of this program, valid for its life.
    unsafe { libc::atexit(f) == 0 }
}

/// Lets another thread run.
#[cfg_attr(loom, allow(dead_code))]
pub fn yield_cpu() {
    // SAFETY: no preconditions; false only says no other thread was ready.
    unsafe {
        SwitchToThread();
    }
}

/// Sleeps for about `micros` microseconds, rounded up to a millisecond
/// (the race amplifier's widest window).
#[allow(dead_code)]
pub fn sleep_micros(micros: u32) {
    // SAFETY: no preconditions.
    unsafe { Sleep(micros.div_ceil(1000)) }
}

/// Nothing to register: Windows has no `fork`.
pub fn at_fork(
    _prepare: unsafe extern "C" fn(),
    _parent: unsafe extern "C" fn(),
    _child: unsafe extern "C" fn(),
) -> bool {
    true
}

/// This process's id.
pub fn process_id() -> u32 {
    // SAFETY: no preconditions; it cannot fail.
    unsafe { GetCurrentProcessId() }
}

/// Writes `bytes` to the standard error handle with `WriteFile`: no lock
/// and no allocation. Best effort, for warnings: what cannot be written
/// (no console, a closed handle) is dropped.
pub fn write_stderr(bytes: &[u8]) {
    // SAFETY: no preconditions; the handle may be null or invalid, checked
    // below.
    let handle = unsafe { GetStdHandle(STD_ERROR_HANDLE) };
    if handle.is_null() || handle == INVALID_HANDLE_VALUE {
        return;
    }
    let mut rest = bytes;
    while !rest.is_empty() {
        let chunk = u32::try_from(rest.len()).unwrap_or(u32::MAX);
        let mut written = 0u32;
        // SAFETY: writes from a valid buffer of at least `chunk` bytes,
        // synchronously (no OVERLAPPED), the count into `written`.
        let ok = unsafe { WriteFile(handle, rest.as_ptr(), chunk, &mut written, ptr::null_mut()) };
        if ok == 0 || written == 0 {
            return;
        }
        rest = rest.get(written as usize..).unwrap_or_default();
    }
}

/// Ends the process at once (the C runtime's `abort`).
pub fn abort() -> ! {
    // SAFETY: no preconditions; never returns.
    unsafe { libc::abort() }
}

/// What runs at a thread's exit, called by the hook below.
pub type ThreadExitCallback = unsafe extern "C" fn(*mut c_void);

/// The function [`thread_exit_key`] was given; null until then.
static ON_EXIT: AtomicPtr<()> = AtomicPtr::new(ptr::null_mut());

/// Calls the function [`thread_exit_key`] was given, if it was.
fn call_on_exit() {
    let on_exit = ON_EXIT.load(Ordering::Acquire);
    if on_exit.is_null() {
        return;
    }
    // SAFETY: `ON_EXIT` holds only what `thread_exit_key` stored: a
    // `ThreadExitCallback`, cast to a pointer.
    let on_exit = unsafe { core::mem::transmute::<*mut (), ThreadExitCallback>(on_exit) };
    // SAFETY: the callback's contract is a pthread key destructor's: called
    // once, on an exiting thread that armed it.
    unsafe { on_exit(ptr::null_mut()) };
}

// The hook is a fiber-local slot's callback, as mimalloc's
// `_mi_thread_done` is called, which Windows runs for every exiting thread
// that set the slot, before the thread's thread-local destructors
// (measured under Wine): a heap that exists then retires, and the thread
// makes none after (its frees are pushed one by one, its scopes do not
// open). A thread whose first use of the runtime is in a thread-local's
// destructor makes its heap after the callbacks have run.
mod fiber_exit {
    use super::*;
    use core::sync::atomic::AtomicU32;
    use windows_sys::Win32::System::Threading::{FlsAlloc, FlsSetValue, FLS_OUT_OF_INDEXES};

    static SLOT: AtomicU32 = AtomicU32::new(FLS_OUT_OF_INDEXES);

    unsafe extern "system" fn at_fiber_exit(_armed: *const c_void) {
        call_on_exit();
    }

    pub fn make() -> bool {
        // SAFETY: the callback is a function of this program, valid for its
        // whole life; the slot is never freed.
        let slot = unsafe { FlsAlloc(Some(at_fiber_exit)) };
        SLOT.store(slot, Ordering::Release);
        slot != FLS_OUT_OF_INDEXES
    }

    pub fn arm() -> bool {
        // The value only makes the callback run (it runs for slots whose
        // value is not null); it is never read.
        let armed = ptr::without_provenance::<c_void>(1);
        // SAFETY: a slot of this process, never freed.
        unsafe { FlsSetValue(SLOT.load(Ordering::Acquire), armed) != 0 }
    }
}

// With MSVC's toolchain, std's thread-locals are the image's own (native
// TLS), intact until the thread is gone, so a second hook catches the heaps
// made in thread-local destructors: a TLS callback of the loader's, which
// Windows runs for every exiting thread (`DLL_THREAD_DETACH`) in the order
// of the `.CRT$XL?` sections. std's, which runs the thread's thread-local
// destructors, is `.CRT$XLB`, the C runtime's for C++ thread-locals
// `.CRT$XLD`; this one comes after both, as a pthread key's destructor
// comes after them on Unix. (With GNU's toolchain std's thread-locals, the
// runtime's included, are boxes behind Windows TLS slots, destroyed one by
// one among the program's own by std's callback: a destructor that runs
// after the runtime's are gone finds the thread with no heap and not
// retired, and a heap it makes does not retire.)
#[cfg(target_env = "msvc")]
mod tls_exit {
    use super::*;
    use core::cell::Cell;

    std::thread_local! {
        // `const`, no destructor: read by the callback at the thread's end.
        static ARMED: Cell<bool> = const { Cell::new(false) };
    }

    #[link_section = ".CRT$XLY"]
    #[used]
    static AT_THREAD_EXIT: unsafe extern "system" fn(*mut c_void, u32, *mut c_void) =
        at_thread_exit;

    // The image's TLS directory, which the linker keeps only if something
    // refers to it: without it no TLS callback runs.
    extern "C" {
        #[link_name = "_tls_used"]
        static TLS_USED: u8;
    }

    unsafe extern "system" fn at_thread_exit(_module: *mut c_void, reason: u32, _: *mut c_void) {
        /// `DLL_THREAD_DETACH`, from winnt.h.
        const THREAD_DETACH: u32 = 3;
        // Retiring twice is harmless: a retired thread has no heap.
        if reason == THREAD_DETACH && ARMED.try_with(|armed| armed.replace(false)) == Ok(true) {
            call_on_exit();
        }
    }

    pub fn make() {
        // Volatile reads, as std does for its own TLS callback, so that
        // neither the compiler nor the linker drops the callback or the
        // TLS directory.
        // SAFETY: both are statics, valid to read.
        unsafe {
            ptr::from_ref(&AT_THREAD_EXIT).read_volatile();
            ptr::from_ref(&TLS_USED).read_volatile();
        }
    }

    pub fn arm() -> bool {
        ARMED.try_with(|armed| armed.set(true)).is_ok()
    }
}

/// Makes the thread-exit hook, which runs `on_exit` when a thread that has
/// armed it ([`arm_thread_exit`]) exits. Called once per process; `None`
/// if Windows has no slot left.
pub fn thread_exit_key(on_exit: ThreadExitCallback) -> Option<usize> {
    ON_EXIT.store(on_exit as *mut (), Ordering::Release);
    #[cfg(target_env = "msvc")]
    tls_exit::make();
    fiber_exit::make().then_some(0)
}

/// Arms the exit hook on this thread. False if Windows could not.
pub fn arm_thread_exit(_key: usize) -> bool {
    #[cfg(target_env = "msvc")]
    if !tls_exit::arm() {
        return false;
    }
    fiber_exit::arm()
}
