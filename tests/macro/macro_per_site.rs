//! `#[batch_alloc(per_site)]` changes where boxes come from and nothing else.
//!
//! The catalogue of functions (`macro_common/`) is compiled twice from
//! one source: as written in `plain`, and under `#[batch_alloc(per_site)]` in
//! `batched`. Each test runs both, checks that they return (and log) the
//! same things, and reads `stats().batched_boxes` to check which calls the
//! batches served: exactly the calls inside loops, and none inside closures,
//! nested items or macro invocations, none outside loops (even in a function
//! called from a loop), and none in the `for` head. A macro that rewrote
//! nothing would fail every count. Boxes mode opens no batch scope, so
//! `stats().scoped_allocations` never moves here.
//!
//! What a batch serves from its slots is the runtime's business (a batch
//! with no memory hands out plain boxes, for instance), so the expected
//! counts come from [`model`]: a `ErasedBatch` declared by hand, with the hint
//! the macro should have given it, allocating as often as the call site
//! runs. The tests check that `model` counts something wherever they rely on
//! it to tell batching from not batching.
//!
//! The counters are process-wide, so the tests run one at a time, each on a
//! thread of its own ([`serially`]).

#[path = "macro_common/scenarios.rs"]
mod scenarios;

use batch_alloc::stats;
use scenarios::Mode;

use crate::macro_common::pool::{self, Pool};
use crate::serial::serially;

// `quiet`: some functions of the catalogue have nothing for the per-site form to
// rewrite, on purpose.
catalogue!(#[batch_alloc::batch_alloc(per_site, quiet)]);

/// Boxes mode counts the boxes batches served, and opens no scope.
struct Batches;

impl Mode for Batches {
    /// Batches settle their counts when they are dropped, which is before
    /// the code that made them returns.
    fn counting<R>(f: impl FnOnce() -> R) -> (R, u64) {
        let before = stats();
        let result = f();
        let after = stats();
        assert_eq!(
            after.scoped_allocations, before.scoped_allocations,
            "the per-site form served something from a scope"
        );
        (result, after.batched_boxes - before.batched_boxes)
    }
}

/// What one call site's batch counts: a batch with capacity hint `hint`
/// (the `for` loop's `size_hint().0`, or 0) that allocates `allocs` times.
fn model(hint: usize, allocs: usize) -> u64 {
    let (boxes, count) = Batches::counting(|| {
        let mut batch = batch_alloc::__private::ErasedBatch::with_capacity(hint);
        (0..allocs as u64)
            .map(|i| batch.alloc(i))
            .collect::<Vec<_>>()
    });
    drop(boxes);
    count
}

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
        // A `for` sizes its batch by `size_hint`; the others have no hint.
        let unhinted = model(0, 100);
        assert_eq!(
            scenarios::loop_forms::<Batches>(100),
            [model(100, 100), unhinted, unhinted, unhinted, model(0, 1)]
        );
        let short = [1, 2, 3].map(|n| [model(n, n), model(0, n)]);
        assert_eq!(scenarios::short_loops::<Batches>(), short);
    });
}

#[test]
fn a_loop_that_runs_zero_times_reserves_nothing() {
    serially(|| assert_eq!(scenarios::zero_trips::<Batches>(), [0, 0]));
}

#[test]
fn calls_in_branches_blocks_and_break_values_and_every_spelling() {
    serially(|| {
        // One batch per call site, each sized by the loop's 12 iterations:
        // `if` (6 calls), two `match` arms (2 each), `break` value and
        // `unsafe` block (1 each); five spellings of 10 calls.
        let positions = model(12, 6) + 2 * model(12, 2) + 2 * model(12, 1);
        assert_eq!(
            scenarios::positions_and_spellings::<Batches>(),
            [positions, 5 * model(10, 10)]
        );
    });
}

#[test]
fn inner_loops_take_batches_declared_at_the_outermost_loop() {
    serially(|| {
        // The inner call's batch lives outside the outer loop, with no hint:
        // one batch for all 48 calls, not one per inner loop.
        assert_eq!(
            scenarios::nested::<Batches>(),
            model(0, 6 * 4 * 2) + model(6, 6)
        );
    });
}

#[test]
fn labels_and_early_exits_keep_their_meaning() {
    serially(|| {
        // `return` ends the loop after two boxes, `?` after one.
        assert_eq!(
            scenarios::labels_and_early_exits::<Batches>(),
            [model(0, 4) + model(0, 1), model(4, 2), model(3, 1)]
        );
    });
}

