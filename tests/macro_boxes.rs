//! `#[batch_alloc(boxes)]` changes where boxes come from and nothing else.
//!
//! The catalogue of functions (`tests/macro_common`) is compiled twice from
//! one source: as written in `plain`, and under `#[batch_alloc(boxes)]` in
//! `batched`. Each test runs both, checks that they return (and log) the
//! same things, and reads `stats().batched_boxes` to check which calls the
//! batches served: exactly the calls inside loops, and none inside closures,
//! nested items or macro invocations, none outside loops (even in a function
//! called from a loop), and none in the `for` head. A macro that rewrote
//! nothing would fail every count. Boxes mode opens no batch scope, so
//! `stats().scoped_allocations` never moves here.
//!
//! What a batch serves from its slots is the runtime's business (a batch of
//! a tiny loop may hand out plain boxes, for instance), so the expected
//! counts come from [`model`]: a `RawBatch` declared by hand, with the hint
//! the macro should have given it, allocating as often as the call site
//! runs. The tests check that `model` counts something wherever they rely on
//! it to tell batching from not batching.
//!
//! The counters are process-wide, so the tests run one at a time, each on a
//! thread of its own ([`serially`]).

// The functions box the way the code the attribute is for does.
#![allow(
    clippy::vec_box,
    clippy::box_collection,
    clippy::type_complexity,
    clippy::let_and_return,
    clippy::while_let_on_iterator,
    clippy::unnecessary_map_on_constructor,
    clippy::vec_init_then_push
)]

#[macro_use]
mod macro_common;
mod serial;

use std::cell::RefCell;
use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use batch_alloc::{stats, BatchAlloc};
use macro_common::pool::{self, Pool};
use macro_common::{block_on, unbox, CountedRange, Fill, Log, Shape};
use serial::serially;

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

// `quiet`: some functions of the catalogue have nothing for boxes mode to
// rewrite, on purpose.
catalogue!(#[batch_alloc::batch_alloc(boxes, quiet)]);

/// Runs `f`; returns what it returned and how many boxes batches served
/// meanwhile. Batches settle their counts when they are dropped, which is
/// before `f` returns.
fn counting<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = stats();
    let result = f();
    let after = stats();
    assert_eq!(
        after.scoped_allocations, before.scoped_allocations,
        "boxes mode served something from a scope"
    );
    (result, after.batched_boxes - before.batched_boxes)
}

/// Runs the plain and the batched version of one function: both must give
/// the same result, the plain one from no batch. Returns the batched one's
/// count of boxes served by batches.
fn compare<R: PartialEq + Debug>(plain: impl FnOnce() -> R, batched: impl FnOnce() -> R) -> u64 {
    let (expected, plain_count) = counting(plain);
    let (actual, batched_count) = counting(batched);
    assert_eq!(actual, expected, "the attribute changed a result");
    assert_eq!(plain_count, 0, "plain code allocated from a batch");
    batched_count
}

/// What one call site's batch counts: a batch with capacity hint `hint`
/// (the `for` loop's `size_hint().0`, or 0) that allocates `allocs` times.
fn model(hint: usize, allocs: usize) -> u64 {
    let (boxes, count) = counting(|| {
        let mut batch = batch_alloc::__private::RawBatch::with_capacity(hint);
        (0..allocs as u64)
            .map(|i| batch.alloc(i))
            .collect::<Vec<_>>()
    });
    drop(boxes);
    count
}

// The futures of annotated `async fn`s are `Send`, checked at compile time.
const _: () = {
    fn assert_send<T: Send>(_: &T) {}
    #[allow(dead_code)]
    fn futures_are_send() {
        assert_send(&batched::async_collect(1));
        assert_send(&batched::async_blocks(1));
        assert_send(&batched::async_nested(1));
    }
};

#[test]
fn the_model_counts_batched_boxes() {
    serially(|| {
        // Every expectation below that tells batching from not batching relies
        // on these being non-zero.
        assert!(model(100, 100) > 0 && model(0, 100) > 0 && model(0, 48) > 0);
        assert!(model(12, 6) > 0 && model(10, 10) > 0 && model(5, 5) > 0);
        assert_eq!(model(5, 0), 0);
    });
}

#[test]
fn every_loop_form_batches_its_calls() {
    serially(|| {
        let n = 100;
        let count = compare(|| unbox(plain::for_loop(n)), || unbox(batched::for_loop(n)));
        assert_eq!(count, model(100, 100), "`for` sizes its batch by size_hint");
        let count = compare(
            || unbox(plain::while_loop(n)),
            || unbox(batched::while_loop(n)),
        );
        assert_eq!(count, model(0, 100));
        let count = compare(
            || unbox(plain::plain_loop(n)),
            || unbox(batched::plain_loop(n)),
        );
        assert_eq!(count, model(0, 100));
        let count = compare(|| plain::while_let_list(n), || batched::while_let_list(n));
        assert_eq!(count, model(0, 100));
        let count = compare(|| *plain::loop_value(5), || *batched::loop_value(5));
        assert_eq!(count, model(0, 1));
    });
}

