//! Scopes, driven through the guard `#[batch_alloc]` and `scope()` hold:
//! a guard entered once or again and again (it takes the scope at its
//! first `enter`), guards nested and interleaved, guards that unwind, a
//! scope per poll of a future. The outermost guard entered opens this
//! thread's scope, the ones inside join it, and the scope closes when the
//! opener drops, by any exit. A scope serves only its own thread; types no
//! class serves take the inner allocator.
//!
//! The inner allocator counts the blocks it serves on each thread, so each
//! test can tell an allocation a scope served from one it passed through.

// Vectors of boxes are what annotated loops make.
#![allow(clippy::vec_box)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Barrier};
use std::thread;

use batch_alloc_rt::testing::limits::{FRAME_SIZE, MAX_LARGE_SIZE, MAX_SMALL_SIZE};
use batch_alloc_rt::testing::{box_in_scope, scope_on_this_thread, Guard, ScopedFuture};
use batch_alloc_rt::{is_active, stats};

use crate::scope::{in_scope, inner_calls_in, live_since, scoped_since};
use workloads::testing::{assert_back_at, on_fresh_thread, serially, silenced};

/// What `scope_on_this_thread` says with a scope open.
const OPEN: Option<bool> = Some(true);

/// A value of a size class (32 bytes) that says where it came from.
#[derive(Debug, PartialEq)]
struct Record([u64; 4]);

fn record(i: u64) -> Record {
    Record([i, !i, i.rotate_left(7), i ^ 0x5A5A])
}

/// Asserts that no scope is open and that an allocation here goes to the
/// inner allocator.
fn assert_closed() {
    assert_eq!(scope_on_this_thread(), None, "a scope is still open");
    let (b, inner) = inner_calls_in(|| Box::new(record(1)));
    assert_eq!(inner, 1, "a box made with no scope open was captured");
    drop(b);
}

/// Asserts that a scope is open and serves an allocation here.
fn assert_open() {
    assert_eq!(scope_on_this_thread(), OPEN);
    let (b, inner) = inner_calls_in(|| Box::new(record(2)));
    assert_eq!(inner, 0, "a scope did not serve a box");
    drop(b);
}

#[test]
fn a_loop_opens_the_scope_that_serves_its_iterations_and_its_end_closes_it() {
    serially(|| {
        assert!(is_active());
        on_fresh_thread(|| {
            let before = stats();
            assert_closed();
            let mut kept = Vec::with_capacity(100);
            let guard = Guard::new();
            assert_eq!(scope_on_this_thread(), None, "a guard alone opens nothing");
            let ((), inner) = inner_calls_in(|| {
                for i in 0..100 {
                    guard.enter();
                    assert_eq!(scope_on_this_thread(), OPEN);
                    kept.push(Box::new(record(i)));
                }
            });
            assert_eq!(inner, 0, "every box of the loop came from the scope");
            assert_eq!(scope_on_this_thread(), OPEN, "open until the guard drops");
            drop(guard);
            assert_closed();
            assert_eq!(scoped_since(&before), 100);
            assert_eq!(live_since(&before), 100);
            for (i, b) in kept.iter().enumerate() {
                assert_eq!(**b, record(i as u64));
                assert_eq!((&raw const **b).addr() % align_of::<Record>(), 0);
            }
            drop(kept);
            assert_eq!(live_since(&before), 0, "every captured slot freed");
        });
    });
}

#[test]
fn a_loop_that_never_enters_its_guard_opens_nothing() {
    serially(|| {
        on_fresh_thread(|| {
            let before = stats();
            let guard = Guard::new();
            for _ in std::iter::empty::<u8>() {
                guard.enter();
            }
            let mut left = [1u8, 2, 3].into_iter().filter(|_| false).count();
            while left > 0 {
                guard.enter();
                left -= 1;
            }
            assert_closed();
            drop(guard);
            assert_closed();
            // Nor does it close a scope opened around it.
            in_scope(|| {
                let idle = Guard::new();
                drop(idle);
                assert_open();
            });
            assert_closed();
            assert_eq!(scoped_since(&before), 1, "the one box of assert_open");
        });
    });
}