#[test]
fn loops_without_a_useful_size_hint_still_batch_and_into_iter_runs_once() {
    serially(|| {
        assert_eq!(
            scenarios::filtered_and_counted::<Batches>(),
            [model(0, 100), model(5, 5)]
        );
    });
}

#[test]
fn closures_are_left_alone_but_their_loops_are_batched() {
    serially(|| assert_eq!(scenarios::closures::<Batches>(), [0, model(10, 10)]));
}

#[test]
fn nested_items_macros_and_fn_values_are_left_alone() {
    serially(|| assert_eq!(scenarios::left_alone::<Batches>(), [0, 0]));
}

#[test]
fn evaluation_and_drop_order_are_unchanged() {
    serially(|| {
        assert_eq!(scenarios::evaluation_order::<Batches>(), model(5, 5));
        assert_eq!(
            scenarios::drop_order::<Batches>(),
            model(5, 5) + model(5, 3)
        );
    });
}

#[test]
fn panics_unwind_the_same_way() {
    serially(|| {
        // The boxes made before the panic; the batch gave its unused slots
        // back while unwinding, and the next loop batches as usual.
        assert_eq!(
            scenarios::panics::<Batches>(),
            [model(10, 6), model(30, 30)]
        );
    });
}

#[test]
fn for_head_temporaries_live_as_long_as_before() {
    serially(|| {
        assert_eq!(
            scenarios::head_temporaries::<Batches>(),
            [model(5, 5), model(3, 3)]
        );
    });
}

#[test]
fn batched_boxes_are_real_boxes() {
    serially(|| assert_eq!(scenarios::real_boxes::<Batches>(), 4 * model(6, 6)));
}

#[test]
fn generic_functions_methods_and_impl_blocks_batch() {
    serially(|| {
        assert_eq!(
            scenarios::generic_and_methods::<Batches>(),
            [model(5, 5), model(7, 7), model(0, 5)]
        );
    });
}

#[test]
fn calls_outside_loops_are_left_alone() {
    serially(|| {
        // A `while` condition's call runs in the nest, the first time too;
        // the `for` head's runs once, before the loop, and is left as
        // written; so is a call after a loop, or in an annotated function
        // without a loop, even when an annotated loop calls it.
        let expected = [
            model(0, 1),
            model(0, 2),
            model(0, 11),
            model(10, 10),
            0,
            0,
            0,
            0,
            0,
            0,
        ];
        assert_eq!(scenarios::outside_loops::<Batches>(), expected);
    });
}

#[test]
fn only_boxes_are_batched() {
    serially(|| {
        // Strings, vectors, `Rc`s and unannotated code's boxes are not;
        // types no size class serves take `Box::new`; a thread spawned in
        // the loop boxes as written (its closure is left alone).
        assert_eq!(
            scenarios::other_allocations::<Batches>(),
            [0, 0, model(4, 4)]
        );
    });
}

#[test]
fn async_fns_batch_across_awaits() {
    serially(|| {
        // `async` blocks are left alone, like closures; each call of the
        // inner `async fn` has its batch.
        let inner: u64 = (0..6).map(|i| model(i, i)).sum();
        assert_eq!(
            scenarios::async_on_one_thread::<Batches>(),
            [model(20, 20), 0, inner + model(6, 6)]
        );
    });
}

#[test]
fn batches_move_with_their_futures_between_threads() {
    serially(|| {
        let pool = Pool::new(3);
        let (counts, polls) = scenarios::async_on_a_pool::<Batches>(&pool);
        let inner: u64 = (0..5).map(|i| model(i, i)).sum();
        assert_eq!(counts, [model(20, 20), 0, inner + model(5, 5)]);
        assert_eq!(polls.len(), 21);
        assert_eq!(pool::threads(&polls), 3);

        // A future dropped while suspended gives every slot back, wherever
        // its batch was refilled.
        let (count, polls, scope, slots_back) = scenarios::abandoned::<Batches>(&pool);
        assert_eq!(count, model(50, 9), "the 9 boxes made before the drop");
        assert!(polls.iter().all(|p| p.woken && p.scope_after.is_none()));
        assert_eq!(scope, None);
        assert!(slots_back);
    });
}
