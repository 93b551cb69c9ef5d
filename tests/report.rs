//! The per-site report (feature `report`): each place that opens a scope
//! (an annotated function, an `async fn`, a `scope()` call) counts how often
//! it opened or joined one and every allocation its scopes served; without
//! the feature, `report()` says how to turn it on. A test binary of its
//! own: the report is the process's, of every site in the binary, and the
//! table names these sites. CI runs it with the feature: `cargo test
//! --features report --test report`.

// Vectors of boxes are what the attribute is for.
#![allow(clippy::vec_box)]

use batch_alloc::{batch_alloc, report, scope, BatchAlloc};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

#[batch_alloc]
fn build(n: u64) -> Vec<Box<u64>> {
    (0..n).map(Box::new).collect()
}

#[batch_alloc]
fn leaf(i: u64) -> Box<u64> {
    Box::new(i)
}

fn strings(n: usize) -> Vec<String> {
    (0..n).map(|i| i.to_string()).collect()
}

/// The report's line for the function named `name`.
#[cfg(feature = "report")]
fn line_for<'t>(table: &'t str, name: &str) -> &'t str {
    table
        .lines()
        .find(|l| l.starts_with("tests/report.rs:") && l.split_whitespace().nth(1) == Some(name))
        .unwrap_or_else(|| panic!("no site {name} in\n{table}"))
}

/// The number after `served ` in a report line.
#[cfg(feature = "report")]
fn served(line: &str) -> u64 {
    line.split("served ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"))
}

#[cfg(feature = "report")]
#[test]
fn each_site_says_what_it_did() {
    for _ in 0..3 {
        drop(build(100));
    }
    drop(leaf(1));
    // Joined: `leaf` inside a scope opened by `scope()`, which counts the
    // 20 strings and their vector as well as the box.
    let scope_line = line!() + 1;
    let (numbers, boxed) = scope(|| (strings(20), leaf(2)));
    drop((numbers, boxed));
    let table = report();
    // Each call of `build` opened a scope that served its 100 boxes and
    // the vector.
    let function = line_for(&table, "build");
    assert!(function.contains("3 opened a scope (served"), "{table}");
    assert!(served(function) >= 303, "{table}");
    let leaf_fn = line_for(&table, "leaf");
    assert!(
        leaf_fn.contains("1 opened a scope") && leaf_fn.contains("1 joined one"),
        "{table}"
    );
    let place = format!("tests/report.rs:{scope_line}:");
    let scope_call = table
        .lines()
        .find(|l| l.starts_with(&place))
        .unwrap_or_else(|| panic!("no scope() at line {scope_line} in\n{table}"));
    assert!(scope_call.contains("scope()"), "{table}");
    assert!(
        scope_call.contains("1 opened a scope (served 22 allocations)"),
        "{table}"
    );
}

#[cfg(not(feature = "report"))]
#[test]
fn without_the_feature_the_report_says_how_to_turn_it_on() {
    drop(build(10));
    drop(leaf(1));
    drop(scope(|| strings(3)));
    let text = report();
    assert!(text.contains("off"), "{text}");
    assert!(text.contains("features = [\"report\"]"), "{text}");
}

#[cfg(feature = "report")]
struct Filler;

#[cfg(feature = "report")]
#[batch_alloc]
impl Filler {
    fn fill(&self, n: u64) -> Vec<Box<u64>> {
        (0..n).map(Box::new).collect()
    }

    fn fill_twice(&self, n: u64) -> usize {
        (0..2).map(|_| self.fill(n).len()).sum()
    }
}

/// Each call of a method counts once, as opened or as joined.
#[cfg(feature = "report")]
#[test]
fn a_method_counts_each_call_once() {
    drop(Filler.fill(3));
    assert_eq!(Filler.fill_twice(2), 4);
    let table = report();
    let fill = line_for(&table, "fill");
    assert!(
        fill.contains("1 opened a scope") && fill.contains("2 joined one"),
        "{table}"
    );
    assert!(
        line_for(&table, "fill_twice").contains("1 opened a scope"),
        "{table}"
    );
}
