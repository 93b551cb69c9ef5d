//! The behaviour tests both modes share, written once and declared in each
//! mode's module: each scenario runs functions of the catalogue as written
//! and under the attribute (the mode's `plain` and `batched` modules, which
//! `catalogue!` declares next to this one), checks what must hold in any mode (equal results, the same
//! logs, `into_iter` once), and returns what the mode's machinery served,
//! for the binary to compare with its mode's expectations.

use std::cell::RefCell;
use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use batch_alloc::stats;

use super::{batched, plain};

use crate::macro_common::pool::{self, Polled, Pool};
use crate::macro_common::{block_on, unbox, CountedRange, Fill, Log, Shape};

// The catalogue's futures are `Send`, checked at compile time.
const _: () = {
    fn assert_send<T: Send>(_: &T) {}
    #[allow(dead_code)]
    fn futures_are_send() {
        assert_send(&batched::async_collect(1));
        assert_send(&batched::async_blocks(1));
        assert_send(&batched::async_nested(1));
    }
};

/// How a mode's module counts what its mode serves.
pub trait Mode {
    /// Runs `f`; returns what it returned and how many allocations this
    /// mode's machinery (batches, or scopes) served meanwhile.
    fn counting<R>(f: impl FnOnce() -> R) -> (R, u64);

    /// Runs the plain and the annotated version of one function: both must
    /// give the same result, the plain one served nothing. Returns the
    /// annotated one's count.
    fn compare<R: PartialEq + Debug>(
        plain: impl FnOnce() -> R,
        batched: impl FnOnce() -> R,
    ) -> u64 {
        let (expected, plain_count) = Self::counting(plain);
        let (actual, batched_count) = Self::counting(batched);
        assert_eq!(actual, expected, "the attribute changed a result");
        assert_eq!(plain_count, 0, "plain code was served");
        batched_count
    }
}

/// `for`, `while`, `loop` and `while let`, each boxing `n` times, and a
/// `loop` whose `break` value is a box.
pub fn loop_forms<M: Mode>(n: u64) -> [u64; 5] {
    [
        M::compare(|| unbox(plain::for_loop(n)), || unbox(batched::for_loop(n))),
        M::compare(
            || unbox(plain::while_loop(n)),
            || unbox(batched::while_loop(n)),
        ),
        M::compare(
            || unbox(plain::plain_loop(n)),
            || unbox(batched::plain_loop(n)),
        ),
        M::compare(|| plain::while_let_list(n), || batched::while_let_list(n)),
        M::compare(|| *plain::loop_value(5), || *batched::loop_value(5)),
    ]
}

/// For n of 1, 2 and 3: a `for` and a `while` loop boxing n times.
pub fn short_loops<M: Mode>() -> [[u64; 2]; 3] {
    [1, 2, 3].map(|n| {
        [
            M::compare(|| unbox(plain::for_loop(n)), || unbox(batched::for_loop(n))),
            M::compare(
                || unbox(plain::while_loop(n)),
                || unbox(batched::while_loop(n)),
            ),
        ]
    })
}

/// What the served counts and the reserve calls moved by while annotated
/// loops ran zero times.
pub fn zero_trips<M: Mode>() -> [u64; 2] {
    let reserve_calls = stats().reserve_calls;
    let ((), count) = M::counting(|| {
        assert!(batched::for_loop(0).is_empty());
        assert!(batched::while_loop(0).is_empty());
        assert!(batched::plain_loop(0).is_empty());
        assert_eq!(batched::while_let_list(0), None);
    });
    [count, stats().reserve_calls - reserve_calls]
}

/// 12 iterations boxing once each in an `if`, `match` arms, a block, a
/// `break` value or an `unsafe` block; 10 iterations boxing through each
/// of 5 spellings.
pub fn positions_and_spellings<M: Mode>() -> [u64; 2] {
    [
        M::compare(
            || unbox(plain::positions(12)),
            || unbox(batched::positions(12)),
        ),
        M::compare(
            || unbox(plain::spellings(10)),
            || unbox(batched::spellings(10)),
        ),
    ]
}

/// 6 outer iterations, each boxing once, around 4 inner ones boxing twice.
pub fn nested<M: Mode>() -> u64 {
    M::compare(
        || unbox(plain::nested(6, 4)),
        || unbox(batched::nested(6, 4)),
    )
}

/// A labelled grid search (4 cells, then the found one), and a loop left
/// by `return` after two boxes and by `?` after one.
pub fn labels_and_early_exits<M: Mode>() -> [u64; 3] {
    let grid: [&[u64]; 3] = [&[1, 0, 2], &[3, 60, 4], &[5, 99, 6]];
    let unpack = |(cells, found): (Vec<Box<u64>>, Option<Box<(usize, usize)>>)| {
        (unbox(cells), found.map(|b| *b))
    };
    let early = |words: &[&str]| {
        M::compare(
            || plain::early_exits(words).map(unbox),
            || batched::early_exits(words).map(unbox),
        )
    };
    [
        M::compare(
            || unpack(plain::labelled(&grid)),
            || unpack(batched::labelled(&grid)),
        ),
        early(&["1", "2", "", "3"]),
        early(&["1", "x", "3"]),
    ]
}

