//! `#[batch_alloc]` (batch scopes) changes where allocations come from and
//! nothing else.
//!
//! The catalogue of functions (`macro_common/`) is compiled twice from
//! one source: as written in `plain`, and under `#[batch_alloc]` in
//! `batched`. Each test runs both and checks that they return (and log) the
//! same things. The counts are exact: with capture set to
//! [`Capture::Boxes`], `stats().scoped_allocations` moves by exactly the
//! annotated `Box::new`s (of a type some size class serves) that ran while
//! a scope was open on their thread. The outermost annotated function
//! running on a thread opens the scope as it starts and closes it when it
//! returns, however it returns; annotated functions it calls join it. So
//! every `Box::new` of an annotated function is served, before, in and after
//! its loops, with or without a loop; a closure runs in the scope where it
//! is called; an `async` body opens one for each poll.
//!
//! With [`Capture::All`] (the default), everything the thread allocates
//! while the scope is open is served from it; the tests of that count what
//! they allocate exactly. `scope_on_this_thread()` shows the scope itself
//! opening, being joined and closing, and, in the async tests, that no
//! thread keeps a scope open while a future is suspended: [`pool`] moves
//! the future between threads from one poll to the next.
//!
//! The counters and the capture setting are process-wide, so the tests run
//! one at a time, each on a thread of its own ([`with_capture`]), and each
//! puts the setting back.

mod scenarios;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::thread::{self, ThreadId};

use batch_alloc::__private::scope_on_this_thread;
use batch_alloc::limits::MAX_SMALL_SIZE;
use batch_alloc::{batch_alloc, stats, Capture};
use scenarios::Mode;

use crate::macro_common::pool::{self, Pool};
use crate::macro_common::{unbox, YieldOnce};
use workloads::testing::with_capture;

