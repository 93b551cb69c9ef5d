//! Under Miri, which understands neither `PROT_NONE` nor `madvise`: the
//! range comes from `System` with frame alignment and is usable from the
//! start, a decommit writes zeros and gives nothing back, time stands
//! still, and nothing can fork.

use crate::base::config::FRAME_SIZE;
use core::ptr::NonNull;
use std::alloc::{GlobalAlloc, Layout, System};

pub fn map_address_space(len: usize) -> Option<NonNull<u8>> {
    let layout = Layout::from_size_align(len, FRAME_SIZE).ok()?;
    // SAFETY: the layout has a non-zero size.
    NonNull::new(unsafe { System.alloc_zeroed(layout) })
}

/// `System`'s frame alignment serves pages of a frame's size.
pub fn page_size() -> usize {
    FRAME_SIZE
}

/// # Safety
/// - The range lies inside one range returned by [`map_address_space`].
pub unsafe fn commit(_start: *mut u8, _len: usize) -> bool {
    true
}

/// # Safety
/// - The range lies inside one range returned by [`map_address_space`].
pub unsafe fn advise_huge_pages(_start: *mut u8, _len: usize) {}

/// What every platform's decommit leaves behind: the range reads as zero
/// (written here, since nothing goes back). A refusal only when the unit
/// tests inject one.
///
/// # Safety
/// - The range lies inside one range returned by [`map_address_space`]
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
