//! Nothing silent: without `BatchAlloc` as the global allocator, an
//! annotated function runs as written and a debug build says so once, on
//! stderr, naming the fix (unless `BATCH_ALLOC_WARNINGS=off`); an
//! environment variable with a value the runtime does not understand, or a
//! misspelled `BATCH_ALLOC_*` name, gets one line naming what is accepted.
//!
//! This binary installs no global allocator, so it is a test binary of its
//! own. Each case runs in a child process (this test binary again, running
//! one test: `workloads::in_child!`), so that it sees the environment and
//! the once-per-process warnings afresh, and its output is read whole.

#![allow(clippy::vec_box)]

use std::process::Command;

use batch_alloc::{batch_alloc, is_active, stats};
use workloads::in_child;

#[batch_alloc]
fn boxed(n: u64) -> Vec<Box<u64>> {
    (0..n).map(Box::new).collect()
}

/// A child's command: without the settings this process may have, and
/// with `env`.
fn with_env<'a>(env: &'a [(&str, &str)]) -> impl FnOnce(&mut Command) + 'a {
    move |command| {
        for name in ["BATCH_ALLOC_WARNINGS", "BATCH_ALLOC_REPORT"] {
            command.env_remove(name);
        }
        command.envs(env.iter().copied());
    }
}

/// Runs annotated code twice; nothing is served.
fn run_annotated_code() {
    let before = stats();
    let boxes = boxed(10);
    let again = boxed(3);
    assert_eq!(boxes.len() + again.len(), 13);
    assert!(!is_active());
    assert_eq!(stats(), before);
}

#[test]
fn annotated_code_runs_as_written() {
    run_annotated_code();
}

#[test]
fn a_debug_build_says_once_that_batch_alloc_is_not_installed() {
    let [stderr, silenced] = [&[][..], &[("BATCH_ALLOC_WARNINGS", "off")]].map(|env| {
        let child = in_child!(
            a_debug_build_says_once_that_batch_alloc_is_not_installed,
            with_env(env),
            run_annotated_code
        );
        assert!(child.status.success(), "{child}");
        child.output
    });
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
    assert!(!silenced.contains("batch-alloc:"), "{silenced}");
}

/// Opens a scope, which reads the environment (and, with no `BatchAlloc`,
/// may warn).
fn open_a_scope() {
    assert_eq!(boxed(2).len(), 2);
}

#[test]
fn the_environment_is_read_in_any_case_and_mistakes_are_named() {
    let cases: [&[(&str, &str)]; 3] = [
        &[("BATCH_ALLOC_WARNINGS", " Off ")],
        &[("BATCH_ALLOC_WARNINGS", "maybe")],
        &[
            ("BATCH_ALLOC_WARNINS", "off"),
            ("BATCH_ALLOC_REPORT", "false"),
        ],
    ];
    let [understood, not_understood, misspelled] = cases.map(|env| {
        let child = in_child!(
            the_environment_is_read_in_any_case_and_mistakes_are_named,
            with_env(env),
            open_a_scope
        );
        assert!(child.status.success(), "{child}");
        child.output
    });
    assert!(!understood.contains("batch-alloc:"), "{understood}");
    assert!(
        not_understood.contains("BATCH_ALLOC_WARNINGS=\"maybe\" is not understood")
            && not_understood.contains("`on` or `off`"),
        "{not_understood}"
    );
    let lines: Vec<&str> = misspelled
        .lines()
        .filter(|line| line.starts_with("batch-alloc:") && line.contains("BATCH_ALLOC_WARNINS"))
        .collect();
    assert_eq!(lines.len(), 1, "{misspelled}");
    assert!(lines[0].contains("BATCH_ALLOC_WARNINGS"), "{misspelled}");
}