catalogue!(#[batch_alloc::batch_alloc]);

/// The default mode counts what batch scopes served; after each annotated
/// run, no scope is left open.
struct Scopes;

impl Mode for Scopes {
    fn counting<R>(f: impl FnOnce() -> R) -> (R, u64) {
        let before = stats();
        let result = f();
        let after = stats();
        assert_eq!(
            after.batched_boxes, before.batched_boxes,
            "scoped mode allocated from a batch"
        );
        assert_eq!(scope_on_this_thread(), None, "a scope is still open");
        (result, after.scoped_allocations - before.scoped_allocations)
    }
}

/// Runs `test` alone, with scopes serving annotated `Box::new`s only, so
/// that `scoped_allocations` counts exactly those.
fn counted(test: impl FnOnce() + Send) {
    with_capture(Capture::Boxes, test);
}

// The observing `async fn` below is `Send` too (the catalogue's are checked
// in `scenarios`).
const _: () = {
    fn assert_send<T: Send>(_: &T) {}
    #[allow(dead_code)]
    fn futures_are_send() {
        assert_send(&seen_across_awaits(1));
    }
};

#[test]
fn every_loop_form_serves_its_iterations() {
    counted(|| {
        // The `break` value's one box.
        assert_eq!(
            scenarios::loop_forms::<Scopes>(100),
            [100, 100, 100, 100, 1]
        );
        assert_eq!(scenarios::short_loops::<Scopes>(), [[1, 1], [2, 2], [3, 3]]);
    });
}

#[test]
fn the_function_is_the_scope_with_or_without_loops() {
    counted(|| {
        // Every evaluation of a `while` condition and the `for` head are
        // inside the scope, and so is everything after the loop, whether
        // the loop ran or not; a loopless annotated function is served
        // alone as when a loop calls it; a recursive tree has every node
        // served, the root included.
        let expected = [1, 2, 11, 1 + 10, 1, 1, 1, 10, 15, 1];
        assert_eq!(scenarios::outside_loops::<Scopes>(), expected);
        assert_eq!(conditions_seen(0), [Some(false)]);
        assert_eq!(conditions_seen(2), [Some(false); 3]);
    });
}

#[test]
fn a_loop_that_runs_zero_times_serves_and_reserves_nothing() {
    counted(|| assert_eq!(scenarios::zero_trips::<Scopes>(), [0, 0]));
}

#[test]
fn calls_in_branches_blocks_break_values_and_every_spelling_are_served() {
    counted(|| {
        assert_eq!(scenarios::positions_and_spellings::<Scopes>(), [12, 5 * 10]);
    });
}

#[test]
fn inner_loops_are_inside_the_outermost_loops_scope() {
    counted(|| assert_eq!(scenarios::nested::<Scopes>(), 6 * 4 * 2 + 6));
}

#[test]
fn labels_and_early_exits_keep_their_meaning() {
    counted(|| {
        assert_eq!(scenarios::labels_and_early_exits::<Scopes>(), [4 + 1, 2, 1]);
    });
}

#[test]
fn iterators_without_a_size_hint_and_into_iter_once() {
    counted(|| assert_eq!(scenarios::filtered_and_counted::<Scopes>(), [100, 5]));
}

#[test]
fn closures_are_rewritten_and_served_where_they_run() {
    // Called inside the loop, on its thread.
    counted(|| assert_eq!(scenarios::closures::<Scopes>(), [10, 10]));
}

#[test]
fn nested_items_macros_and_fn_values_are_left_alone() {
    counted(|| assert_eq!(scenarios::left_alone::<Scopes>(), [0, 0]));
}

#[test]
fn evaluation_and_drop_order_are_unchanged() {
    counted(|| {
        assert_eq!(scenarios::evaluation_order::<Scopes>(), 5);
        assert_eq!(scenarios::drop_order::<Scopes>(), 5 + 3);
    });
}

#[test]
fn panics_unwind_the_same_way() {
    // The boxes made before the panic; the panic closed the scope, and the
    // next loop opens one as usual.
    counted(|| assert_eq!(scenarios::panics::<Scopes>(), [6, 30]));
}

#[test]
fn for_head_temporaries_live_as_long_as_before() {
    counted(|| assert_eq!(scenarios::head_temporaries::<Scopes>(), [5, 3]));
}

#[test]
fn served_boxes_are_real_boxes() {
    counted(|| {
        assert_eq!(scenarios::real_boxes::<Scopes>(), 4 * 6);
        // Slots, freed on another thread through the global allocator.
        let live = stats().live_slots;
        let boxes = batched::for_loop(50);
        assert_eq!(stats().live_slots, live + 50);
        thread::spawn(move || drop(boxes)).join().unwrap();
        assert_eq!(stats().live_slots, live);
    });
}

#[test]
fn generic_functions_methods_and_impl_blocks() {
    counted(|| assert_eq!(scenarios::generic_and_methods::<Scopes>(), [5, 7, 5]));
}

#[test]
fn boxes_capture_serves_annotated_box_news_only() {
    counted(|| {
        // Not strings, vectors, `Rc`s or unannotated code's boxes; not types
        // no class serves; not boxes made on a thread spawned in the loop,
        // outside its scope (only the loop's own 4).
        assert_eq!(scenarios::other_allocations::<Scopes>(), [0, 0, 4]);
        assert_eq!(seen_on_other_threads(3), [(Some(false), None); 3]);
    });
}

#[test]
fn capture_all_serves_everything_the_loop_allocates() {
    with_capture(Capture::All, || {
        let n = 20;
        let live = stats().live_slots;
        let (expected, plain_count) = Scopes::counting(|| plain::everyday(n));
        let (served, count) = Scopes::counting(|| batched::everyday(n));
        assert_eq!(served, expected);
        // Per iteration: a string, a vector, an `Rc` and an unannotated
        // box; and the output vector, allocated before the loop, where a
        // class fits it (under Miri's small classes it is a medium block,
        // the inner allocator's).
        type Item = (String, Vec<u64>, std::rc::Rc<u64>, Box<u64>);
        let output = u64::from(size_of::<Item>() * n as usize <= MAX_SMALL_SIZE);
        assert_eq!(plain_count, 0, "outside any scope, nothing is served");
        assert_eq!(count, 4 * n + output);
        assert_eq!(stats().live_slots, live + 4 * n + output);
        drop(served);
        assert_eq!(stats().live_slots, live);
        // The same unannotated code, called outside any scope.
        let (boxed, count) = Scopes::counting(|| crate::macro_common::unannotated_box(7));
        assert_eq!((*boxed, count), (7, 0));
        assert_eq!(seen_in_loop(3), [Some(true); 5]);
    });
}

#[batch_alloc]
fn seen_in_loop(n: u64) -> Vec<Option<bool>> {
    let mut seen = Vec::new();
    seen.push(scope_on_this_thread());
    for _ in 0..n {
        seen.push(scope_on_this_thread());
    }
    seen.push(scope_on_this_thread());
    seen
}

#[allow(clippy::blocks_in_conditions)]
#[batch_alloc]
fn conditions_seen(n: u64) -> Vec<Option<bool>> {
    let mut seen = Vec::new();
    let mut i = 0;
    while {
        seen.push(scope_on_this_thread());
        i < n
    } {
        i += 1;
    }
    seen
}

#[batch_alloc]
fn seen_on_other_threads(n: u64) -> Vec<(Option<bool>, Option<bool>)> {
    let mut seen = Vec::new();
    for _ in 0..n {
        let there = thread::spawn(scope_on_this_thread).join().unwrap();
        seen.push((scope_on_this_thread(), there));
    }
    seen
}

#[derive(Clone, Copy, Debug)]
enum Exit {
    Finish,
    Continue,
    Break,
    LabelledBreak,
    Return,
    Question,
    Panic,
}

/// Leaves its loop at the fourth iteration as `how` says; records the
/// scope in each iteration and after the loop.
#[batch_alloc]
fn exit_by(how: Exit, seen: &mut Vec<Option<bool>>) -> Result<u64, std::num::ParseIntError> {
    'outer: for i in 0..6 {
        seen.push(scope_on_this_thread());
        if i == 3 {
            match how {
                Exit::Finish => {}
                Exit::Continue => continue,
                Exit::Break => break,
                Exit::LabelledBreak => {
                    for j in 0.. {
                        if j == 1 {
                            break 'outer;
                        }
                    }
                }
                Exit::Return => return Ok(i),
                Exit::Question => {
                    "x".parse::<u64>()?;
                }
                Exit::Panic => panic!("out of the loop"),
            }
        }
    }
    seen.push(scope_on_this_thread());
    Ok(6)
}

