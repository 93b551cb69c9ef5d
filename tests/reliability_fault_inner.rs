//! Faults in the inner allocator: the global allocator is
//! `BatchAlloc<FailAfter>`, whose inner allocator (the system's) returns
//! null once a budget of calls, set at run time, is spent. Failure is armed
//! per thread, so the test harness's own threads never see it.
//!
//! While the inner allocator fails, batches keep handing out slots from
//! spans (span memory comes from the runtime's own reserved range, not from
//! the inner allocator), slots are freed and reallocated in place, and a
//! reallocation that would leave its slot fails cleanly; a tiny loop's
//! boxes are lone slots of spans too. Where an allocation has
//! to come from the inner allocator (`Box::new`, a type batches do not
//! serve), the process fails exactly as
//! `Box::new` does: `handle_alloc_error` prints "memory allocation of N
//! bytes failed" and aborts. Those cases run in a child process: this test
//! binary, running one test (`workloads::in_child!`).
//!
//! A test binary of its own, apart from `tests/system/`, because its
//! global allocator is another. The tests that count in `stats()` run
//! through the one serial lock ([`serially`]); the others only start
//! children.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::thread;

use batch_alloc::{is_active, stats, Batch, BatchAlloc};
use workloads::in_child;
use workloads::testing::{
    assert_back_at, assert_disjoint, box_range, check_words, fill, serially, slice_range,
};

/// The system allocator, failing on armed threads once its budget is spent.
struct FailAfter;

/// Inner-allocator calls armed threads may still make before they fail.
static BUDGET: AtomicU64 = AtomicU64::new(u64::MAX);
/// Inner-allocator calls that returned null.
static FAILED: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
}

fn fails_now() -> bool {
    if !ARMED.try_with(Cell::get).unwrap_or(false) {
        return false;
    }
    let spent = BUDGET
        .fetch_update(Relaxed, Relaxed, |left| left.checked_sub(1))
        .is_err();
    if spent {
        FAILED.fetch_add(1, Relaxed);
    }
    spent
}

