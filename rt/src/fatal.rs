//! The one way the allocator path reports a broken invariant: a message on
//! stderr written without allocating, then abort. It never unwinds, and it
//! calls nothing that could (the C library's `abort`, not
//! `std::process::abort`, so that the optimiser knows the call cannot
//! unwind; see `NoUnwind` in `no_unwind.rs`).

/// Writes `message` to stderr and aborts the process.
#[cold]
#[inline(never)]
pub(crate) fn fatal(message: &str) -> ! {
    #[cfg(unix)]
    {
        for part in [message.as_bytes(), b"\n"] {
            // SAFETY: writes from a valid buffer to stderr; the result does
            // not matter on the way to abort.
            unsafe {
                libc::write(2, part.as_ptr().cast(), part.len());
            }
        }
        // SAFETY: no preconditions; never returns.
        unsafe { libc::abort() }
    }
    #[cfg(not(unix))]
    {
        let _ = message;
        std::process::abort()
    }
}

/// The allocator path's `debug_assert!`, which may not panic: in builds
/// with debug assertions (the runtime's tests, a user's debug build),
/// aborts through [`fatal`] with `$what` unless `$invariant` holds; in
/// release builds it compiles to nothing, the expression included.
macro_rules! check {
    ($invariant:expr, $what:literal) => {
        if cfg!(debug_assertions) && !$invariant {
            $crate::fatal::fatal(concat!("batch-alloc: broken invariant: ", $what));
        }
    };
}
pub(crate) use check;
