//! A child made by `fork()` itself, not a new run of the test binary: for
//! what only a fork shows (a lock or a one-time run another thread held at
//! that moment, what the child inherits), and a wait that kills a child
//! that hangs.

use std::time::{Duration, Instant};

/// How a forked child ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forked {
    /// It exited with this status.
    Exited(i32),
    /// A signal ended it.
    Signalled(i32),
    /// It had not ended within the time allowed, and was killed.
    Hung,
}

/// Forks; the child runs `child` and leaves with `_exit` and the status it
/// returned (or, if it ends the process itself, as it likes); the parent
/// waits for it at most `timeout`, killing it then.
///
/// The child has only the thread that forked: `child` must not wait on
/// anything another thread may have held at the fork (std's stdout and
/// stderr locks among them: report through the exit status), and should not
/// panic (the message takes the stderr lock).
pub fn fork_and_wait(timeout: Duration, child: impl FnOnce() -> i32) -> Forked {
    // SAFETY: the child runs `child`, whose contract is above, then `_exit`.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let status = child();
        // SAFETY: ends the child at once, running no destructor or exit
        // handler of the parent's.
        unsafe { libc::_exit(status) };
    }
    assert!(pid > 0, "fork failed: {}", std::io::Error::last_os_error());
    wait_or_kill(pid, timeout)
}

/// Waits for child `pid`, at most `timeout`, killing it then.
pub fn wait_or_kill(pid: libc::pid_t, timeout: Duration) -> Forked {
    let start = Instant::now();
    let mut nap = Duration::from_micros(20);
    let mut status = 0;
    loop {
        // SAFETY: `pid` is this process's child; `status` is writable.
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if done == pid {
            break;
        }
        let interrupted = std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted;
        assert!(done == 0 || interrupted, "waitpid failed");
        if start.elapsed() > timeout {
            // SAFETY: as above; not reaped yet, so `pid` is still the child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return Forked::Hung;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(2));
    }
    match libc::WIFEXITED(status) {
        true => Forked::Exited(libc::WEXITSTATUS(status)),
        false => Forked::Signalled(libc::WTERMSIG(status)),
    }
}
