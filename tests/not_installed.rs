//! Nothing silent: without `BatchAlloc` as the global allocator, an
//! annotated function runs as written and a debug build says so once, on
//! stderr, naming the fix (unless `BATCH_ALLOC_WARNINGS=off`); an
//! environment variable with a value the runtime does not understand, or a
//! misspelled `BATCH_ALLOC_*` name, gets one line naming what is accepted.
//!
//! This binary installs no global allocator, so it is a test binary of its
//! own. Each case runs in a child
//! process (this test binary again, running one test), so that it sees the
//! environment and the once-per-process warnings afresh, and its stderr is
//! read whole.

#![allow(clippy::vec_box)]

use std::process::Command;

use batch_alloc::{batch_alloc, capture, is_active, stats, Capture};

const CHILD: &str = "NOT_INSTALLED_TEST_CHILD";

#[batch_alloc]
fn boxed(n: u64) -> Vec<Box<u64>> {
    (0..n).map(|i| Box::new(i)).collect()
}

/// Runs `case` in a child process with `env`; returns its stderr.
fn child(case: &str, env: &[(&str, &str)]) -> String {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", case, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env_remove("BATCH_ALLOC_WARNINGS")
        .env_remove("BATCH_ALLOC_CAPTURE")
        .env_remove("BATCH_ALLOC_REPORT");
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{case} failed:\n{stderr}");
    stderr
}

fn in_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// In the child: runs annotated code twice; nothing is served.
#[test]
fn annotated_code_runs_as_written() {
    let before = stats();
    let boxes = boxed(10);
    let again = boxed(3);
    assert_eq!(boxes.len() + again.len(), 13);
    assert!(!is_active());
    assert_eq!(stats(), before);
}

#[test]
fn a_debug_build_says_once_that_batch_alloc_is_not_installed() {
    if in_child() {
        return;
    }
    let stderr = child("annotated_code_runs_as_written", &[]);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("batch-alloc:"))
        .collect();
    if cfg!(debug_assertions) {
        assert_eq!(warnings.len(), 1, "{stderr}");
        assert!(warnings[0].contains("not the global allocator"), "{stderr}");
        assert!(stderr.contains("#[global_allocator]"), "{stderr}");
        assert!(stderr.contains("BatchAlloc::system()"), "{stderr}");
        assert!(stderr.contains("BATCH_ALLOC_WARNINGS=off"), "{stderr}");
    } else {
        assert!(warnings.is_empty(), "{stderr}");
    }
    let silenced = child(
        "annotated_code_runs_as_written",
        &[("BATCH_ALLOC_WARNINGS", "off")],
    );
    assert!(!silenced.contains("batch-alloc:"), "{silenced}");
}

/// In the child: reads the capture setting, which reads the environment.
#[test]
fn capture_from_the_environment() {
    let expected = match std::env::var("EXPECTED_CAPTURE").as_deref() {
        Ok("boxes") => Capture::Boxes,
        _ => Capture::All,
    };
    assert_eq!(capture(), expected);
}

#[test]
fn the_environment_is_read_in_any_case_and_mistakes_are_named() {
    if in_child() {
        return;
    }
    let case = "capture_from_the_environment";
    let stderr = child(
        case,
        &[
            ("BATCH_ALLOC_CAPTURE", "Boxes "),
            ("EXPECTED_CAPTURE", "boxes"),
        ],
    );
    assert!(!stderr.contains("batch-alloc:"), "{stderr}");

    let stderr = child(
        case,
        &[("BATCH_ALLOC_CAPTURE", "1"), ("EXPECTED_CAPTURE", "all")],
    );
    assert!(
        stderr.contains("BATCH_ALLOC_CAPTURE=\"1\" is not understood")
            && stderr.contains("`all` or `boxes`"),
        "{stderr}"
    );

    let stderr = child(
        case,
        &[
            ("BATCH_ALLOC_CAPTUER", "boxes"),
            ("BATCH_ALLOC_REPORT", "false"),
            ("EXPECTED_CAPTURE", "all"),
        ],
    );
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("batch-alloc:"))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("BATCH_ALLOC_CAPTUER"), "{stderr}");
    assert!(lines[0].contains("BATCH_ALLOC_CAPTURE"), "{stderr}");
}