#[test]
fn a_guard_entered_before_its_loop_holds_the_scope_until_it_drops() {
    serially(|| {
        on_fresh_thread(|| {
            // The expansion's shape: entered once, before the loop, whatever
            // the loop's length; entering again changes nothing.
            for n in [0, 1, 10] {
                let mut guard = Guard::new();
                guard.enter();
                assert_open();
                for _ in 0..n {
                    assert_open();
                    guard.enter();
                }
                assert_open();
                guard = Guard::new();
                assert_closed();
            }
        });
    });
}

// ---- every exit closes the scope ----

/// A loop that returns from its function on the third iteration.
fn returns_early(n: u64) -> Option<Box<Record>> {
    let guard = Guard::new();
    for i in 0..n {
        guard.enter();
        let b = Box::new(record(i));
        if i == 2 {
            return Some(b);
        }
    }
    None
}

/// A loop that leaves its function by `?` on the first bad line.
fn parses(lines: &[&str]) -> Result<Vec<u64>, std::num::ParseIntError> {
    let mut out = Vec::new();
    let guard = Guard::new();
    for line in lines {
        guard.enter();
        out.push(line.trim().parse::<u64>()?);
    }
    Ok(out)
}

/// A labelled nest left by `break` from the inner loop.
fn breaks_out(limit: u64) -> Vec<Box<Record>> {
    let mut out = Vec::new();
    let guard = Guard::new();
    'outer: for i in 0.. {
        guard.enter();
        for j in 0..3 {
            if i * 3 + j == limit {
                break 'outer;
            }
            out.push(Box::new(record(i * 3 + j)));
        }
    }
    out
}

/// A loop whose fourth iteration panics.
fn panics_midway(kept: &mut Vec<Box<Record>>) {
    let guard = Guard::new();
    for i in 0..10 {
        guard.enter();
        kept.push(Box::new(record(i)));
        if i == 3 {
            panic!("iteration {i} fails");
        }
    }
}

#[test]
fn every_exit_of_the_opening_loop_closes_the_scope() {
    serially(|| {
        on_fresh_thread(|| {
            let before = stats();
            // Normal end, with zero, one and many iterations.
            for n in [0, 1, 2] {
                assert_eq!(returns_early(n), None);
                assert_closed();
            }
            // `return` from inside the loop.
            assert_eq!(returns_early(10).as_deref(), Some(&record(2)));
            assert_closed();
            // `?` on the second line, and a clean run.
            assert!(parses(&["1", "x", "3"]).is_err());
            assert_closed();
            assert_eq!(parses(&["1", " 2", "3 "]).unwrap(), [1, 2, 3]);
            assert_closed();
            // `break` out of a labelled nest.
            let broken = breaks_out(7);
            assert_eq!(broken.len(), 7);
            assert_closed();
            // A panic, caught further up the stack (its payload, captured,
            // dropped with the result).
            let mut kept = Vec::new();
            silenced(|| {
                assert!(catch_unwind(AssertUnwindSafe(|| panics_midway(&mut kept))).is_err())
            });
            assert_closed();
            assert_eq!(
                kept.len(),
                4,
                "what the loop made before the panic is intact"
            );
            for (i, b) in kept.iter().enumerate() {
                assert_eq!(**b, record(i as u64));
            }
            drop((broken, kept));
            assert_eq!(live_since(&before), 0, "every captured slot freed");
        });
    });
}

#[test]
fn early_exits_of_a_joined_loop_leave_the_outer_scope_open() {
    serially(|| {
        on_fresh_thread(|| {
            in_scope(|| {
                assert!(returns_early(10).is_some());
                assert_open();
                assert!(parses(&["x"]).is_err());
                assert_open();
                drop(breaks_out(4));
                assert_open();
                silenced(|| {
                    assert!(
                        catch_unwind(AssertUnwindSafe(|| panics_midway(&mut Vec::new()))).is_err()
                    )
                });
                assert_open();
            });
            assert_closed();
        });
    });
}