#[test]
fn the_scope_is_open_for_the_whole_function_and_closed_by_every_exit() {
    with_capture(Capture::All, || {
        assert_eq!(scope_on_this_thread(), None);
        let open = Some(true);
        for how in [Exit::Finish, Exit::Continue] {
            let mut seen = Vec::new();
            assert_eq!(exit_by(how, &mut seen), Ok(6));
            assert_eq!(seen, [open; 7], "{how:?}");
            assert_eq!(scope_on_this_thread(), None, "{how:?}");
        }
        for how in [Exit::Break, Exit::LabelledBreak] {
            let mut seen = Vec::new();
            assert_eq!(exit_by(how, &mut seen), Ok(6));
            assert_eq!(seen, [open; 5], "{how:?}");
            assert_eq!(scope_on_this_thread(), None, "{how:?}");
        }
        let mut seen = Vec::new();
        assert_eq!(exit_by(Exit::Return, &mut seen), Ok(3));
        assert_eq!(seen, [open; 4]);
        assert_eq!(scope_on_this_thread(), None, "return");
        let mut seen = Vec::new();
        assert!(exit_by(Exit::Question, &mut seen).is_err());
        assert_eq!(seen, [open; 4]);
        assert_eq!(scope_on_this_thread(), None, "`?`");
        let mut seen = Vec::new();
        let result = catch_unwind(AssertUnwindSafe(|| exit_by(Exit::Panic, &mut seen)));
        assert!(result.is_err());
        assert_eq!(seen, [open; 4]);
        assert_eq!(scope_on_this_thread(), None, "panic");
    });
    counted(|| {
        assert_eq!(seen_in_loop(2), [Some(false); 4]);
    });
}

#[batch_alloc]
fn outer_calls_inner(n: u64) -> (Vec<Vec<Option<bool>>>, Vec<Option<bool>>, Vec<Box<u64>>) {
    let (mut inner, mut after, mut boxes) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        inner.push(seen_in_loop(2));
        after.push(scope_on_this_thread());
        boxes.push(Box::new(i));
    }
    (inner, after, boxes)
}