#[test]
fn calls_in_branches_blocks_and_break_values_are_batched() {
    serially(|| {
        let count = compare(
            || unbox(plain::positions(12)),
            || unbox(batched::positions(12)),
        );
        // One batch per call site, each sized by the loop's 12 iterations:
        // `if` (6 calls), two `match` arms (2 each), `break` value and `unsafe`
        // block (1 each).
        let expected = model(12, 6) + 2 * model(12, 2) + 2 * model(12, 1);
        assert_eq!(count, expected);
    });
}

#[test]
fn every_spelling_is_batched() {
    serially(|| {
        let count = compare(
            || unbox(plain::spellings(10)),
            || unbox(batched::spellings(10)),
        );
        assert_eq!(count, 5 * model(10, 10));
    });
}

#[test]
fn inner_loops_take_batches_declared_at_the_outermost_loop() {
    serially(|| {
        let count = compare(
            || unbox(plain::nested(6, 4)),
            || unbox(batched::nested(6, 4)),
        );
        // The inner call's batch lives outside the outer loop, with no hint: one
        // batch for all 48 calls, not one per inner loop.
        assert_eq!(count, model(0, 6 * 4 * 2) + model(6, 6));
    });
}

#[test]
fn labels_and_early_exits_keep_their_meaning() {
    serially(|| {
        let grid: [&[u64]; 3] = [&[1, 0, 2], &[3, 60, 4], &[5, 99, 6]];
        let unpack = |(cells, found): (Vec<Box<u64>>, Option<Box<(usize, usize)>>)| {
            (unbox(cells), found.map(|b| *b))
        };
        let count = compare(
            || unpack(plain::labelled(&grid)),
            || unpack(batched::labelled(&grid)),
        );
        assert_eq!(count, model(0, 4) + model(0, 1));

        let words = ["1", "2", "", "3"];
        let count = compare(
            || plain::early_exits(&words).map(unbox),
            || batched::early_exits(&words).map(unbox),
        );
        assert_eq!(count, model(4, 2), "`return` ends the loop after two boxes");
        let words = ["1", "x", "3"];
        let count = compare(
            || plain::early_exits(&words).map(unbox),
            || batched::early_exits(&words).map(unbox),
        );
        assert_eq!(count, model(3, 1), "`?` ends the loop after one box");
    });
}

#[test]
fn loops_without_a_useful_size_hint_still_batch() {
    serially(|| {
        let count = compare(
            || unbox(plain::filtered(300)),
            || unbox(batched::filtered(300)),
        );
        assert_eq!(count, model(0, 100));
    });
}

#[test]
fn into_iter_runs_once() {
    serially(|| {
        let plain_calls = Rc::new(RefCell::new(0));
        let batched_calls = Rc::new(RefCell::new(0));
        let count = compare(
            || {
                unbox(plain::counted(CountedRange {
                    end: 5,
                    calls: plain_calls.clone(),
                }))
            },
            || {
                unbox(batched::counted(CountedRange {
                    end: 5,
                    calls: batched_calls.clone(),
                }))
            },
        );
        assert_eq!(count, model(5, 5));
        assert_eq!(*plain_calls.borrow(), 1);
        assert_eq!(*batched_calls.borrow(), 1);
    });
}

#[test]
fn a_loop_that_runs_zero_times_reserves_nothing() {
    serially(|| {
        let before = stats();
        assert!(batched::for_loop(0).is_empty());
        assert!(batched::while_loop(0).is_empty());
        let after = stats();
        assert_eq!(after.batched_boxes, before.batched_boxes);
        assert_eq!(after.reserve_calls, before.reserve_calls);
    });
}

#[test]
fn short_loops_behave_the_same() {
    serially(|| {
        for n in [1, 2, 3] {
            let count = compare(|| unbox(plain::for_loop(n)), || unbox(batched::for_loop(n)));
            assert_eq!(count, model(n as usize, n as usize));
            let count = compare(
                || unbox(plain::while_loop(n)),
                || unbox(batched::while_loop(n)),
            );
            assert_eq!(count, model(0, n as usize));
        }
    });
}

