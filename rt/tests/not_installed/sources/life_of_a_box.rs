//! Keeps "The life of a box" in `rt/src/lib.rs`'s crate docs true: every
//! function it names must be defined in the file it names.
//!
//! The convention, also stated in the section: a function is named as a
//! backticked name, one space, and its file backticked in parentheses,
//! `` `name` (`file.rs`) `` (a line break may stand for the space). The
//! name is an identifier or `Type::method`. A path that starts with one of
//! the runtime's folders (the layers `rt/src/lib.rs` lists: `heap/free.rs`)
//! is in `rt/src/`; any other is relative to the workspace root
//! (`src/lib.rs` is the facade's, `macros/src/guard.rs` the attribute's).
//!
//! The check: the file exists and defines `fn name(` or `fn name<`; for
//! `Type::method`, the file also has an `impl` line naming `Type`. Every
//! "(`" in the section must open such a file reference, so a pair written
//! any other way fails rather than going unchecked.

use std::fs;
use std::path::{Path, PathBuf};

const HEADING: &str = "# The life of a box";

/// The section's text: the `//!` lines from its heading to the next
/// top-level heading or the end of the crate docs, each trimmed, joined by
/// spaces (so a pair broken across lines reads as one).
fn section(lib: &str) -> String {
    let mut lines = lib
        .lines()
        .map_while(|line| line.strip_prefix("//!"))
        .map(str::trim);
    assert!(
        lines.any(|line| line == HEADING),
        "rt/src/lib.rs's crate docs have no `{HEADING}` section"
    );
    lines
        .take_while(|line| !line.starts_with("# "))
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_name(name: &str) -> bool {
    let segments: Vec<&str> = name.split("::").collect();
    segments.len() <= 2
        && segments.iter().all(|s| {
            let mut chars = s.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

fn is_path(path: &str) -> bool {
    path.ends_with(".rs")
        && !path.starts_with('/')
        && !path.contains("..")
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))
}

/// Some 60 bytes of `text` either side of `at`, for messages.
fn around(text: &str, at: usize) -> &str {
    let mut start = at.saturating_sub(60);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + 60).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    &text[start..end]
}

/// Every (name, file) pair in `text`; panics on a "(`" that does not close
/// a pair of the convention.
fn pairs(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("(`") {
        let context = around(text, at);
        let before = text[..at]
            .strip_suffix("` ")
            .unwrap_or_else(|| panic!("no backticked name before the file in: {context}"));
        let name = &before[before.rfind('`').map_or(0, |i| i + 1)..];
        let after = &text[at + 2..];
        let path = after
            .find("`)")
            .map(|end| &after[..end])
            .unwrap_or_else(|| panic!("a file reference not closed by \"`)\" in: {context}"));
        assert!(is_name(name), "not a function name: `{name}` in: {context}");
        assert!(is_path(path), "not a source file: `{path}` in: {context}");
        found.push((name.to_string(), path.to_string()));
    }
    found
}

/// The file `path` names, where `folders` are the runtime's layers.
fn file_of(rt: &Path, folders: &[String], path: &str) -> PathBuf {
    let first = path.split('/').next().unwrap_or_default();
    match folders.iter().any(|folder| folder == first) {
        true => rt.join("src").join(path),
        false => rt.parent().expect("rt/ is in the workspace").join(path),
    }
}

fn is_word_in(word: &str, line: &str) -> bool {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

/// Why `name` is not defined in `source`, or `None` if it is.
fn missing(name: &str, source: &str) -> Option<String> {
    let (ty, function) = match name.split_once("::") {
        Some((ty, function)) => (Some(ty), function),
        None => (None, name),
    };
    let defined = [format!("fn {function}("), format!("fn {function}<")]
        .iter()
        .any(|def| source.contains(def.as_str()));
    if !defined {
        return Some(format!("no `fn {function}`"));
    }
    if let Some(ty) = ty {
        let has_impl = source.lines().map(str::trim_start).any(|line| {
            (line.starts_with("impl") || line.starts_with("unsafe impl")) && is_word_in(ty, line)
        });
        if !has_impl {
            return Some(format!("no `impl` of `{ty}`"));
        }
    }
    None
}

#[test]
fn every_function_the_life_of_a_box_names_is_defined_in_its_file() {
    let rt = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = fs::read_to_string(rt.join("src/lib.rs")).expect("rt/src/lib.rs");
    let pairs = pairs(&section(&lib));
    assert!(!pairs.is_empty(), "the section names no function");
    let folders: Vec<String> = super::layers::layers(&lib).into_keys().collect();
    let mut failures = Vec::new();
    for (name, path) in &pairs {
        let file = file_of(rt, &folders, path);
        let problem = match fs::read_to_string(&file) {
            Err(e) => Some(format!("cannot read {}: {e}", file.display())),
            Ok(source) => missing(name, &source),
        };
        if let Some(problem) = problem {
            failures.push(format!("`{name}` (`{path}`): {problem}"));
        }
    }
    assert!(
        failures.is_empty(),
        "\"The life of a box\" in rt/src/lib.rs names functions its files do not define \
         (rename them there too):\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_parser_reads_the_convention_and_rejects_other_spellings() {
    let text = "a — `free` (`heap/free.rs`), `Guard::enter` (`front/expansion.rs`) and \
                `rewrite_fn` (`macros/src/expand.rs`).";
    assert_eq!(
        pairs(text),
        [
            ("free", "heap/free.rs"),
            ("Guard::enter", "front/expansion.rs"),
            ("rewrite_fn", "macros/src/expand.rs"),
        ]
        .map(|(n, p)| (n.to_string(), p.to_string()))
    );
    for bad in [
        "free (`free.rs`)",
        "`free`(`free.rs`)",
        "`free` (`free.rs)",
        "`a b` (`free.rs`)",
        "`free` (`free.txt`)",
        "`free` (`../free.rs`)",
    ] {
        assert!(
            std::panic::catch_unwind(|| pairs(bad)).is_err(),
            "accepted: {bad}"
        );
    }
    assert_eq!(
        missing("free", "pub(crate) unsafe fn free(p: *mut u8)"),
        None
    );
    assert_eq!(
        missing("box_in_scope", "pub fn box_in_scope<T>(value: T)"),
        None
    );
    assert!(missing("free", "fn free_slowly(").is_some());
    assert!(missing("Guard::enter", "impl ScopedFuture {\n fn enter(").is_some());
    assert_eq!(missing("Guard::enter", "impl Guard {\n fn enter("), None);
    let rt = Path::new("/w/rt");
    let folders = ["heap".to_string()];
    assert_eq!(
        file_of(rt, &folders, "heap/free.rs"),
        rt.join("src/heap/free.rs")
    );
    assert_eq!(
        file_of(rt, &folders, "src/lib.rs"),
        Path::new("/w/src/lib.rs")
    );
}