/// Records, at every level, the scope before and after the recursive call.
#[batch_alloc]
fn recurse(depth: u32, seen: &mut Vec<(u32, Option<bool>)>) {
    for _ in 0..2 {
        seen.push((depth, scope_on_this_thread()));
        if depth > 0 {
            recurse(depth - 1, seen);
            seen.push((depth, scope_on_this_thread()));
        }
    }
}

#[test]
fn nested_annotated_functions_and_recursion_join_the_scope() {
    counted(|| {
        let open = Some(false);
        let ((inner, after, boxes), count) = Scopes::counting(|| outer_calls_inner(3));
        // The inner function's loop found the scope open at its first
        // iteration, before and after, and left it open for the rest of
        // the outer loop.
        assert_eq!(inner, vec![vec![open, open, open, open]; 3]);
        assert_eq!(after, [open; 3]);
        assert_eq!(unbox(boxes), [0, 1, 2]);
        assert_eq!(count, 3, "the outer loop's boxes, after each inner call");
        assert_eq!(scope_on_this_thread(), None);

        let mut seen = Vec::new();
        recurse(3, &mut seen);
        // 2 + 2 * 2 at each level above the leaves, 2 at each leaf.
        assert_eq!(seen.len(), 2 * (2 + 4 + 8) + 2 * 8);
        assert!(seen.iter().all(|&(_, scope)| scope == open), "{seen:?}");
        assert_eq!(scope_on_this_thread(), None);
    });
}

#[test]
fn async_fns_on_one_thread() {
    counted(|| {
        // Each box is made in a poll, inside that poll's scope; each
        // `async` block's box, in the block's own; the inner `async fn`'s
        // boxes (0 + 1 + ... + 5) and the outer's 6.
        assert_eq!(
            scenarios::async_on_one_thread::<Scopes>(),
            [20, 10, (0..6).sum::<u64>() + 6]
        );
    });
}

/// Records, in each iteration, the thread and the scope before and after
/// the await.
#[batch_alloc]
async fn seen_across_awaits(n: u64) -> Vec<[(ThreadId, Option<bool>); 2]> {
    let mut seen = Vec::new();
    for i in 0..n {
        let before = (thread::current().id(), scope_on_this_thread());
        YieldOnce::new(i).await;
        seen.push([before, (thread::current().id(), scope_on_this_thread())]);
    }
    seen
}

#[test]
fn a_loop_that_awaits_holds_no_scope_while_suspended() {
    for setting in [Capture::Boxes, Capture::All] {
        with_capture(setting, || {
            let pool = Pool::new(3);
            let n = 9;
            let (seen, polls) = pool::run(&pool, seen_across_awaits(n));
            assert_eq!(polls.len(), n as usize + 1);
            for (i, poll) in polls.iter().enumerate() {
                assert_eq!(poll.scope_after, None, "after poll {i}");
                assert_eq!(poll.ready, i == n as usize);
                assert_eq!(poll.woken, !poll.ready);
            }
            assert_eq!(pool::threads(&polls), 3, "the future moved");
            // Iteration i starts in poll i and resumes in poll i + 1, on
            // that poll's thread, with a scope open there.
            let open = Some(setting == Capture::All);
            for (i, [before, after]) in seen.iter().enumerate() {
                assert_eq!(*before, (polls[i].thread, open), "iteration {i}");
                assert_eq!(*after, (polls[i + 1].thread, open), "iteration {i}");
            }
        });
    }
}

#[test]
fn async_fns_moving_between_threads() {
    counted(|| {
        let pool = Pool::new(3);
        let (counts, polls) = scenarios::async_on_a_pool::<Scopes>(&pool);
        assert_eq!(counts, [20, 10, (0..5).sum::<u64>() + 5]);
        assert!(polls.iter().all(|p| p.scope_after.is_none()));
    });
}

