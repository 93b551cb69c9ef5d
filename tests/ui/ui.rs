//! Compile tests of `#[batch_alloc]`.
//!
//! `pass/`: each construct the attribute accepts compiles under
//! `#![forbid(unsafe_code)]` and `#![deny(warnings)]`, and its `main` checks
//! that it behaves as written. `fail/`: each error, with its message
//! committed beside it. `diagnostics/`: user mistakes inside functions, as
//! written (`written/`) and annotated (`annotated/`): the compiler must say
//! the same of both (see [`diagnostics_are_as_written`]). Regenerate the
//! messages with `TRYBUILD=overwrite cargo test -p batch-alloc-ui-tests` and
//! read the diff.
//!
//! A package of its own (see `Cargo.toml`), so that trybuild's project for
//! the cases depends on the facade and serde only.

use std::path::Path;

#[test]
fn ui() {
    // trybuild builds the cases and their dependencies with cargo, in a
    // project of its own that this workspace's profiles do not reach: line
    // tables, as the workspace's [profile.dev] keeps, are all a failing
    // case's backtrace needs, and full debug info made that build a third
    // longer.
    if std::env::var_os("CARGO_PROFILE_DEV_DEBUG").is_none() {
        std::env::set_var("CARGO_PROFILE_DEV_DEBUG", "line-tables-only");
    }
    let t = trybuild::TestCases::new();
    t.pass("pass/*.rs");
    t.compile_fail("fail/*.rs");
    t.compile_fail("diagnostics/*/*.rs");
    // The cases run when `t` drops; the messages are compared after, once
    // trybuild has checked (or, with TRYBUILD=overwrite, written) them.
    drop(t);
    diagnostics_are_as_written(Path::new("diagnostics"));
}

/// The attribute as the annotated copies spell it, on a line of its own.
const ATTRIBUTE: &str = "#[batch_alloc::batch_alloc]";

/// Each case of `diagnostics/` is a pair: `written/x.rs`, a mistake as a
/// user writes it, and `annotated/x.rs`, the same file with the attribute
/// on the blank line above each function or impl block (so that every
/// other line and column stays where it was). The compiler must report
/// the same of both: the same errors and warnings, in order, each with the
/// same code at the same place in the user's code, and none naming a
/// closure or the facade's `__private` items. trybuild has checked each
/// against its committed `.stderr`; this checks that the pair is the same
/// file but for the attribute, and compares the two `.stderr`.
///
/// For synchronous functions the two `.stderr` are the same text. For an
/// `async fn` the wording of some labels differs, and the test allows it:
/// a `?` whose function returns `()` is said to be "in an async block"
/// (the one future the function returns), a wrong return type is noted
/// "inferred to be `T` here" at the return type instead of labelled
/// "expected because of return type" there, and a use after move loses
/// the compiler's suggestion to clone.
fn diagnostics_are_as_written(dir: &Path) {
    let mut cases: Vec<_> = std::fs::read_dir(dir.join("written"))
        .expect("diagnostics/written")
        .map(|entry| entry.expect("a case").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no diagnostics cases");
    let mut differences = Vec::new();
    for written in cases {
        let annotated = dir
            .join("annotated")
            .join(written.file_name().expect("a name"));
        assert_only_annotated(&read(&written), &read(&annotated), &annotated);
        let expected = read(&written.with_extension("stderr"));
        let got = read(&annotated.with_extension("stderr"));
        let got = got.replace("diagnostics/annotated/", "diagnostics/written/");
        if headlines(&got) != headlines(&expected) {
            differences.push(format!(
                "{}:\n--- as written\n{expected}--- annotated\n{got}",
                annotated.display()
            ));
        }
        for word in ["closure", "__private"] {
            if got.contains(word) {
                differences.push(format!("{}.stderr names a {word}", annotated.display()));
            }
        }
    }
    assert!(
        differences.is_empty(),
        "the compiler says something else of the annotated copy:\n{}",
        differences.join("\n")
    );
}

/// Panics unless `annotated` is `written` with [`ATTRIBUTE`] on some of
/// its blank lines.
fn assert_only_annotated(written: &str, annotated: &str, path: &Path) {
    let lines: Vec<&str> = written.lines().collect();
    let lines_annotated: Vec<&str> = annotated.lines().collect();
    assert_eq!(
        lines.len(),
        lines_annotated.len(),
        "{}: not the same lines as written",
        path.display()
    );
    let mut attributes = 0;
    for (number, (line, other)) in lines.iter().zip(&lines_annotated).enumerate() {
        if line != other {
            assert!(
                line.is_empty() && *other == ATTRIBUTE,
                "{}:{}: differs from the case as written other than by `{ATTRIBUTE}` on a \
                 blank line",
                path.display(),
                number + 1
            );
            attributes += 1;
        }
    }
    assert!(attributes > 0, "{}: not annotated", path.display());
}

/// Each diagnostic's level and code (`error[E0308]`, `warning`) and the
/// place it points at first (`--> file:line:column`), in order.
fn headlines(stderr: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = stderr.lines().peekable();
    while let Some(line) = lines.next() {
        let head = match line.split_once(':') {
            Some((head, _)) if head.starts_with("error") || head.starts_with("warning") => head,
            _ => continue,
        };
        let place = lines
            .peek()
            .and_then(|next| next.trim_start().strip_prefix("--> "))
            .unwrap_or("")
            .to_owned();
        out.push((head.to_owned(), place));
    }
    out
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
