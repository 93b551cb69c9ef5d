//! Re-running one test of the current test binary in a child process, for
//! outcomes a test cannot survive in its own process (an abort, an
//! address-space limit). Shared by the runtime's tests and the facade's
//! (which include this file by path).

use std::process::{Command, Output};

/// Environment variable that tells a re-run test binary which child role
/// to play.
pub const CHILD_ENV: &str = "BA_RT_TEST_CHILD";

/// The child role this process was started for, if any.
pub fn child_role() -> Option<String> {
    std::env::var(CHILD_ENV).ok()
}

/// Runs test `test` of this test binary alone in a child process, with
/// [`CHILD_ENV`] set to `role` and, if given, the address-space limit
/// `ulimit -v` (in KiB) applied by a shell before the binary starts.
pub fn run_child(test: &str, role: &str, ulimit_v_kib: Option<u64>) -> Output {
    child_command(test, role, ulimit_v_kib)
        .output()
        .expect("the test binary runs as a child")
}

/// The command [`run_child`] runs, for a caller that adds to it (more
/// environment variables, say) before running it.
pub fn child_command(test: &str, role: &str, ulimit_v_kib: Option<u64>) -> Command {
    let exe = std::env::current_exe().expect("path of the test binary");
    let args = [
        test,
        "--exact",
        "--include-ignored",
        "--nocapture",
        "--test-threads=1",
    ];
    let mut command = match ulimit_v_kib {
        None => Command::new(&exe),
        Some(kib) => {
            let mut sh = Command::new("sh");
            sh.arg("-c")
                .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
                .arg(&exe);
            sh
        }
    };
    // The child reports what a user would see by default: no backtraces.
    command
        .args(args)
        .env(CHILD_ENV, role)
        .env_remove("RUST_BACKTRACE");
    command
}

/// A child's output, for assertion messages.
pub fn describe(output: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The name libtest gives test function `name` of the module whose path
/// (`module_path!()`) is `module`: the path without the crate's name, as
/// `--exact` wants it.
pub fn test_name(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_crate, path)) => format!("{path}::{name}"),
        None => name.to_string(),
    }
}
