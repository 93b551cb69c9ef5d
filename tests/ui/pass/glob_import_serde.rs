// A glob import of the crate root next to serde's derive: nothing the glob
// brings in shadows the `serde` crate, neither for `use serde::...` nor for
// the derive's `#[serde(...)]` attributes, and the helpers are named by path.
#![forbid(unsafe_code)]
#![deny(warnings)]

use batch_alloc::*;
use serde::{Deserialize, Serialize};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

#[derive(Deserialize, Serialize)]
struct Point {
    x: i32,
    y: i32,
}

#[derive(Deserialize, Serialize)]
struct Path {
    #[serde(with = "batch_alloc::serde_scope")]
    points: Vec<Box<Point>>,
}

#[batch_alloc]
fn sum(points: &[Box<Point>]) -> Vec<Box<i32>> {
    let mut out = Vec::new();
    for p in points {
        out.push(Box::new(p.x + p.y));
    }
    out
}

fn main() {
    let path: Path =
        serde_json::from_str(r#"{"points": [{"x": 1, "y": 2}, {"x": 3, "y": 4}, {"x": 5, "y": 6}]}"#)
            .unwrap();
    let sums = sum(&path.points);
    assert_eq!(sums.iter().map(|s| **s).collect::<Vec<_>>(), [3, 7, 11]);
    assert!(stats().scoped_allocations >= 3);
}