/// A filtered range (100 of 300 boxed) and a user `IntoIterator` of 5,
/// whose `into_iter` must run once.
pub fn filtered_and_counted<M: Mode>() -> [u64; 2] {
    let filtered = M::compare(
        || unbox(plain::filtered(300)),
        || unbox(batched::filtered(300)),
    );
    let plain_calls = Rc::new(RefCell::new(0));
    let batched_calls = Rc::new(RefCell::new(0));
    let range = |calls: &Rc<RefCell<u32>>| CountedRange {
        end: 5,
        calls: calls.clone(),
    };
    let counted = M::compare(
        || unbox(plain::counted(range(&plain_calls))),
        || unbox(batched::counted(range(&batched_calls))),
    );
    assert_eq!(*plain_calls.borrow(), 1);
    assert_eq!(*batched_calls.borrow(), 1);
    [filtered, counted]
}

/// A closure boxing in each of 10 iterations, and a loop of 10 inside a
/// closure.
pub fn closures<M: Mode>() -> [u64; 2] {
    [
        M::compare(
            || unbox(plain::closures(10)),
            || unbox(batched::closures(10)),
        ),
        M::compare(
            || unbox(plain::loop_in_closure(10)),
            || unbox(batched::loop_in_closure(10)),
        ),
    ]
}

/// Boxes in nested functions, and in a macro's tokens or as a value.
pub fn left_alone<M: Mode>() -> [u64; 2] {
    [
        M::compare(
            || unbox(plain::nested_fn(10)),
            || unbox(batched::nested_fn(10)),
        ),
        M::compare(
            || unbox(plain::macros_and_values(10)),
            || unbox(batched::macros_and_values(10)),
        ),
    ]
}

/// 5 iterations boxing once; the logs of evaluation must be equal.
pub fn evaluation_order<M: Mode>() -> u64 {
    let (plain_log, batched_log) = (Log::default(), Log::default());
    let count = M::compare(
        || unbox(plain::evaluation_order(&plain_log, 5)),
        || unbox(batched::evaluation_order(&batched_log, 5)),
    );
    assert_eq!(batched_log.events(), plain_log.events());
    count
}

/// 5 iterations boxing a temporary each, 3 of them one more to keep; the
/// logs of drops must be equal.
pub fn drop_order<M: Mode>() -> u64 {
    let (plain_log, batched_log) = (Log::default(), Log::default());
    let count = M::compare(
        || plain::drop_order(&plain_log, 5),
        || batched::drop_order(&batched_log, 5),
    );
    assert_eq!(batched_log.events(), plain_log.events());
    assert_eq!(plain_log.events()[..2], ["end of 0", "drop 0"]);
    count
}

/// A loop that panics after 6 boxes, unwinding as the plain one does, then
/// a loop of 30.
pub fn panics<M: Mode>() -> [u64; 2] {
    let (plain_log, batched_log) = (Log::default(), Log::default());
    let plain = catch_unwind(AssertUnwindSafe(|| plain::panics(&plain_log, 10, 6)));
    let (batched, count) =
        M::counting(|| catch_unwind(AssertUnwindSafe(|| batched::panics(&batched_log, 10, 6))));
    assert!(plain.is_err() && batched.is_err());
    assert_eq!(batched_log.events(), plain_log.events());
    assert_eq!(batched_log.events().len(), 6, "every box was dropped");
    let after = M::compare(
        || unbox(plain::for_loop(30)),
        || unbox(batched::for_loop(30)),
    );
    [count, after]
}

