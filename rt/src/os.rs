//! Address space from the operating system: reserve a range, make parts of it
//! usable, give parts of it back. Nothing else in the runtime talks to the OS.
//!
//! Under Miri, which understands neither `PROT_NONE` nor `madvise`, the range
//! comes from `System` with frame alignment and is usable from the start.

#[cfg(all(unix, not(miri)))]
mod imp {
    use core::ptr::{self, NonNull};

    /// Reserves `len` bytes of address space that no access may touch yet.
    pub fn reserve(len: usize) -> Option<NonNull<u8>> {
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
    /// - The range lies inside one range returned by [`reserve`] and is
    ///   page-aligned.
    pub unsafe fn commit(start: *mut u8, len: usize) -> bool {
        // SAFETY: by the caller's contract the range is ours and aligned;
        // raising the protection of reserved pages changes no live data.
        unsafe { libc::mprotect(start.cast(), len, libc::PROT_READ | libc::PROT_WRITE) == 0 }
    }

    /// Returns the memory of `[start, start + len)` to the OS. The range stays
    /// usable and reads as zero afterwards.
    ///
    /// # Safety
    /// - The range is committed, page-aligned, and holds nothing anyone will
    ///   read again.
    pub unsafe fn decommit(start: *mut u8, len: usize) {
        // SAFETY: by the caller's contract no live data is in the range.
        // MADV_DONTNEED on private anonymous memory only drops the pages.
        unsafe {
            libc::madvise(start.cast(), len, libc::MADV_DONTNEED);
        }
    }
}

#[cfg(miri)]
mod imp {
    use crate::config::FRAME_SIZE;
    use core::ptr::NonNull;
    use std::alloc::{GlobalAlloc, Layout, System};

    pub fn reserve(len: usize) -> Option<NonNull<u8>> {
        let layout = Layout::from_size_align(len, FRAME_SIZE).ok()?;
        // SAFETY: the layout has a non-zero size.
        NonNull::new(unsafe { System.alloc_zeroed(layout) })
    }

    /// # Safety
    /// - The range lies inside one range returned by [`reserve`].
    pub unsafe fn commit(_start: *mut u8, _len: usize) -> bool {
        true
    }

    /// # Safety
    /// - The range holds nothing anyone will read again.
    pub unsafe fn decommit(_start: *mut u8, _len: usize) {}
}

#[cfg(not(any(unix, miri)))]
mod imp {
    use core::ptr::NonNull;

    pub fn reserve(_len: usize) -> Option<NonNull<u8>> {
        None
    }

    /// # Safety
    /// - Never called: [`reserve`] never succeeds here.
    pub unsafe fn commit(_start: *mut u8, _len: usize) -> bool {
        false
    }

    /// # Safety
    /// - Never called: [`reserve`] never succeeds here.
    pub unsafe fn decommit(_start: *mut u8, _len: usize) {}
}

pub(crate) use imp::{commit, decommit, reserve};
