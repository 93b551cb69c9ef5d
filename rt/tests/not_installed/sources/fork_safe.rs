//! Keeps std's one-time initialisations and locks out of the runtime.
//! A forked child has only the thread that forked: a
//! `OnceLock` another thread was initialising, or a `Mutex` it held, stays
//! so in the child for good, and the child's first scope or allocation
//! waits forever (the settings' `OnceLock` did exactly that). The runtime's
//! one-time calls are `CallOnce`s (`sync.rs`), which a child takes over, and
//! its locks are `SpinLock`s that its fork handlers hold across a fork
//! (`locks.rs`). This test reads the runtime's sources, comments and unit
//! tests left out, and fails on any name of std's kinds (loom's
//! `lazy_static!`, in the models' build only, aside).

use std::fs;

use super::layers::code;

/// The names, and what to use instead.
const FORBIDDEN: [(&str, &str); 10] = [
    ("OnceLock", "sync::CallOnce"),
    ("OnceCell", "sync::CallOnce"),
    ("LazyLock", "sync::CallOnce"),
    ("LazyCell", "sync::CallOnce"),
    ("Once", "sync::CallOnce"),
    ("lazy_static", "sync::CallOnce"),
    ("Mutex", "a SpinLock in locks.rs"),
    ("RwLock", "a SpinLock in locks.rs"),
    ("Condvar", "a SpinLock in locks.rs"),
    ("Barrier", "a SpinLock in locks.rs"),
];

/// The identifiers of `code`, in order.
fn identifiers(code: &str) -> impl Iterator<Item = &str> {
    code.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
}

/// `file: name (use instead)` for every forbidden name in `code`.
fn problems(file: &str, code: &str) -> Vec<String> {
    let mut previous = "";
    let mut found = Vec::new();
    for word in identifiers(code) {
        if let Some((_, instead)) = FORBIDDEN.iter().find(|(name, _)| *name == word) {
            if !(word == "lazy_static" && previous == "loom") {
                found.push(format!("{file}: {word} (use {instead})"));
            }
        }
        previous = word;
    }
    found
}

#[test]
fn the_runtime_uses_no_lock_or_one_time_init_a_fork_cannot_take_over() {
    let mut found = Vec::new();
    for (_, path) in super::runtime_sources() {
        let file = path.file_name().unwrap().to_str().unwrap().to_string();
        // Test modules, whole.
        if file == "loom_model.rs" || file == "alloc_model.rs" {
            continue;
        }
        found.extend(problems(&file, &code(&fs::read_to_string(&path).unwrap())));
    }
    found.sort();
    assert!(found.is_empty(), "not fork-safe:\n{}", found.join("\n"));
}

#[test]
fn the_reader_finds_the_names_and_spares_runonce_and_loom() {
    let code = "static A: CallOnce = CallOnce::new();\nloom::lazy_static! {}\nstatic B: \
                std::sync::Once = Once::new();\nuse std::sync::{Mutex, OnceLock};";
    assert_eq!(
        problems("f.rs", code),
        [
            "f.rs: Once (use sync::CallOnce)",
            "f.rs: Once (use sync::CallOnce)",
            "f.rs: Mutex (use a SpinLock in locks.rs)",
            "f.rs: OnceLock (use sync::CallOnce)",
        ]
    );
}
