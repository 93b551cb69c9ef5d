//! An annotated function takes the stack it took as written, in the build
//! the tests run in: debug for `cargo test`, release in CI's release step.
//!
//! - Per level of a recursion (`recursion.rs`: a parser's shape, as a free
//!   function, a method and a trait method, passing down a context of 8 B
//!   to 512 B by value or by reference), annotated within 10% of as
//!   written, or one 16-byte stack slot more, in both editions. The guard's
//!   flag needs a byte of the frame across the body: where the frame had no
//!   room left in its alignment, that is one slot, which is more than 10%
//!   of a frame under 160 B (112 B to 128 B here, in release). Measured exactly: the deepest level notes
//!   where its stack is, in a recursion of [`SHALLOW`] levels and in one
//!   of [`DEEP`]; the difference is what the levels between took.
//! - A value of 1 MiB or 2 MiB boxed annotated on a thread where it boxes
//!   as written (in a debug build the value is made on the stack first):
//!   2 MiB on a thread of 8 MiB (a main thread's), 1 MiB on one of
//!   1,280 KiB. Each in a child process (this test binary again, running
//!   the test: `workloads::in_child!`), since a stack overflow ends its
//!   process.

use batch_alloc_transparent_2021 as edition2021;
use batch_alloc_transparent_2024 as edition2024;
use workloads::in_child;
use workloads::testing::serially;

const SHALLOW: u32 = 64;
const DEEP: u32 = 192;

/// The thread the recursions run on: room for the deepest of them.
const RECURSION_STACK: usize = 32 << 20;

/// The largest ratio of stack per level, annotated to as written...
const MOST: f64 = 1.10;
/// ...unless the difference is at most one slot of the stack's alignment.
const ONE_SLOT: usize = 16;

type Recursions = Vec<(usize, &'static str, fn(&str, u32) -> usize)>;

/// The stack one level of `shape` of `recursion` takes, in bytes.
fn per_level(recursion: fn(&str, u32) -> usize, shape: &str) -> usize {
    let shallow = recursion(shape, SHALLOW);
    let deep = recursion(shape, DEEP);
    let levels = (DEEP - SHALLOW) as usize;
    let taken = shallow - deep;
    assert_eq!(taken % levels, 0, "{shape}: levels of different sizes");
    taken / levels
}

fn build() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

#[test]
fn an_annotated_recursion_takes_the_stack_it_took_as_written() {
    let editions: [(&str, Recursions, Recursions); 2] = [
        (
            "2021",
            edition2021::as_written::recursions(),
            edition2021::annotated::recursions(),
        ),
        (
            "2024",
            edition2024::as_written::recursions(),
            edition2024::annotated::recursions(),
        ),
    ];
    let (report, failures) = serially(|| {
        let measure = move || {
            let mut report = Vec::new();
            let mut failures = Vec::new();
            for (edition, as_written, annotated) in &editions {
                for shape in ["free", "method", "trait"] {
                    for (&(bytes, passed, written), &(_, _, batched)) in
                        as_written.iter().zip(annotated)
                    {
                        let written = per_level(written, shape);
                        let batched = per_level(batched, shape);
                        let ratio = batched as f64 / written as f64;
                        let line = format!(
                            "{} {edition}, {shape}, {bytes} B {passed}: {written} B per level \
                             as written, {batched} B annotated ({ratio:.3}x)",
                            build()
                        );
                        if ratio > MOST && batched > written + ONE_SLOT {
                            failures.push(line.clone());
                        }
                        report.push(line);
                    }
                }
            }
            (report, failures)
        };
        std::thread::Builder::new()
            .stack_size(RECURSION_STACK)
            .spawn(measure)
            .expect("a thread")
            .join()
            .expect("the recursions returned")
    });
    println!("{}", report.join("\n"));
    assert!(
        failures.is_empty(),
        "more than {:.0}% more stack per level:\n{}",
        (MOST - 1.0) * 100.0,
        failures.join("\n")
    );
}

const CHILD_ENV: &str = "TRANSPARENT_BOX_PROBE";

/// The large boxes of `edition` in `copy`.
fn large_boxes(edition: &str, copy: &str) -> Vec<(usize, fn() -> u8)> {
    match (edition, copy) {
        ("2021", "as written") => edition2021::as_written::large_boxes(),
        ("2021", "annotated") => edition2021::annotated::large_boxes(),
        ("2024", "as written") => edition2024::as_written::large_boxes(),
        ("2024", "annotated") => edition2024::annotated::large_boxes(),
        other => panic!("no such copy: {other:?}"),
    }
}

/// Whether boxing a value of `bytes` in `copy` of `edition` fits a thread
/// of `stack` bytes, in a child process (which reads its probe from
/// `CHILD_ENV`).
fn boxes_on(edition: &str, copy: &str, bytes: usize, stack: usize) -> bool {
    let probe = format!("{edition}/{copy}/{bytes}/{stack}");
    let child = in_child!(
        a_large_value_boxes_annotated_where_it_boxes_as_written,
        |command| {
            command.env(CHILD_ENV, probe);
        },
        || {
            let probe = std::env::var(CHILD_ENV).expect("a probe");
            let words: Vec<&str> = probe.split('/').collect();
            let [edition, copy, bytes, stack] = words[..] else {
                panic!("bad probe {probe:?}");
            };
            let bytes: usize = bytes.parse().expect("a size");
            let boxes = large_boxes(edition, copy);
            let &(_, boxed) = boxes
                .iter()
                .find(|(size, _)| *size == bytes)
                .expect("a box of that size");
            std::thread::Builder::new()
                .stack_size(stack.parse().expect("a stack size"))
                .spawn(move || assert_eq!(boxed(), 7))
                .expect("a thread")
                .join()
                .expect("the box was made");
        }
    );
    child.status.success()
}

#[test]
fn a_large_value_boxes_annotated_where_it_boxes_as_written() {
    let mut failures = Vec::new();
    for edition in ["2021", "2024"] {
        for (bytes, stack) in [(2 << 20, 8 << 20), (1 << 20, 1280 << 10)] {
            let place = format!(
                "{} {edition}: {} KiB boxed on a thread of {} KiB",
                build(),
                bytes >> 10,
                stack >> 10
            );
            assert!(
                boxes_on(edition, "as written", bytes, stack),
                "{place}: does not fit as written"
            );
            if !boxes_on(edition, "annotated", bytes, stack) {
                failures.push(place);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "fits as written, overflows annotated:\n{}",
        failures.join("\n")
    );
}
