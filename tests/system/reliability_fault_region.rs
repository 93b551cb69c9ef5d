//! Fault: the runtime cannot reserve its address range. A child process
//! (this test binary, running one test) runs a workload of
//! `#[batch_alloc]` loops, batches, boxes freed on other threads and a
//! batched box grown as a `Vec`, under `ulimit -v` small enough that the
//! 32 GiB reservation fails but the program starts. It must still work,
//! through plain boxes: `is_active()` is true, no box comes from a batch,
//! and the results are those of an unlimited run of the same workload,
//! which (as a control) does batch.

// Linux only: `ulimit -v` and /proc/self/limits.
#![cfg(target_os = "linux")]
// Vectors of boxes are what batched loops make.
#![allow(clippy::vec_box)]

use std::thread;

use batch_alloc::{batch_alloc, is_active, stats, Batch};
use workloads::in_child;
use workloads::testing::{
    assert_boxes_disjoint, assert_live, assert_slots_back_at, before_capture, check_words, fill,
    limit_address_space, serially, Batches, Captured, ChildOutcome, Filled, Guard,
};

/// Address-space limit for the child, in KiB (about 3.8 GiB): room for the
/// test binary and its threads, not for the runtime's 32 GiB range.
const LIMIT_KIB: u64 = 4_000_000;

/// Starts the child with `run`, with no limit, then with [`LIMIT_KIB`];
/// checks that both succeeded.
fn unlimited_then_limited(run: impl Fn(Option<u64>) -> ChildOutcome) -> [ChildOutcome; 2] {
    [None, Some(LIMIT_KIB)].map(|limit| {
        let child = run(limit);
        assert!(child.status.success(), "{child}");
        child
    })
}

/// Applies `limit`, if any, to a child's command.
fn with_limit(limit: Option<u64>) -> impl FnOnce(&mut std::process::Command) {
    move |command| {
        if let Some(kib) = limit {
            limit_address_space(command, kib);
        }
    }
}

#[batch_alloc]
fn records(ids: std::ops::Range<u64>) -> Vec<Box<[u64; 8]>> {
    let mut out = Vec::new();
    for id in ids {
        out.push(Box::new(fill(id)));
    }
    out
}

#[batch_alloc]
fn chain(n: u64) -> Option<Box<Node>> {
    let mut head = None;
    let mut i = 0;
    while i < n {
        head = Some(Box::new(Node {
            value: fill(i),
            next: head,
        }));
        i += 1;
    }
    head
}

struct Node {
    value: [u64; 3],
    next: Option<Box<Node>>,
}

/// The child's workload; returns a checksum of everything it read back.
fn workload() -> u64 {
    let mut sum = 0u64;
    let mut add = |words: &[u64]| {
        sum = words
            .iter()
            .fold(sum, |s, &w| s.wrapping_mul(31).wrapping_add(w));
    };
    // A `for` loop with a hint, freed on another thread.
    let boxes = records(0..20_000);
    for (id, b) in boxes.iter().enumerate() {
        check_words(&b[..], id as u64);
        add(&b[..]);
    }
    assert_boxes_disjoint(&boxes);
    thread::spawn(move || drop(boxes)).join().unwrap();
    // A `while` loop with no hint: a linked list, dropped iteratively.
    let mut node = chain(5_000);
    let mut expected = 5_000;
    while let Some(mut n) = node {
        expected -= 1;
        check_words(&n.value, expected);
        add(&n.value);
        node = n.next.take();
    }
    assert_eq!(expected, 0);
    // Batches by hand, of three sizes, from several threads.
    let handles: Vec<_> = (0..4u64)
        .map(|t| {
            thread::spawn(move || {
                let mut batch = Batches::with_capacity(300);
                (0..900)
                    .map(|i| {
                        let id = t << 32 | i;
                        (batch.alloc(i as usize, id), id)
                    })
                    .collect::<Vec<(Filled, u64)>>()
            })
        })
        .collect();
    let made: Vec<(Filled, u64)> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    // The boxes of the four threads, all live: intact and disjoint.
    assert_live(&made);
    for (b, _) in made {
        add(b.words());
    }
    // A batched box grown as a vector.
    let b: Box<[u64; 5]> = Batch::with_capacity(10).alloc(fill(77));
    let raw = Box::into_raw(b).cast::<u64>();
    // SAFETY: from a `Box<[u64; 5]>` of the global allocator: 5 initialised
    // words, the layout of a `Vec<u64>` of capacity 5.
    let mut v = unsafe { Vec::from_raw_parts(raw, 5, 5) };
    v.extend(0..1_000);
    check_words(&v[..5], 77);
    add(&v);
    sum
}