// ---- nesting and recursion ----

#[test]
fn nested_guards_join_and_the_outer_stays_open_after_the_inner_drops() {
    serially(|| {
        on_fresh_thread(|| {
            let before = stats();
            let mut kept = Vec::with_capacity(64);
            let outer = Guard::new();
            for i in 0..4 {
                outer.enter();
                let mut inner = Guard::new();
                for j in 0..4 {
                    inner.enter();
                    kept.push(Box::new(record(i * 4 + j)));
                    let mut innermost = Guard::new();
                    for _ in 0..2 {
                        innermost.enter();
                        assert_eq!(scope_on_this_thread(), OPEN);
                    }
                    innermost = Guard::new();
                    assert_eq!(scope_on_this_thread(), OPEN, "innermost drop closed it");
                }
                inner = Guard::new();
                assert_open();
            }
            drop(outer);
            assert_closed();
            assert_eq!(
                scoped_since(&before),
                16 + 4,
                "16 boxes, 4 from assert_open"
            );
            drop(kept);
            assert_eq!(live_since(&before), 0);
        });
    });
}

/// A recursive descent whose every call runs a loop under a guard of its
/// own, as an annotated recursive function does; each level boxes one
/// record through `box_in_scope` and checks the scope the whole way down and up.
fn descend(depth: u64, out: &mut Vec<Box<Record>>) {
    let guard = Guard::new();
    for _ in 0..1 {
        guard.enter();
        assert!(scope_on_this_thread().is_some(), "depth {depth}: no scope");
        out.push(box_in_scope(record(depth)));
        if depth > 0 {
            descend(depth - 1, out);
            assert!(
                scope_on_this_thread().is_some(),
                "depth {depth}: a deeper call closed the scope"
            );
        }
    }
}

#[test]
fn recursion_opens_one_scope_and_every_deeper_call_joins_it() {
    serially(|| {
        on_fresh_thread(|| {
            const DEPTH: u64 = if cfg!(miri) { 20 } else { 200 };
            let before = stats();
            // Allocated outside the scope: the only allocations inside are the
            // records, one per level.
            let mut out = Vec::with_capacity(DEPTH as usize + 1);
            let ((), inner) = inner_calls_in(|| descend(DEPTH, &mut out));
            assert_eq!(inner, 0, "a level was not served by the scope");
            assert_closed();
            assert_eq!(scoped_since(&before), DEPTH + 1, "one per level");
            for (i, b) in out.iter().enumerate() {
                assert_eq!(**b, record(DEPTH - i as u64));
            }
            drop(out);
            assert_eq!(live_since(&before), 0);
        });
    });
}

// ---- guards: the one that opened closes ----

#[test]
fn a_guard_closes_only_the_scope_it_opened() {
    serially(|| {
        on_fresh_thread(|| {
            let opener = Guard::new();
            opener.enter();
            assert_open();
            // Entering again changes nothing: it holds the scope already.
            opener.enter();
            assert_open();
            {
                let joined = Guard::new();
                joined.enter();
                assert_open();
                // A guard never entered holds nothing either.
                let idle = Guard::new();
                drop(idle);
                assert_open();
            }
            assert_open();
            drop(opener);
            assert_closed();
            // A guard that joined, still alive after its opener dropped
            // (not the order generated code drops them in), closes nothing.
            let first = Guard::new();
            first.enter();
            let second = Guard::new();
            second.enter();
            drop(first);
            assert_closed();
            drop(second);
            assert_closed();
        });
    });
}

#[test]
fn each_poll_of_a_scoped_future_opens_and_closes_its_scope() {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};
    serially(|| {
        on_fresh_thread(|| {
            let mut polls = 0;
            let inner = std::future::poll_fn(|_| {
                assert_open();
                polls += 1;
                match polls {
                    3 => Poll::Ready(polls),
                    _ => Poll::Pending,
                }
            });
            let mut future = pin!(ScopedFuture::new(inner, Guard::enter));
            let mut cx = Context::from_waker(Waker::noop());
            assert_eq!(future.as_mut().poll(&mut cx), Poll::Pending);
            assert_closed();
            assert_eq!(future.as_mut().poll(&mut cx), Poll::Pending);
            assert_closed();
            // Polled inside a scope, it joins it and leaves it open.
            in_scope(|| {
                assert_eq!(future.as_mut().poll(&mut cx), Poll::Ready(3));
                assert_open();
            });
            assert_closed();
        });
    });
}

