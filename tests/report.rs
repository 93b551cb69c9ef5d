//! The per-site report (feature `report`): each place that opens a scope
//! (an annotated function, an `async` body, a `scope()` call) counts how
//! often it opened or joined one and every allocation its scopes served;
//! each rewritten `Box::new` counts what happened there, and the table says
//! why an allocation was plain; without the feature, `report()` says how.
//! A test binary of its own: the report is the process's, of every site in
//! the binary, and the table names these sites by line. CI runs it with
//! the feature: `cargo test --features report --test report`.

// Vectors of boxes are what the attribute is for.
#![allow(clippy::vec_box)]

use batch_alloc::{batch_alloc, report, scope, BatchAlloc};

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

#[batch_alloc]
fn too_large() -> Box<[u8; 5000]> {
    Box::new([7; 5000])
}

#[batch_alloc]
fn leaf(i: u64) -> Box<u64> {
    Box::new(i)
}

fn strings(n: usize) -> Vec<String> {
    (0..n).map(|i| i.to_string()).collect()
}

/// The report's line for the site at `line` of this file.
#[cfg(feature = "report")]
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
    // Joined: `leaf` inside a scope opened by `scope()`, which counts the
    // 20 strings and their vector as well as the box.
    let (numbers, boxed) = scope(|| (strings(20), leaf(2)));
    drop((numbers, boxed));
    let table = report();
    // Each call of `build` opened a scope that served its 100 boxes and
    // the vector's growth.
    let function = line_for(&table, 19);
    assert!(function.contains("3 opened a scope (served"), "{table}");
    let served: u64 = function
        .split("served ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{table}"));
    assert!(served >= 300, "{table}");
    assert!(line_for(&table, 22).contains("300 from a scope"), "{table}");
    assert!(
        line_for(&table, 29).contains("1 plain: type not batched"),
        "{table}"
    );
    let leaf_fn = line_for(&table, 33);
    assert!(
        leaf_fn.contains("1 opened a scope") && leaf_fn.contains("1 joined one"),
        "{table}"
    );
    assert!(line_for(&table, 34).contains("2 from a scope"), "{table}");
    let scope_call = line_for(&table, 61);
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
    drop((too_large(), leaf(1)));
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
        let mut out = Vec::new();
        for i in 0..n {
            out.push(Box::new(i));
        }
        out
    }

    fn fill_twice(&self, n: u64) -> usize {
        let mut total = 0;
        for _ in 0..2 {
            total += self.fill(n).len();
        }
        total
    }
}

/// A method of an annotated `impl` opens the scope by calling itself inside
/// it: each call still counts once, as opened or as joined.
#[cfg(feature = "report")]
#[test]
fn a_method_counts_each_call_once() {
    drop(Filler.fill(3));
    assert_eq!(Filler.fill_twice(2), 4);
    let table = report();
    let fill = line_for(&table, 111);
    assert!(
        fill.contains("1 opened a scope") && fill.contains("2 joined one"),
        "{table}"
    );
    assert!(
        line_for(&table, 119).contains("1 opened a scope"),
        "{table}"
    );
}
