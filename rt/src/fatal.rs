//! The one way the allocator path reports a broken invariant: a message on
//! stderr written without allocating, then abort. It never unwinds.

/// Writes `message` to stderr and aborts the process.
#[cold]
pub(crate) fn fatal(message: &str) -> ! {
    #[cfg(unix)]
    {
        let line = [message.as_bytes(), b"\n"];
        for part in line {
            // SAFETY: writes from a valid buffer to stderr; the result does
            // not matter on the way to abort.
            unsafe {
                libc::write(2, part.as_ptr().cast(), part.len());
            }
        }
    }
    #[cfg(not(unix))]
    let _ = message;
    std::process::abort()
}