// ---- a scope is a property of its thread ----

#[test]
fn a_scope_never_serves_another_thread() {
    serially(|| {
        // Few enough that this thread's vector of boxes fits a class.
        const N: usize = if cfg!(miri) { 20 } else { 500 };
        let before = stats();
        let open = Arc::new(Barrier::new(2));
        let done = Arc::new(Barrier::new(2));
        let (open2, done2) = (open.clone(), done.clone());
        // The other thread allocates only while the scope is open here.
        let other = thread::spawn(move || {
            open2.wait();
            assert_eq!(
                scope_on_this_thread(),
                None,
                "the scope leaked to this thread"
            );
            let (made, inner) = inner_calls_in(|| {
                (0..N)
                    .map(|i| (Box::new(record(i as u64)), vec![i as u8; 24]))
                    .collect::<Vec<_>>()
            });
            // One block per box, per buffer, and the vector's own.
            assert_eq!(
                inner as usize,
                2 * N + 1,
                "another thread's scope served this one"
            );
            done2.wait();
            made
        });
        let mine = on_fresh_thread(move || {
            in_scope(|| {
                open.wait();
                let (mine, inner) = inner_calls_in(|| {
                    (0..N)
                        .map(|i| Box::new(record(i as u64)))
                        .collect::<Vec<_>>()
                });
                // The vector too.
                assert_eq!(inner, 0);
                done.wait();
                mine
            })
        });
        let theirs = other.join().unwrap();
        assert_eq!(
            scoped_since(&before),
            N as u64 + 1,
            "only the scope's own thread's allocations are counted"
        );
        for (i, (b, bytes)) in theirs.iter().enumerate() {
            assert_eq!(**b, record(i as u64));
            assert_eq!(*bytes, [i as u8; 24]);
        }
        drop((mine, theirs));
        assert_eq!(live_since(&before), 0);
    });
}

#[test]
fn a_thread_spawned_inside_a_scope_starts_with_none() {
    serially(|| {
        on_fresh_thread(|| {
            in_scope(|| {
                let handle = thread::spawn(|| {
                    assert_closed();
                    // It may open its own.
                    in_scope(assert_open);
                    assert_closed();
                });
                handle.join().unwrap();
                assert_open();
            });
        });
    });
}

// ---- what a scope captures ----

#[test]
fn a_scope_serves_typed_boxes_and_every_other_allocation() {
    serially(|| {
        on_fresh_thread(|| {
            let before = stats();
            in_scope(|| {
                assert_eq!(scope_on_this_thread(), OPEN);
                let (both, inner) = inner_calls_in(|| {
                    (
                        box_in_scope(record(1)),
                        Box::new(record(2)),
                        String::from("plain"),
                    )
                });
                assert_eq!(inner, 0, "a scope passed an allocation through");
                assert_eq!(both.2, "plain");
            });
            assert_eq!(scoped_since(&before), 3);
        });
    });
}

#[test]
fn boxed_without_a_scope_is_box_new_and_with_one_a_slot() {
    serially(|| {
        on_fresh_thread(|| {
            let before = stats();
            let (plain, inner) = inner_calls_in(|| box_in_scope(record(7)));
            assert_eq!(inner, 1);
            assert_eq!(scoped_since(&before), 0);
            let served = in_scope(|| {
                let (b, inner) = inner_calls_in(|| box_in_scope(record(8)));
                assert_eq!(inner, 0);
                b
            });
            assert_eq!(scoped_since(&before), 1);
            // Both are real boxes: moved, unsized, round-tripped, freed anywhere.
            let as_debug: Box<dyn std::fmt::Debug + Send> = served;
            assert_eq!(format!("{as_debug:?}"), format!("{:?}", record(8)));
            // SAFETY: `into_raw` gives the box's pointer back to `from_raw`
            // once.
            let plain = unsafe { Box::from_raw(Box::into_raw(plain)) };
            assert_eq!(*plain, record(7));
            thread::spawn(move || drop((plain, as_debug)))
                .join()
                .unwrap();
            assert_eq!(live_since(&before), 0);
        });
    });
}