/// The child: the limit it runs under, then its figures, on one line.
fn child() {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let address_space = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))
        .and_then(|l| l.split_whitespace().nth(3))
        .unwrap_or("unknown")
        .to_owned();
    let active = is_active();
    let before = stats();
    let checksum = workload();
    let after = stats();
    // Batched or not, every slot came back (this thread's heap may keep
    // empty spans; the parent checks those figures).
    assert_slots_back_at(&before, &after);
    println!(
        "RESULT limit={address_space} active={active} batched={} reserves={} live={} spans={} \
         checksum={checksum:#x}",
        after.batched_boxes - before.batched_boxes,
        after.reserve_calls - before.reserve_calls,
        after.live_slots,
        after.span_bytes,
    );
}

/// The child's `RESULT` line (after whatever the harness printed first).
fn result_line(stdout: &str) -> &str {
    let at = stdout
        .find("RESULT ")
        .unwrap_or_else(|| panic!("no RESULT line in {stdout}"));
    stdout[at..].lines().next().unwrap_or_default()
}

/// The `RESULT` line's value for `key`.
fn field<'a>(stdout: &'a str, key: &str) -> &'a str {
    let line = result_line(stdout);
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
}

#[test]
fn without_its_address_range_the_runtime_boxes_plainly() {
    serially(|| {
        let [control, limited] = unlimited_then_limited(|limit| {
            in_child!(
                without_its_address_range_the_runtime_boxes_plainly,
                with_limit(limit),
                child
            )
        });
        let control_out = &control.output;
        assert_eq!(field(control_out, "active"), "true");
        assert_ne!(
            field(control_out, "batched"),
            "0",
            "unlimited, the workload batches"
        );

        let out = &limited.output;
        assert_eq!(
            field(out, "limit"),
            (LIMIT_KIB * 1024).to_string(),
            "{limited}"
        );
        assert_eq!(field(out, "active"), "true", "{limited}");
        for key in ["batched", "reserves", "live", "spans"] {
            assert_eq!(field(out, key), "0", "{key}: {limited}");
        }
        assert_eq!(
            field(out, "checksum"),
            field(control_out, "checksum"),
            "same results as the unlimited run"
        );
        println!(
            "region fault: under ulimit -v {LIMIT_KIB}: {}\nunlimited: {}",
            result_line(out),
            result_line(control_out),
        );
    });
}

/// The capture variant: without its address range, no scope opens, and
/// code that would be captured runs on plain allocations with the same
/// results.
mod capture_on {
    use super::*;

    use batch_alloc_rt::testing::scope_on_this_thread;

    /// A loop under a scope entered every iteration, making plain boxes,
    /// byte buffers and strings, freed on another thread. Returns a
    /// checksum of what it made and whether a scope was open in the loop.
    fn workload() -> (u64, bool) {
        let mut opened = false;
        let mut made = Vec::new();
        let guard = Guard::new();
        for id in 0..20_000u64 {
            guard.enter();
            opened |= scope_on_this_thread() == Some(true);
            made.push((Captured::make(id as usize, id), id));
        }
        drop(guard);
        let sum = made
            .iter()
            .fold(0u64, |s, (object, _)| s.rotate_left(5) ^ object.checksum());
        thread::spawn(move || {
            for (object, id) in made {
                object.check_and_free(id);
            }
        })
        .join()
        .unwrap();
        (sum, opened)
    }

    fn child() {
        let active = is_active();
        let before = before_capture();
        let (checksum, opened) = workload();
        let after = stats();
        println!(
            "RESULT active={active} opened={opened} scoped={} live={} spans={} \
             checksum={checksum:#x}",
            after.scoped_allocations - before.scoped_allocations,
            after.live_slots,
            after.span_bytes,
        );
    }

    #[test]
    fn without_its_address_range_no_scope_opens() {
        serially(|| {
            let [control, limited] = unlimited_then_limited(|limit| {
                in_child!(
                    without_its_address_range_no_scope_opens,
                    with_limit(limit),
                    child
                )
            });
            let control_out = &control.output;
            assert_eq!(field(control_out, "opened"), "true");
            assert_ne!(
                field(control_out, "scoped"),
                "0",
                "unlimited, the scope captures"
            );

            let out = &limited.output;
            assert_eq!(field(out, "active"), "true", "{limited}");
            assert_eq!(field(out, "opened"), "false", "{limited}");
            for key in ["scoped", "live", "spans"] {
                assert_eq!(field(out, key), "0", "{key}: {limited}");
            }
            assert_eq!(
                field(out, "checksum"),
                field(control_out, "checksum"),
                "same results as the unlimited run"
            );
            println!(
                "region fault, capture on: under ulimit -v {LIMIT_KIB}: {}\nunlimited: {}",
                result_line(out),
                result_line(control_out),
            );
        });
    }
}
