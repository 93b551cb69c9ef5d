//! The per-site report (feature `report`): each annotated loop and each
//! rewritten `Box::new` counts what happened there, and the table says why
//! an allocation was plain. Without the feature, `report()` is empty.
//!
//! `cargo test --features report --test report` (CI runs it).

// Vectors of boxes are what the attribute is for.
#![allow(clippy::vec_box)]

use batch_alloc::{batch_alloc, report, BatchAlloc};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

#[batch_alloc]
fn build(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Box::new(i));
    }
    out
}

#[batch_alloc(quiet)]
fn too_large() -> Box<[u8; 5000]> {
    Box::new([7; 5000])
}

#[batch_alloc]
fn leaf(i: u64) -> Box<u64> {
    Box::new(i)
}

#[batch_alloc(boxes)]
fn per_site(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Box::new(i));
    }
    out
}

/// The report's line for the site at `line` of this file.
fn line_for(table: &str, line: u32) -> &str {
    let place = format!("tests/report.rs:{line}:");
    table
        .lines()
        .find(|l| l.starts_with(&place))
        .unwrap_or_else(|| panic!("no site at line {line} in\n{table}"))
}

#[cfg(feature = "report")]
#[test]
fn each_site_says_what_it_did_and_why() {
    for _ in 0..3 {
        drop(build(100));
    }
    drop(too_large());
    drop(leaf(1));
    drop(per_site(2));
    drop(per_site(50));
    let table = report();
    assert!(line_for(&table, 18).contains("3 opened a scope"), "{table}");
    assert!(line_for(&table, 19).contains("300 from a scope"), "{table}");
    assert!(
        line_for(&table, 26).contains("1 plain: type not batched"),
        "{table}"
    );
    assert!(
        line_for(&table, 31).contains("1 plain: no scope open"),
        "{table}"
    );
    let batched = line_for(&table, 38);
    // The loop of two takes a slot per box, counted as its batch's: no
    // plain box.
    assert!(batched.contains("52 from its batch"), "{table}");
    assert!(!batched.contains("plain"), "{table}");
    assert!(batched.contains("refills"), "{table}");
}

#[cfg(not(feature = "report"))]
#[test]
fn without_the_feature_nothing_is_counted() {
    drop(build(10));
    drop((too_large(), leaf(1), per_site(3)));
    assert_eq!(report(), "");
    let _ = line_for;
}