/// Past the largest alignment a class can have.
#[repr(align(16384))]
#[derive(Debug, PartialEq)]
struct PastAPage(u64);

#[test]
fn types_past_the_classes_are_large_blocks_and_past_those_the_inner_allocators() {
    serially(|| {
        on_fresh_thread(|| {
            let before = stats();
            in_scope(|| {
                // Zero-sized: no allocation at all.
                let (units, inner) =
                    inner_calls_in(|| (box_in_scope(()), Box::new(()), Box::new([0u64; 0])));
                assert_eq!(inner, 0);
                // Aligned past a page: no class, and a quarter of a frame (or
                // aligned past one, under Miri): the inner allocator's.
                let (aligned, inner) =
                    inner_calls_in(|| (box_in_scope(PastAPage(1)), Box::new(PastAPage(2))));
                assert_eq!(inner, 2);
                for p in [&aligned.0, &aligned.1] {
                    assert_eq!((&raw const **p).addr() % align_of::<PastAPage>(), 0);
                }
                assert_eq!((aligned.0 .0, aligned.1 .0), (1, 2));
                // Larger than the largest class, up to a frame: medium blocks,
                // the inner allocator's (whole frames would waste most of it).
                let (medium, inner) = inner_calls_in(|| {
                    (
                        box_in_scope([8u8; MAX_SMALL_SIZE + 1]),
                        vec![9u8; FRAME_SIZE / 2],
                    )
                });
                assert_eq!(inner, 2);
                // A frame: large blocks.
                let (large, inner) = inner_calls_in(|| {
                    (
                        box_in_scope([3u8; FRAME_SIZE]),
                        Box::new([4u8; FRAME_SIZE]),
                        vec![5u8; FRAME_SIZE - 8],
                    )
                });
                assert_eq!(inner, 0);
                // Larger than the largest large block: the inner allocator.
                let (huge, inner) = inner_calls_in(|| vec![7u8; MAX_LARGE_SIZE + 1]);
                assert_eq!(inner, 1);
                assert_eq!(huge.len(), MAX_LARGE_SIZE + 1);
                assert!(large.0.iter().all(|&b| b == 3) && large.1.iter().all(|&b| b == 4));
                // The largest class itself is served.
                let (largest, inner) = inner_calls_in(|| box_in_scope([6u8; MAX_SMALL_SIZE]));
                assert_eq!(inner, 0);
                assert!(largest.iter().all(|&b| b == 6));
                assert!(medium.0.iter().all(|&b| b == 8) && medium.1.iter().all(|&b| b == 9));
                drop((units, aligned, medium, large, largest, huge));
            });
            // The largest class's box and the three large blocks.
            assert_eq!(scoped_since(&before), 4);
            assert_eq!(live_since(&before), 0);
        });
    });
}

#[test]
fn scoped_slots_come_back_and_spans_go_when_the_thread_exits() {
    serially(|| {
        const N: u64 = if cfg!(miri) { 40 } else { 5_000 };
        let before = stats();
        let kept = on_fresh_thread(|| {
            let mut kept = Vec::with_capacity(N as usize);
            in_scope(|| {
                for i in 0..N {
                    let b = Box::new(record(i));
                    // Every other one outlives the thread.
                    if i % 2 == 0 {
                        kept.push(b);
                    }
                }
            });
            kept
        });
        assert_eq!(live_since(&before), N.div_ceil(2) as i64);
        for (i, b) in kept.iter().enumerate() {
            assert_eq!(**b, record(2 * i as u64));
        }
        drop(kept);
        assert_back_at(&before, &stats());
    });
}
