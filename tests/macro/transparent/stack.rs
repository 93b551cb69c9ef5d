//! An annotated recursion takes no more stack per level than as written
//! (within 10%), in the build the tests run in: debug for `cargo test`,
//! release in CI's release step.
//!
//! For each shape of recursive function (a free function, a method of an
//! inherent impl, a trait-impl method) and each copy (as written,
//! annotated), a search finds the deepest recursion that fits a thread of
//! [`STACK`] bytes: each probe runs in a child process (this test binary
//! again, running the test: `workloads::in_child!`), since a recursion
//! that does not fit ends its process.

use workloads::in_child;
use workloads::testing::serially;

use super::{annotated, as_written};

/// The stack of the thread each probe recurses on.
const STACK: usize = 512 * 1024;

const CHILD_ENV: &str = "BATCH_ALLOC_STACK_PROBE";

/// Recurses `depth` levels with `shape` of `copy` on a thread of [`STACK`]
/// bytes; returns only if it fits.
fn recurse(copy: &str, shape: &str, depth: u32) {
    let input: Vec<u8> = (0..=depth).map(|i| i as u8).collect();
    let (copy, shape) = (copy.to_string(), shape.to_string());
    let thread = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            use self::annotated::Descend as _;
            use self::as_written::Descend as _;
            let tree = match (copy.as_str(), shape.as_str()) {
                ("as_written", "free") => as_written::descend(depth, &mut input.iter()),
                ("annotated", "free") => annotated::descend(depth, &mut input.iter()),
                ("as_written", "method") => as_written::Parser {
                    input: input.iter(),
                    nodes: 0,
                }
                .descend(depth),
                ("annotated", "method") => annotated::Parser {
                    input: input.iter(),
                    nodes: 0,
                }
                .descend(depth),
                ("as_written", "trait") => as_written::Parser {
                    input: input.iter(),
                    nodes: 0,
                }
                .descend_by_trait(depth),
                ("annotated", "trait") => annotated::Parser {
                    input: input.iter(),
                    nodes: 0,
                }
                .descend_by_trait(depth),
                other => panic!("no such recursion: {other:?}"),
            };
            // Dropping the tree recurses too; forget it so only the parse
            // is measured.
            std::mem::forget(tree);
        })
        .expect("a thread");
    thread.join().expect("the recursion returned");
}

/// Whether `depth` levels of `shape` of `copy` fit, in a child process
/// (which reads its probe from `CHILD_ENV`).
fn fits(copy: &str, shape: &str, depth: u32) -> bool {
    let probe = format!("{copy} {shape} {depth}");
    let child = in_child!(
        an_annotated_recursion_takes_the_stack_it_took_as_written,
        |command| {
            command.env(CHILD_ENV, probe);
        },
        || {
            let probe = std::env::var(CHILD_ENV).expect("a probe");
            let mut words = probe.split(' ');
            let (Some(copy), Some(shape), Some(depth)) = (words.next(), words.next(), words.next())
            else {
                panic!("bad probe {probe:?}");
            };
            recurse(copy, shape, depth.parse().expect("a depth"));
        }
    );
    child.status.success()
}

/// The deepest recursion that fits: a doubling search, then a bisection.
fn deepest(copy: &str, shape: &str) -> u32 {
    let mut low = 1;
    assert!(
        fits(copy, shape, low),
        "{copy} {shape}: one level does not fit"
    );
    let mut high = 64;
    while fits(copy, shape, high) {
        low = high;
        high *= 2;
        assert!(high < 1 << 24, "{copy} {shape}: no overflow found");
    }
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        match fits(copy, shape, middle) {
            true => low = middle,
            false => high = middle,
        }
    }
    low
}

#[test]
fn an_annotated_recursion_takes_the_stack_it_took_as_written() {
    let build = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let mut report = Vec::new();
    let mut failures = Vec::new();
    for shape in ["free", "method", "trait"] {
        let (written, annotated) =
            serially(|| (deepest("as_written", shape), deepest("annotated", shape)));
        let per_level = |levels: u32| STACK as f64 / f64::from(levels);
        let ratio = per_level(annotated) / per_level(written);
        let line = format!(
            "{build}, {shape}: {written} levels as written ({:.0} B each), {annotated} annotated \
             ({:.0} B each): {ratio:.3}x the stack per level",
            per_level(written),
            per_level(annotated)
        );
        if ratio > 1.10 {
            failures.push(line.clone());
        }
        report.push(line);
    }
    println!("{}", report.join("\n"));
    assert!(
        failures.is_empty(),
        "more than 10% more stack per level:\n{}",
        failures.join("\n")
    );
}
