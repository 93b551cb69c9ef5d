//! Where the runtime has no system layer (neither Unix nor Windows, and
//! Windows under Miri): no region, so batches and scopes serve plain
//! allocations from the inner allocator, and no thread-exit hook, so no
//! thread makes a heap. What is here is std's.

use core::ffi::c_void;
#[cfg(not(miri))]
use core::ptr::NonNull;

#[cfg(not(miri))]
pub fn map_address_space(_len: usize) -> Option<NonNull<u8>> {
    None
}

#[cfg(not(miri))]
pub fn page_size() -> usize {
    0
}

/// # Safety
/// - Never called: [`map_address_space`] never succeeds here.
#[cfg(not(miri))]
pub unsafe fn commit(_start: *mut u8, _len: usize) -> bool {
    false
}

/// # Safety
/// - Never called: [`map_address_space`] never succeeds here.
#[cfg(not(miri))]
pub unsafe fn advise_huge_pages(_start: *mut u8, _len: usize) {}

/// # Safety
/// - Never called: [`map_address_space`] never succeeds here.
#[cfg(not(miri))]
pub unsafe fn decommit(_start: *mut u8, _len: usize) -> bool {
    false
}

#[cfg(not(miri))]
pub fn now_millis() -> u32 {
    0
}

#[cfg(all(not(miri), feature = "report"))]
pub fn at_exit(_f: extern "C" fn()) -> bool {
    false
}

#[cfg(not(miri))]
pub fn yield_cpu() {
    std::thread::yield_now();
}

#[cfg(not(miri))]
#[allow(dead_code)]
pub fn sleep_micros(micros: u32) {
    std::thread::sleep(std::time::Duration::from_micros(micros.into()));
}

/// Nothing to register: no `fork` here.
#[cfg(not(miri))]
pub fn at_fork(
    _prepare: unsafe extern "C" fn(),
    _parent: unsafe extern "C" fn(),
    _child: unsafe extern "C" fn(),
) -> bool {
    true
}

pub fn process_id() -> u32 {
    std::process::id()
}

pub fn write_stderr(bytes: &[u8]) {
    use std::io::Write;
    // Best effort, for warnings: nothing depends on it.
    let _ = std::io::stderr().write_all(bytes);
}

pub fn abort() -> ! {
    std::process::abort()
}

pub type ThreadExitCallback = unsafe extern "C" fn(*mut c_void);

pub fn thread_exit_key(_on_exit: ThreadExitCallback) -> Option<usize> {
    None
}

pub fn arm_thread_exit(_key: usize) -> bool {
    false
}
