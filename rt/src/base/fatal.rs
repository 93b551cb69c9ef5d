//! The one way the allocator path reports a broken invariant: a message on
//! stderr written without allocating, then abort. It never unwinds, and it
//! calls nothing that could (on Unix the C library's `abort`, not
//! `std::process::abort`, so that the optimiser knows the call cannot
//! unwind; see `NoUnwind` in `no_unwind.rs`).

/// Writes `message` to stderr and aborts the process.
#[cold]
#[inline(never)]
pub(crate) fn fatal(message: &str) -> ! {
    crate::base::os::write_stderr(message.as_bytes());
    crate::base::os::write_stderr(b"\n");
    crate::base::os::abort()
}

/// The allocator path's `debug_assert!`, which may not panic: in builds
/// with debug assertions (the runtime's tests, a user's debug build),
/// aborts through [`fatal`] with `$what` unless `$invariant` holds; in
/// release builds it compiles to nothing, the expression included.
macro_rules! check {
    ($invariant:expr, $what:literal) => {
        if cfg!(debug_assertions) && !$invariant {
            $crate::base::fatal::fatal(concat!("batch-alloc: broken invariant: ", $what));
        }
    };
}
pub(crate) use check;