#[test]
fn a_future_dropped_while_suspended_leaves_no_scope_and_no_slot() {
    for setting in [Capture::Boxes, Capture::All] {
        with_capture(setting, || {
            let pool = Pool::new(3);
            // Polls 1 to 9 each box the value awaited in the poll before.
            let (count, polls, scope, slots_back) = scenarios::abandoned::<Scopes>(&pool);
            assert!(polls.iter().all(|p| p.scope_after.is_none()));
            assert_eq!(scope, None);
            if setting == Capture::Boxes {
                assert_eq!(count, 9);
            } else {
                assert!(count >= 9);
            }
            assert!(slots_back);
        });
    }
}

macro_rules! same {
    ($value:expr) => {
        $value
    };
}

/// Awaits inside a macro invocation, which the attribute does not look
/// into.
#[batch_alloc]
async fn awaits_in_a_macro(n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        sum += same!(YieldOnce::new(i).await);
    }
    sum
}

#[test]
fn an_await_inside_a_macro_suspends_the_scope() {
    counted(|| {
        let pool = Pool::new(2);
        let (sum, polls) = pool::run(&pool, awaits_in_a_macro(4));
        assert_eq!(sum, 6);
        for (i, poll) in polls.iter().enumerate() {
            assert_eq!(poll.scope_after, None, "after poll {i}");
        }
    });
}

/// Yields once, then gives `value`: for `futures::select!`, which takes
/// fused futures.
fn yielding(value: u64) -> futures::future::Fuse<YieldOnce> {
    futures::FutureExt::fuse(YieldOnce::new(value))
}

/// An await in the head of a loop: evaluated once, before the loop.
#[batch_alloc]
async fn awaits_in_a_loop_head() -> u64 {
    let mut sum = 0;
    for i in YieldOnce::new(3).await..YieldOnce::new(6).await {
        sum += *Box::new(i);
    }
    sum
}

/// Awaits that only a macro's expansion contains: a local macro, and
/// `futures::join!`, `futures::select!`, `tokio::join!` and
/// `tokio::select!`, whose branches are written without `.await`.
#[batch_alloc]
async fn awaits_made_by_macros(n: u64) -> u64 {
    macro_rules! wait {
        ($future:expr) => {
            $future.await
        };
    }
    let mut sum = 0;
    for i in 0..n {
        sum += *Box::new(wait!(YieldOnce::new(i)));
        let (a, b) = futures::join!(YieldOnce::new(i), YieldOnce::new(1));
        sum += *Box::new(a + b);
        let (c, d) = tokio::join!(YieldOnce::new(i), YieldOnce::new(2));
        sum += *Box::new(c + d);
        let mut first = yielding(i);
        let mut never = futures::FutureExt::fuse(futures::future::pending::<u64>());
        sum += futures::select! {
            x = first => *Box::new(x),
            y = never => *Box::new(y),
        };
        sum += tokio::select! {
            x = YieldOnce::new(i) => *Box::new(x),
            y = futures::future::pending::<u64>() => *Box::new(y),
        };
    }
    sum
}

/// Polls `future` on a pool of two threads, one poll on each in turn:
/// every poll must leave no scope open on its thread, the future must
/// have moved, and it must have been served. Returns its output.
fn no_scope_while_suspended<F>(future: F) -> F::Output
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let pool = Pool::new(2);
    let ((output, polls), count) = Scopes::counting(|| pool::run(&pool, future));
    assert!(polls.len() > 2, "the future was suspended");
    for (i, poll) in polls.iter().enumerate() {
        assert_eq!(poll.scope_after, None, "a scope left open after poll {i}");
    }
    assert_eq!(pool::threads(&polls), 2, "the future moved");
    assert!(count > 0, "the annotated boxes were served");
    output
}

#[test]
fn an_await_in_a_loop_head_holds_no_scope_while_suspended() {
    counted(|| assert_eq!(no_scope_while_suspended(awaits_in_a_loop_head()), 12));
}

#[test]
fn awaits_produced_by_macros_hold_no_scope_while_suspended() {
    counted(|| {
        // Per i: i, then i + 1, i + 2, and i from each `select!`.
        let n = 4;
        let expected = (0..n).map(|i| 5 * i + 3).sum::<u64>();
        assert_eq!(no_scope_while_suspended(awaits_made_by_macros(n)), expected);
    });
}