// SAFETY: forwards to `System`, or returns null, which `GlobalAlloc` allows
// for any allocation; `dealloc` always forwards.
unsafe impl GlobalAlloc for FailAfter {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if fails_now() {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if fails_now() {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if fails_now() {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: BatchAlloc<FailAfter> = BatchAlloc::new(FailAfter);

/// While alive, the inner allocator fails on this thread after `k` more
/// calls.
struct Failing;

impl Failing {
    fn after(k: u64) -> Failing {
        BUDGET.store(k, Relaxed);
        ARMED.set(true);
        Failing
    }
}

impl Drop for Failing {
    fn drop(&mut self) {
        ARMED.set(false);
        BUDGET.store(u64::MAX, Relaxed);
    }
}

/// Whether a plain allocation of `n` bytes succeeds now, without aborting.
fn plain_alloc_works(n: usize) -> bool {
    Vec::<u8>::new().try_reserve_exact(n).is_ok()
}

#[test]
fn batches_keep_working_while_the_inner_allocator_fails() {
    serially(|| {
        assert!(is_active());
        let before = stats();
        thread::spawn(move || {
            // Everything that needs the inner allocator is made first: the
            // vectors, and this thread's heap (at its first refill).
            let mut small = Batch::with_capacity(1_000);
            let mut smalls: Vec<Box<[u64; 8]>> = Vec::with_capacity(1_000);
            let mut larges: Vec<Box<[u64; 32]>> = Vec::with_capacity(600);
            smalls.push(small.alloc(fill(0)));
            let grow_me: Box<[u64; 5]> = Batch::with_capacity(8).alloc(fill(7));
            let raw = Box::into_raw(grow_me).cast::<u64>();
            // SAFETY: from a `Box<[u64; 5]>` of the global allocator: 5
            // initialised words, the layout of a `Vec<u64>` of capacity 5.
            let mut grown = unsafe { Vec::from_raw_parts(raw, 5, 5) };
            let failed_before = FAILED.load(Relaxed);

            let failing = Failing::after(0);
            assert!(!plain_alloc_works(16), "the inner allocator fails");
            // The reserved run keeps serving.
            for id in 1..1_000 {
                smalls.push(small.alloc(fill(id)));
            }
            // A new batch of another class refills from new spans: 600
            // 256-byte boxes take three spans.
            let mut large = Batch::with_capacity(600);
            for id in 0..600 {
                larges.push(large.alloc(fill(10_000 + id)));
            }
            drop((small, large));
            // Slots are freed, and reused by a new batch, without the inner
            // allocator.
            for b in smalls.drain(500..) {
                drop(b);
            }
            let mut again = Batch::with_capacity(500);
            for id in 500..1_000 {
                smalls.push(again.alloc(fill(id)));
            }
            drop(again);
            // A slot grows in place within its 48-byte class...
            grown.reserve_exact(1);
            assert_eq!(grown.as_ptr(), raw);
            grown.push(99);
            // ... and growing it past the class fails cleanly, leaving it whole.
            assert!(grown.try_reserve_exact(100).is_err());
            assert_eq!(grown.as_ptr(), raw);
            assert!(!plain_alloc_works(16), "still failing");
            drop(failing);

            assert!(FAILED.load(Relaxed) - failed_before >= 3);
            assert!(plain_alloc_works(16), "healed");
            for (id, b) in smalls.iter().enumerate() {
                check_words(&b[..], id as u64);
            }
            for (id, b) in larges.iter().enumerate() {
                check_words(&b[..], 10_000 + id as u64);
            }
            check_words(&grown[..5], 7);
            assert_eq!(grown[5], 99);
            grown.extend_from_slice(&[1; 100]);
            // The most boxes live: none overlaps another, or the grown vector.
            let mut ranges = vec![slice_range(&grown)];
            ranges.extend(smalls.iter().map(box_range));
            ranges.extend(larges.iter().map(box_range));
            assert_disjoint(&mut ranges);
            let now = stats();
            assert!(now.batched_boxes - before.batched_boxes >= 2_100);
        })
        .join()
        .unwrap();
        assert_back_at(&before, &stats());
    });
}

/// The first allocations of a batch hinted at two or fewer, or not hinted,
/// take one slot each: spans again, so a loop of one or two boxes keeps
/// working while the inner allocator fails.
#[test]
fn a_tiny_loops_boxes_come_from_spans_while_the_inner_allocator_fails() {
    serially(|| {
        let before = stats();
        thread::spawn(|| {
            // This thread's heap, and the vector, made while allocation works.
            let warm: Box<u64> = Batch::with_capacity(16).alloc(1);
            drop(warm);
            let mut kept: Vec<(Box<[u64; 5]>, u64)> = Vec::with_capacity(6);
            let failing = Failing::after(0);
            assert!(!plain_alloc_works(16), "the inner allocator fails");
            for hint in 0..3 {
                let mut batch = Batch::with_capacity(hint);
                for k in 0..2 {
                    let id = (hint * 2 + k) as u64;
                    kept.push((batch.alloc(fill(id)), id));
                }
            }
            drop(failing);
            for (object, id) in &kept {
                check_words(&object[..], *id);
            }
            let mut ranges: Vec<_> = kept.iter().map(|(object, _)| box_range(object)).collect();
            assert_disjoint(&mut ranges);
        })
        .join()
        .unwrap();
        assert_back_at(&before, &stats());
    });
}

/// Writes `msg` to stderr without allocating (no formatting, no buffer),
/// so that it can run while the inner allocator fails.
fn say(msg: &[u8]) {
    let _ = std::io::stderr().write_all(msg);
}

/// Child roles: each ends in an allocation the inner allocator refuses.
fn child(role: &str) {
    // This thread's heap, made while allocation works.
    let warm: Box<u64> = Batch::with_capacity(16).alloc(1);
    drop(warm);
    say(b"child: armed\n");
    match role {
        "box-new" => {
            let _failing = Failing::after(3);
            let kept: [Box<[u8; 40]>; 3] = core::array::from_fn(|i| Box::new([i as u8; 40]));
            say(b"child: three plain boxes made\n");
            black_box(&kept);
            black_box(Box::new([9u8; 40]));
        }
        "oversized" => {
            let _failing = Failing::after(0);
            // Past the largest class: batches box it plainly.
            black_box(Batch::with_capacity(100).alloc([5u8; 5000]));
        }
        other => panic!("unknown role {other}"),
    }
    say(b"child: survived (unexpected)\n");
}

/// A thread's first refill while the inner allocator fails: spans, and the
/// thread's heap record, come from the runtime's own range, so the batch is
/// served. (Found by this test: the record used to come from `Box::new`,
/// and the child aborted naming 384 bytes, a size it never asked for.)
fn child_fresh_thread() {
    let warm: Box<u64> = Batch::with_capacity(16).alloc(1);
    drop(warm);
    thread::spawn(|| {
        let mut boxes: Vec<Box<[u64; 8]>> = Vec::with_capacity(50);
        let failing = Failing::after(0);
        say(b"child: armed\n");
        let mut batch = Batch::with_capacity(100);
        for id in 0..50 {
            boxes.push(batch.alloc(fill(id)));
        }
        drop(batch);
        say(b"child: fresh thread served from spans\n");
        drop(failing);
        for (id, b) in boxes.iter().enumerate() {
            check_words(&b[..], id as u64);
        }
    })
    .join()
    .unwrap();
}

#[test]
fn a_threads_first_refill_while_the_inner_allocator_fails() {
    let child = in_child!(
        a_threads_first_refill_while_the_inner_allocator_fails,
        |_| {},
        child_fresh_thread
    );
    assert!(child.output.contains("child: armed"), "{child}");
    assert!(
        child.status.success() && child.output.contains("served from spans"),
        "a fresh thread's batch was not served from spans:\n{child}"
    );
}

/// The environment variable that tells a child its role.
const ROLE: &str = "FAULT_INNER_ROLE";

#[test]
fn where_the_inner_allocator_must_serve_failure_aborts_like_box_new() {
    for (role, bytes) in [("box-new", 40), ("oversized", 5000)] {
        let child = in_child!(
            where_the_inner_allocator_must_serve_failure_aborts_like_box_new,
            |command| {
                command.env(ROLE, role);
            },
            || child(&std::env::var(ROLE).expect("the child's role"))
        );
        let output = &child.output;
        assert!(
            output.contains("child: armed"),
            "{role}: child ran\n{child}"
        );
        let message = format!("memory allocation of {bytes} bytes failed");
        assert!(output.contains(&message), "{role}: {message}\n{child}");
        assert!(!output.contains("survived"), "{role}\n{child}");
        assert!(child.aborted(), "{role}\n{child}");
        if role == "box-new" {
            let made = output.find("three plain boxes made").expect(output);
            assert!(made < output.find(&message).unwrap(), "{child}");
        }
    }
}

/// The capture variants: the inner allocator fails while a capturing
/// scope is open.
mod capture_on {
    use super::*;

