//! Part of a test run in a child process, by rusty-fork: the test binary
//! runs again with that one test selected, and the child, reaching the same
//! call, runs the part there and exits. For outcomes a test cannot survive
//! in its own process (an abort, an address-space limit), and for what a
//! process does once (read its settings, warn).

use std::fmt;
use std::hash::Hash;
use std::io::{Read, Seek, SeekFrom};
use std::process::Command;

pub use rusty_fork::{rusty_fork_id, rusty_fork_test_name, ExitStatusWrapper};

/// How a child process ended, and what it wrote.
pub struct ChildOutcome {
    pub status: ExitStatusWrapper,
    /// Its standard output and error, interleaved as written.
    pub output: String,
}

impl ChildOutcome {
    /// Whether `abort` ended the child: SIGABRT on Unix; on Windows the C
    /// runtime's `abort` exits with 3, and std's (a fast fail) with
    /// STATUS_STACK_BUFFER_OVERRUN.
    pub fn aborted(&self) -> bool {
        #[cfg(unix)]
        return self.status.unix_signal() == Some(libc::SIGABRT);
        #[cfg(not(unix))]
        return matches!(self.status.code(), Some(3) | Some(-1_073_740_791));
    }
}

impl fmt::Display for ChildOutcome {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "status {}\n--- output\n{}", self.status, self.output)
    }
}

/// Runs `child` in a child process and returns how it ended. The child is
/// this test binary running the test `test` alone, which must reach this
/// call again, with the same `id`: there the call runs `child` and ends the
/// process, with status 0 if `child` returns and 70 if it panics.
/// `configure` adds to the child's command (its environment, a limit); the
/// child has no `RUST_BACKTRACE`, so that it reports what a user sees by
/// default. [`in_child!`](crate::in_child) names the test and the call.
pub fn run_in_child(
    test: &str,
    id: impl Hash,
    configure: impl FnOnce(&mut Command),
    child: impl FnOnce(),
) -> ChildOutcome {
    let configure = |command: &mut Command| {
        command.env_remove("RUST_BACKTRACE");
        configure(command);
    };
    let wait = |process: &mut rusty_fork::ChildWrapper, file: &mut std::fs::File| {
        let status = process.wait().expect("the child process ends");
        let mut output = Vec::new();
        file.seek(SeekFrom::Start(0))
            .and_then(|_| file.read_to_end(&mut output))
            .expect("the child's output");
        ChildOutcome {
            status,
            output: String::from_utf8_lossy(&output).into_owned(),
        }
    };
    rusty_fork::fork(test, id, configure, wait, child).expect("the child process starts")
}

/// `in_child!(test, configure, child)`: [`run_in_child`] from the test
/// function `test` of the calling module, at this call.
#[macro_export]
macro_rules! in_child {
    ($test:ident, $configure:expr, $child:expr $(,)?) => {
        $crate::testing::run_in_child(
            $crate::testing::rusty_fork_test_name!($test),
            $crate::testing::rusty_fork_id!(),
            $configure,
            $child,
        )
    };
}

/// Makes the process `command` starts begin with at most `kib` KiB of
/// address space, as `ulimit -v` does (Unix only).
#[cfg(unix)]
pub fn limit_address_space(command: &mut Command, kib: u64) {
    use std::os::unix::process::CommandExt;
    let limit = libc::rlimit {
        rlim_cur: kib * 1024,
        rlim_max: kib * 1024,
    };
    let set_limit = move || {
        // SAFETY: `limit` is a valid `rlimit`, read only for the call.
        match unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) } {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    };
    // SAFETY: `set_limit` runs between fork and exec; it calls only
    // `setrlimit`, which is async-signal-safe, and allocates nothing.
    unsafe { command.pre_exec(set_limit) };
}