#[test]
fn closures_are_left_alone_but_their_loops_are_batched() {
    serially(|| {
        assert_eq!(
            compare(
                || unbox(plain::closures(10)),
                || unbox(batched::closures(10))
            ),
            0
        );
        let count = compare(
            || unbox(plain::loop_in_closure(10)),
            || unbox(batched::loop_in_closure(10)),
        );
        assert_eq!(count, model(10, 10));
    });
}

#[test]
fn nested_items_macros_and_fn_values_are_left_alone() {
    serially(|| {
        assert_eq!(
            compare(
                || unbox(plain::nested_fn(10)),
                || unbox(batched::nested_fn(10))
            ),
            0
        );
        let count = compare(
            || unbox(plain::macros_and_values(10)),
            || unbox(batched::macros_and_values(10)),
        );
        assert_eq!(count, 0);
    });
}

#[test]
fn evaluation_order_is_unchanged() {
    serially(|| {
        let (plain_log, batched_log) = (Log::default(), Log::default());
        let count = compare(
            || unbox(plain::evaluation_order(&plain_log, 5)),
            || unbox(batched::evaluation_order(&batched_log, 5)),
        );
        assert_eq!(count, model(5, 5));
        assert_eq!(batched_log.events(), plain_log.events());
    });
}

#[test]
fn drop_order_is_unchanged() {
    serially(|| {
        let (plain_log, batched_log) = (Log::default(), Log::default());
        let count = compare(
            || plain::drop_order(&plain_log, 5),
            || batched::drop_order(&batched_log, 5),
        );
        assert_eq!(count, model(5, 5) + model(5, 3));
        assert_eq!(batched_log.events(), plain_log.events());
        assert_eq!(plain_log.events()[..2], ["end of 0", "drop 0"]);
    });
}

#[test]
fn panics_unwind_the_same_way() {
    serially(|| {
        let (plain_log, batched_log) = (Log::default(), Log::default());
        let plain = catch_unwind(AssertUnwindSafe(|| plain::panics(&plain_log, 10, 6)));
        let (batched, count) =
            counting(|| catch_unwind(AssertUnwindSafe(|| batched::panics(&batched_log, 10, 6))));
        assert!(plain.is_err() && batched.is_err());
        assert_eq!(count, model(10, 6), "the boxes made before the panic");
        assert_eq!(batched_log.events(), plain_log.events());
        assert_eq!(batched_log.events().len(), 6, "every box was dropped");
        // The batch gave its unused slots back while unwinding: the next loop
        // batches as usual.
        let count = compare(
            || unbox(plain::for_loop(30)),
            || unbox(batched::for_loop(30)),
        );
        assert_eq!(count, model(30, 30));
    });
}

#[test]
fn for_head_temporaries_live_as_long_as_before() {
    serially(|| {
        let (plain_log, batched_log) = (Log::default(), Log::default());
        let count = compare(
            || plain::head_temporaries(&plain_log),
            || batched::head_temporaries(&batched_log),
        );
        assert_eq!(count, model(5, 5));
        assert_eq!(batched_log.events(), plain_log.events());
        let events = plain_log.events();
        assert_eq!(events[5..], ["drop guard", "after loop"]);

        let (plain_log, batched_log) = (Log::default(), Log::default());
        let count = compare(
            || {
                let mut out = Vec::new();
                plain::head_temporaries_in_tail(&plain_log, &mut out);
                plain_log.push("returned");
                unbox(out)
            },
            || {
                let mut out = Vec::new();
                batched::head_temporaries_in_tail(&batched_log, &mut out);
                batched_log.push("returned");
                unbox(out)
            },
        );
        assert_eq!(count, model(3, 3));
        assert_eq!(batched_log.events(), plain_log.events());
    });
}

type RealBoxes = (u64, Vec<Box<dyn Shape>>, Vec<std::pin::Pin<Box<u64>>>);

#[test]
fn batched_boxes_are_real_boxes() {
    serially(|| {
        let summary = |(raw, shapes, pinned): RealBoxes| {
            let areas: Vec<u64> = shapes.iter().map(|s| s.area()).collect();
            let pinned: Vec<u64> = pinned.iter().map(|p| **p).collect();
            (raw, areas, pinned)
        };
        let count = compare(
            || summary(plain::real_boxes(6)),
            || summary(batched::real_boxes(6)),
        );
        assert_eq!(count, 4 * model(6, 6));

        // Dropped on another thread, through the global allocator.
        let boxes = batched::for_loop(50);
        let sum = std::thread::spawn(move || boxes.into_iter().map(|b| *b).sum::<u64>())
            .join()
            .unwrap();
        assert_eq!(sum, 3 * (0..50).sum::<u64>());
    });
}