    use batch_alloc_rt::testing::limits::{FRAME_SIZE, MAX_LARGE_SIZE};
    use workloads::testing::{
        assert_captured, assert_live, before_capture, Captured, Guard, Patterned,
    };

    /// While the inner allocator fails, a capturing scope keeps serving what it
    /// can (strings, buffers, plain boxes, a vector growing through the
    /// classes and past them into a large block) from the runtime's own
    /// memory. A layout past the large blocks still goes to the inner
    /// allocator and fails cleanly where the caller can take an error; and
    /// once the scope closes, allocations fail again.
    #[test]
    fn a_capturing_scope_keeps_serving_while_the_inner_allocator_fails() {
        serially(|| {
            const N: u64 = 2_000;
            let before = before_capture();
            thread::spawn(move || {
                // Made while allocation works: the vector, and this thread's heap
                // (a scope opened once).
                let mut kept: Vec<(Captured, u64)> = Vec::with_capacity(N as usize);
                let warm = Guard::new();
                warm.enter();
                drop(warm);
                let failed_before = FAILED.load(Relaxed);

                let failing = Failing::after(0);
                assert!(!plain_alloc_works(16), "the inner allocator fails");
                let mut grown: Vec<u8> = Vec::new();
                let guard = Guard::new();
                for id in 0..N {
                    guard.enter();
                    kept.push((Captured::make(id as usize, id), id));
                    grown.push(id as u8);
                }
                assert!(
                    plain_alloc_works(16),
                    "a capturing scope serves while the inner allocator fails"
                );
                // A frame: a large block.
                assert!(grown.try_reserve_exact(FRAME_SIZE - grown.len()).is_ok());
                // Past the largest large block: the inner allocator's,
                // which fails.
                let at = grown.as_ptr();
                assert!(grown.try_reserve_exact(MAX_LARGE_SIZE).is_err());
                assert_eq!(grown.as_ptr(), at, "the vector stays where it was");
                drop(guard);
                assert!(
                    !plain_alloc_works(16),
                    "with the scope closed, allocation fails again"
                );
                drop(failing);

                assert!(FAILED.load(Relaxed) - failed_before >= 3);
                assert!(plain_alloc_works(16), "healed");
                assert!(grown.iter().enumerate().all(|(i, &b)| b == i as u8));
                assert_live(&kept);
                let mut ranges: Vec<_> = kept.iter().map(|(object, _)| object.range()).collect();
                ranges.push(slice_range(&grown));
                assert_disjoint(&mut ranges);
            })
            .join()
            .unwrap();
            let after = stats();
            assert_captured(&before, &after, N);
            assert_back_at(&before, &after);
        });
    }

    /// In a capturing scope, with the inner allocator failing: a box of a class
    /// is served, and so is a large block (5,000 bytes); a buffer past the
    /// large blocks aborts as `Vec::with_capacity` does.
    fn child_in_a_capturing_scope() {
        let warm = Guard::new();
        warm.enter();
        drop(warm);
        say(b"child: armed\n");
        let _failing = Failing::after(0);
        let guard = Guard::new();
        for _ in 0..1 {
            guard.enter();
            black_box(Box::new([7u8; 40]));
            say(b"child: captured while failing\n");
            black_box(vec![5u8; FRAME_SIZE]);
            say(b"child: large block while failing\n");
            black_box(Vec::<u8>::with_capacity(MAX_LARGE_SIZE + 1));
        }
        say(b"child: survived (unexpected)\n");
    }

    #[test]
    fn in_a_capturing_scope_a_layout_past_the_large_blocks_fails_like_box_new() {
        let child = in_child!(
            in_a_capturing_scope_a_layout_past_the_large_blocks_fails_like_box_new,
            |_| {},
            child_in_a_capturing_scope
        );
        let output = &child.output;
        let served = output.find("captured while failing").expect(output);
        let large = output.find("large block while failing").expect(output);
        let failed = output
            .find(&format!(
                "memory allocation of {} bytes failed",
                MAX_LARGE_SIZE + 1
            ))
            .expect(output);
        assert!(
            served < large && large < failed && !output.contains("survived"),
            "{child}"
        );
        assert!(child.aborted(), "{child}");
    }
}