/// `for` heads whose temporaries must live as long as before: a loop of 5,
/// and one of 3 as a function's tail.
pub fn head_temporaries<M: Mode>() -> [u64; 2] {
    let (plain_log, batched_log) = (Log::default(), Log::default());
    let statement = M::compare(
        || plain::head_temporaries(&plain_log),
        || batched::head_temporaries(&batched_log),
    );
    assert_eq!(batched_log.events(), plain_log.events());
    assert_eq!(plain_log.events()[5..], ["drop guard", "after loop"]);

    let (plain_log, batched_log) = (Log::default(), Log::default());
    let tail = M::compare(
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
    assert_eq!(batched_log.events(), plain_log.events());
    [statement, tail]
}

type RealBoxes = (u64, Vec<Box<dyn Shape>>, Vec<std::pin::Pin<Box<u64>>>);

/// 6 iterations boxing 4 times each, as `dyn Shape`, pinned, through
/// `into_raw` and leaked; then 50 boxes dropped on another thread.
pub fn real_boxes<M: Mode>() -> u64 {
    let summary = |(raw, shapes, pinned): RealBoxes| {
        let areas: Vec<u64> = shapes.iter().map(|s| s.area()).collect();
        let pinned: Vec<u64> = pinned.iter().map(|p| **p).collect();
        (raw, areas, pinned)
    };
    let count = M::compare(
        || summary(plain::real_boxes(6)),
        || summary(batched::real_boxes(6)),
    );
    let boxes = batched::for_loop(50);
    let sum = std::thread::spawn(move || boxes.into_iter().map(|b| *b).sum::<u64>())
        .join()
        .unwrap();
    assert_eq!(sum, 3 * (0..50).sum::<u64>());
    count
}

/// A generic function over 5 items, an inherent method boxing 7 times
/// (under an annotated `impl`), a trait method boxing 5 times in a `while`.
pub fn generic_and_methods<M: Mode>() -> [u64; 3] {
    let items = || vec![1u32, 2, 3, 4, 5];
    let generic = M::compare(
        || unbox(plain::generic(items())),
        || unbox(batched::generic(items())),
    );
    let mut plain_stack = plain::Stack { items: Vec::new() };
    let mut batched_stack = batched::Stack { items: Vec::new() };
    let inherent = M::compare(
        || {
            plain_stack.push(7);
            plain_stack.items.len()
        },
        || {
            batched_stack.push(7);
            batched_stack.items.len()
        },
    );
    let by_trait = M::compare(|| plain_stack.fill(5), || batched_stack.fill(5));
    [generic, inherent, by_trait]
}

/// `while` conditions evaluated 1, 2 and 11 times; a `for` head's box and
/// 10 in the body; a box after a loop that ran zero times, and after one
/// that ran; a loopless annotated function alone, and called from 10
/// iterations; recursive trees of 15 boxes and of 1.
pub fn outside_loops<M: Mode>() -> [u64; 10] {
    let condition = |n| M::compare(|| plain::while_condition(n), || batched::while_condition(n));
    let after = |items: &[u64]| {
        M::compare(
            || *plain::after_the_loop(items),
            || *batched::after_the_loop(items),
        )
    };
    let tree = |depth| {
        M::compare(
            || plain::tree(depth).nodes(),
            || batched::tree(depth).nodes(),
        )
    };
    [
        condition(0),
        condition(1),
        condition(10),
        M::compare(
            || unbox(plain::head_box(10)),
            || unbox(batched::head_box(10)),
        ),
        after(&[]),
        after(&[1, 2, 3]),
        M::compare(|| *plain::box_one(5), || *batched::box_one(5)),
        M::compare(
            || unbox(plain::calls_annotated(10)),
            || unbox(batched::calls_annotated(10)),
        ),
        tree(3),
        tree(0),
    ]
}

/// Allocations other than annotated boxes: strings, vectors, `Rc`s and
/// unannotated boxes in 20 iterations; types no class serves in 3; and 4
/// iterations each boxing once here and once on a thread they spawn.
pub fn other_allocations<M: Mode>() -> [u64; 3] {
    [
        M::compare(|| plain::everyday(20), || batched::everyday(20)),
        M::compare(|| plain::unbatched(3), || batched::unbatched(3)),
        M::compare(|| plain::other_threads(4), || batched::other_threads(4)),
    ]
}

/// On this thread: 20 boxes each after an await; 10 `async` blocks boxing
/// once, awaited in a loop; 6 awaits of an annotated `async fn` boxing 0
/// to 5 times, each boxed.
pub fn async_on_one_thread<M: Mode>() -> [u64; 3] {
    [
        M::compare(
            || unbox(block_on(plain::async_collect(20))),
            || unbox(block_on(batched::async_collect(20))),
        ),
        M::compare(
            || block_on(plain::async_blocks(10)),
            || block_on(batched::async_blocks(10)),
        ),
        M::compare(
            || unbox(block_on(plain::async_nested(6))),
            || unbox(block_on(batched::async_nested(6))),
        ),
    ]
}

/// [`async_on_one_thread`]'s futures (20, 10, and 5 awaits) polled on the
/// pool's threads in turn; also returns the polls of the first.
pub fn async_on_a_pool<M: Mode>(pool: &Pool) -> ([u64; 3], Vec<Polled>) {
    let (expected, _) = pool::run(pool, plain::async_collect(20));
    let ((boxes, polls), collect) = M::counting(|| pool::run(pool, batched::async_collect(20)));
    assert_eq!(unbox(boxes), unbox(expected));
    let blocks = M::compare(
        || pool::run(pool, plain::async_blocks(10)).0,
        || pool::run(pool, batched::async_blocks(10)).0,
    );
    let nested = M::compare(
        || unbox(pool::run(pool, plain::async_nested(5)).0),
        || unbox(pool::run(pool, batched::async_nested(5)).0),
    );
    ([collect, blocks, nested], polls)
}

/// A future boxing 50 times after awaits, polled 10 times on the pool's
/// threads in turn and dropped, still suspended, on the next. Returns its
/// count, its polls, the scope on the dropping thread after the drop, and
/// whether `live_slots` was back at its baseline after it.
pub fn abandoned<M: Mode>(pool: &Pool) -> (u64, Vec<Polled>, Option<bool>, bool) {
    let live = stats().live_slots;
    let ((polls, scope), count) =
        M::counting(|| pool::abandon(pool, batched::async_collect(50), 10));
    (count, polls, scope, stats().live_slots == live)
}