#[test]
fn generic_functions_methods_and_impl_blocks_batch() {
    serially(|| {
        let items = || vec![1u32, 2, 3, 4, 5];
        let count = compare(
            || unbox(plain::generic(items())),
            || unbox(batched::generic(items())),
        );
        assert_eq!(count, model(5, 5));

        let mut plain_stack = plain::Stack { items: Vec::new() };
        let mut batched_stack = batched::Stack { items: Vec::new() };
        let count = compare(
            || {
                plain_stack.push(7);
                plain_stack.items.len()
            },
            || {
                batched_stack.push(7);
                batched_stack.items.len()
            },
        );
        assert_eq!(count, model(7, 7));
        let count = compare(|| plain_stack.fill(5), || batched_stack.fill(5));
        assert_eq!(count, model(0, 5));
    });
}

#[test]
fn async_fns_batch_across_awaits() {
    serially(|| {
        let count = compare(
            || unbox(block_on(plain::async_collect(20))),
            || unbox(block_on(batched::async_collect(20))),
        );
        assert_eq!(count, model(20, 20));
        // `async` blocks are left alone, like closures.
        let count = compare(
            || block_on(plain::async_blocks(10)),
            || block_on(batched::async_blocks(10)),
        );
        assert_eq!(count, 0);
    });
}

#[test]
fn calls_outside_loops_are_left_alone() {
    serially(|| {
        // The condition's call runs n + 1 times, all in the nest.
        let count = compare(
            || plain::while_condition(10),
            || batched::while_condition(10),
        );
        assert_eq!(count, model(0, 11));
        // The `for` head's call runs once, before the loop: left as written.
        let count = compare(
            || unbox(plain::head_box(10)),
            || unbox(batched::head_box(10)),
        );
        assert_eq!(count, model(10, 10));
        for items in [&[][..], &[1, 2, 3]] {
            let count = compare(
                || *plain::after_the_loop(items),
                || *batched::after_the_loop(items),
            );
            assert_eq!(count, 0);
        }
        // An annotated function without a loop boxes as written, even when
        // an annotated loop calls it; so does a recursive one whose
        // `Box::new` follows its loop.
        assert_eq!(compare(|| *plain::box_one(5), || *batched::box_one(5)), 0);
        let count = compare(
            || unbox(plain::calls_annotated(10)),
            || unbox(batched::calls_annotated(10)),
        );
        assert_eq!(count, 0);
        let count = compare(|| plain::tree(3).nodes(), || batched::tree(3).nodes());
        assert_eq!(count, 0);
    });
}

#[test]
fn only_boxes_are_batched() {
    serially(|| {
        // Strings, vectors, `Rc`s, and boxes of unannotated code.
        let count = compare(|| plain::everyday(20), || batched::everyday(20));
        assert_eq!(count, 0);
        // Types no size class serves take `Box::new`.
        let count = compare(|| plain::unbatched(3), || batched::unbatched(3));
        assert_eq!(count, 0);
        // A thread spawned in the loop boxes as written (its closure is left
        // alone); the loop's own call is batched.
        let count = compare(|| plain::other_threads(4), || batched::other_threads(4));
        assert_eq!(count, model(4, 4));
    });
}

#[test]
fn async_fns_that_await_annotated_async_fns() {
    serially(|| {
        let n = 6;
        let count = compare(
            || unbox(block_on(plain::async_nested(n))),
            || unbox(block_on(batched::async_nested(n))),
        );
        let inner: u64 = (0..n as usize).map(|i| model(i, i)).sum();
        assert_eq!(count, inner + model(n as usize, n as usize));
    });
}

#[test]
fn batches_move_with_their_futures_between_threads() {
    serially(|| {
        let pool = Pool::new(3);
        let (expected, _) = pool::run(&pool, plain::async_collect(20));
        let ((boxes, polls), count) = counting(|| pool::run(&pool, batched::async_collect(20)));
        assert_eq!(unbox(boxes), unbox(expected));
        assert_eq!(count, model(20, 20));
        assert_eq!(polls.len(), 21);
        assert_eq!(pool::threads(&polls), 3);
        let count = compare(
            || unbox(pool::run(&pool, plain::async_nested(5)).0),
            || unbox(pool::run(&pool, batched::async_nested(5)).0),
        );
        let inner: u64 = (0..5).map(|i| model(i, i)).sum();
        assert_eq!(count, inner + model(5, 5));

        // A future dropped while suspended gives every slot back, wherever
        // its batch was refilled.
        let live = stats().live_slots;
        let (polls, scope) = pool::abandon(&pool, batched::async_collect(50), 10);
        assert!(polls.iter().all(|p| p.woken && p.scope_after.is_none()));
        assert_eq!(scope, None);
        assert_eq!(stats().live_slots, live);
    });
}
