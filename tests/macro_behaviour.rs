//! `#[batch_alloc]` changes where boxes come from and nothing else.
//!
//! Every function here is compiled twice from one source by `twins!`: as
//! written in `plain`, and under `#[batch_alloc]` in `batched`. Each test runs
//! both, checks that they return (and log) the same things, and reads
//! `stats().batched_boxes` to check which calls the batches served: exactly
//! the calls inside loops, and none inside closures, nested items or macro
//! invocations. A macro that rewrote nothing would fail every count.
//!
//! What a batch serves from its slots is the runtime's business (a batch of
//! a tiny loop may hand out plain boxes, for instance), so the expected
//! counts come from [`model`]: a `RawBatch` declared by hand, with the hint
//! the macro should have given it, allocating as often as the call site
//! runs. The tests check that `model` counts something wherever they rely on
//! it to tell batching from not batching.
//!
//! The counters are process-wide, so the tests run one at a time
//! ([`on_worker`]). A heap's counters outlive its thread, so the exits of the
//! harness's threads do not disturb a reading
//! (`tests/stats_thread_exit.rs`).

// The functions box the way the code the attribute is for does.
#![allow(
    clippy::vec_box,
    clippy::box_collection,
    clippy::type_complexity,
    clippy::let_and_return,
    clippy::while_let_on_iterator,
    clippy::unnecessary_map_on_constructor
)]

use std::cell::RefCell;
use std::fmt::Debug;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::pin;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use batch_alloc::{stats, BatchAlloc};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

/// Runs `test` while no other test of this binary runs.
fn on_worker(test: impl FnOnce()) {
    static SERIAL: Mutex<()> = Mutex::new(());
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    test();
}

/// Runs `f`; returns what it returned and how many boxes batches served
/// meanwhile. Batches settle their counts when they are dropped, which is
/// before `f` returns.
fn counting<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = stats().batched_boxes;
    let result = f();
    (result, stats().batched_boxes - before)
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

fn unbox<T: Copy>(boxes: Vec<Box<T>>) -> Vec<T> {
    boxes.into_iter().map(|b| *b).collect()
}

/// A shared record of events, to compare evaluation and drop order.
#[derive(Clone, Default)]
pub struct Log(Rc<RefCell<Vec<String>>>);

impl Log {
    pub fn push(&self, event: impl Into<String>) {
        self.0.borrow_mut().push(event.into());
    }

    pub fn value(&self, event: &str, value: u64) -> u64 {
        self.push(format!("{event} {value}"));
        value
    }

    pub fn events(&self) -> Vec<String> {
        self.0.borrow().clone()
    }
}

/// Logs its drop.
pub struct Noisy {
    pub id: u64,
    pub log: Log,
}

impl Drop for Noisy {
    fn drop(&mut self) {
        self.log.push(format!("drop {}", self.id));
    }
}

/// Logs its drop; hands out a borrowed list, for `for x in guard.items()`.
pub struct Guard {
    pub log: Log,
    pub items: Vec<u64>,
}

impl Guard {
    pub fn items(&self) -> &[u64] {
        &self.items
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.log.push("drop guard");
    }
}

/// Counts calls of `into_iter`.
pub struct CountedRange {
    pub end: u64,
    pub calls: Rc<RefCell<u32>>,
}

impl IntoIterator for CountedRange {
    type Item = u64;
    type IntoIter = std::ops::Range<u64>;

    fn into_iter(self) -> Self::IntoIter {
        *self.calls.borrow_mut() += 1;
        0..self.end
    }
}

#[derive(Debug, PartialEq)]
pub struct Node {
    pub value: u64,
    pub next: Option<Box<Node>>,
}

pub trait Shape {
    fn area(&self) -> u64;
}

impl Shape for u64 {
    fn area(&self) -> u64 {
        *self * *self
    }
}

macro_rules! twins {
    ($($item:item)*) => {
        mod plain {
            #![allow(dead_code)]
            use super::*;
            $($item)*
        }
        mod batched {
            #![allow(dead_code)]
            use super::*;
            $(#[batch_alloc::batch_alloc] $item)*
        }
    };
}

twins! {
    pub fn for_loop(n: u64) -> Vec<Box<u64>> {
        let mut out = Vec::new();
        for i in 0..n {
            out.push(Box::new(i * 3));
        }
        out
    }

    pub fn while_loop(n: u64) -> Vec<Box<u64>> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < n {
            out.push(Box::new(i));
            i += 1;
        }
        out
    }

    pub fn while_let_list(n: u64) -> Option<Box<Node>> {
        let mut values = 0..n;
        let mut head = None;
        while let Some(value) = values.next() {
            head = Some(Box::new(Node { value, next: head }));
        }
        head
    }

    pub fn plain_loop(n: u64) -> Vec<Box<u64>> {
        let mut out = Vec::new();
        let mut i = 0;
        loop {
            if i == n {
                break out;
            }
            out.push(Box::new(i));
            i += 1;
        }
    }

    pub fn loop_value(n: u64) -> Box<u64> {
        let mut i = 0;
        loop {
            i += 1;
            if i == n {
                break Box::new(i);
            }
        }
    }

    pub fn positions(n: u64) -> Vec<Box<u64>> {
        let mut out = Vec::new();
        for i in 0..n {
            let boxed = if i % 2 == 0 {
                Box::new(i)
            } else {
                match i % 3 {
                    0 => Box::new(i + 100),
                    1 => {
                        let inner = { Box::new(i + 200) };
                        inner
                    }
                    _ => 'block: {
                        if i > 6 {
                            break 'block Box::new(i + 300);
                        }
                        // SAFETY: reads a local through a reference.
                        unsafe { Box::new(*std::ptr::addr_of!(i)) }
                    }
                }
            };
            out.push(boxed);
        }
        out
    }

    pub fn spellings(n: u64) -> Vec<Box<u64>> {
        let mut out = Vec::new();
        for i in 0..n {
            out.push(Box::new(i));
            out.push(Box::<u64>::new(i));
            out.push(std::boxed::Box::new(i));
            out.push(::std::boxed::Box::new(i));
            out.push(std::boxed::Box::<u64>::new(i));
        }
        out
    }

    pub fn nested(outer: u64, inner: u64) -> Vec<Box<u64>> {
        let mut out = Vec::new();
        for i in 0..outer {
            let mut j = 0;
            while j < inner {
                for k in 0..2 {
                    out.push(Box::new(i * 100 + j * 10 + k));
                }
                j += 1;
            }
            out.push(Box::new(i));
        }
        out
    }

    pub fn labelled(grid: &[&[u64]]) -> (Vec<Box<u64>>, Option<Box<(usize, usize)>>) {
        let mut out = Vec::new();
        let mut found = None;
        'rows: for (r, row) in grid.iter().enumerate() {
            'cols: for (c, &cell) in row.iter().enumerate() {
                if cell == 0 {
                    continue 'cols;
                }
                if cell == 99 {
                    found = Some(Box::new((r, c)));
                    break 'rows;
                }
                if cell > 50 {
                    continue 'rows;
                }
                out.push(Box::new(cell));
            }
        }
        (out, found)
    }

    pub fn early_exits(words: &[&str]) -> Result<Vec<Box<u64>>, std::num::ParseIntError> {
        let mut out = Vec::new();
        for word in words {
            if word.is_empty() {
                return Ok(out);
            }
            out.push(Box::new(word.parse::<u64>()?));
        }
        Ok(out)
    }

    pub fn filtered(n: u64) -> Vec<Box<u64>> {
        let mut out = Vec::new();
        for i in (0..n).filter(|i| i % 3 == 0) {
            out.push(Box::new(i));
        }
        out
    }

    pub fn counted(range: CountedRange) -> Vec<Box<u64>> {
        let mut out = Vec::new();
        for i in range {
            out.push(Box::new(i));
        }
        out
    }

    pub fn closures(n: u64) -> Vec<Box<u64>> {
        let mut out = Vec::new();
        for i in 0..n {
            let make = || Box::new(i);
            out.push(make());
        }
        out
    }

    pub fn loop_in_closure(n: u64) -> Vec<Box<u64>> {
        let build = |m: u64| {
            let mut out = Vec::new();
            for j in 0..m {
                out.push(Box::new(j));
            }
            out
        };
        build(n)
    }

    pub fn nested_fn(n: u64) -> Vec<Box<u64>> {
        fn helper(i: u64) -> Box<u64> {
            Box::new(i)
        }
        fn helper_loop(n: u64) -> Vec<Box<u64>> {
            let mut out = Vec::new();
            for i in 0..n {
                out.push(Box::new(i));
            }
            out
        }
        let mut out = Vec::new();
        for i in 0..n {
            out.push(helper(i));
        }
        out.extend(helper_loop(n));
        out
    }

    pub fn macros_and_values(n: u64) -> Vec<Box<u64>> {
        let mut out = Vec::new();
        for i in 0..n {
            out.extend(vec![Box::new(i)]);
            out.extend(Some(i).map(Box::new));
        }
        out
    }

    pub fn evaluation_order(log: &Log, n: u64) -> Vec<Box<(u64, u64)>> {
        let mut out = Vec::new();
        for i in 0..n {
            log.push("iteration");
            out.push(Box::new((log.value("first", i), log.value("second", i))));
            log.push("pushed");
        }
        out
    }

    pub fn drop_order(log: &Log, n: u64) -> u64 {
        let mut kept = Vec::new();
        for i in 0..n {
            let temporary = Box::new(Noisy { id: i * 10, log: log.clone() });
            if i % 2 == 0 {
                kept.push(Box::new(Noisy { id: i, log: log.clone() }));
            }
            log.push(format!("end of {}", temporary.id));
        }
        log.push("after loop");
        kept.len() as u64
    }

    pub fn panics(log: &Log, n: u64, at: u64) -> Vec<Box<Noisy>> {
        let mut out = Vec::new();
        for i in 0..n {
            if i == at {
                panic!("at {i}");
            }
            out.push(Box::new(Noisy { id: i, log: log.clone() }));
        }
        out
    }

    pub fn head_temporaries(log: &Log) -> u64 {
        let mut sum = 0;
        for x in (Guard { log: log.clone(), items: vec![1, 2, 3, 4, 5] }).items() {
            log.push("body");
            sum += *Box::new(*x);
        }
        log.push("after loop");
        sum
    }

    pub fn head_temporaries_in_tail(log: &Log, out: &mut Vec<Box<u64>>) {
        for x in (Guard { log: log.clone(), items: vec![3, 4, 5] }).items() {
            out.push(Box::new(*x));
        }
    }

    pub fn real_boxes(n: u64) -> (u64, Vec<Box<dyn Shape>>, Vec<std::pin::Pin<Box<u64>>>) {
        let mut shapes: Vec<Box<dyn Shape>> = Vec::new();
        let mut pinned = Vec::new();
        let mut through_raw = 0;
        for i in 0..n {
            shapes.push(Box::new(i));
            pinned.push(Box::into_pin(Box::new(i)));
            let raw = Box::into_raw(Box::new(i));
            // SAFETY: `raw` came from `Box::into_raw` just above.
            let back = unsafe { Box::from_raw(raw) };
            through_raw += *back;
            let leaked: &'static mut u64 = Box::leak(Box::new(i));
            *leaked += 1;
            // SAFETY: `leaked` came from `Box::leak` and is not used again.
            drop(unsafe { Box::from_raw(leaked) });
        }
        (through_raw, shapes, pinned)
    }

    pub fn generic<T: Clone, I: IntoIterator<Item = T>>(items: I) -> Vec<Box<T>> {
        let mut out = Vec::new();
        for item in items {
            out.push(Box::new(item.clone()));
        }
        out
    }

    pub async fn async_collect(n: u64) -> Vec<Box<u64>> {
        let mut out = Vec::new();
        for i in 0..n {
            out.push(Box::new(YieldOnce::new(i).await));
        }
        out
    }

    pub async fn async_blocks(n: u64) -> u64 {
        let mut futures = Vec::new();
        for i in 0..n {
            futures.push(async move { *Box::new(i) });
        }
        let mut sum = 0;
        for future in futures {
            sum += future.await;
        }
        sum
    }
}

pub struct Stack {
    pub items: Vec<Box<u64>>,
}

pub trait Fill {
    fn fill(&mut self, n: u64) -> usize;
}

mod methods_plain {
    use super::*;

    impl Stack {
        pub fn push_plain(&mut self, n: u64) {
            for i in 0..n {
                self.items.push(Box::new(i));
            }
        }
    }
}

#[batch_alloc::batch_alloc]
impl Stack {
    pub fn push_batched(&mut self, n: u64) {
        for i in 0..n {
            self.items.push(Box::new(i));
        }
    }
}

impl Fill for Stack {
    #[batch_alloc::batch_alloc]
    fn fill(&mut self, n: u64) -> usize {
        let mut i = 0;
        while i < n {
            self.items.push(Box::new(i));
            i += 1;
        }
        self.items.len()
    }
}

/// A future that is pending once, then ready with its value.
pub struct YieldOnce {
    value: u64,
    yielded: bool,
}

impl YieldOnce {
    pub fn new(value: u64) -> Self {
        YieldOnce {
            value,
            yielded: false,
        }
    }
}

impl Future for YieldOnce {
    type Output = u64;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u64> {
        if self.yielded {
            Poll::Ready(self.value)
        } else {
            self.yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

struct NoopWaker;

impl Wake for NoopWaker {
    fn wake(self: Arc<Self>) {}
}

fn block_on<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(Arc::new(NoopWaker));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

// The futures of annotated `async fn`s are `Send`, checked at compile time.
const _: () = {
    fn assert_send<T: Send>(_: &T) {}
    #[allow(dead_code)]
    fn futures_are_send() {
        assert_send(&batched::async_collect(1));
        assert_send(&batched::async_blocks(1));
    }
};

#[test]
fn the_model_counts_batched_boxes() {
    on_worker(|| {
        // Every expectation below that tells batching from not batching relies
        // on these being non-zero.
        assert!(model(100, 100) > 0 && model(0, 100) > 0 && model(0, 48) > 0);
        assert!(model(12, 6) > 0 && model(10, 10) > 0 && model(5, 5) > 0);
        assert_eq!(model(5, 0), 0);
    });
}

#[test]
fn every_loop_form_batches_its_calls() {
    on_worker(|| {
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
    on_worker(|| {
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
    on_worker(|| {
        let count = compare(
            || unbox(plain::spellings(10)),
            || unbox(batched::spellings(10)),
        );
        assert_eq!(count, 5 * model(10, 10));
    });
}

#[test]
fn inner_loops_take_batches_declared_at_the_outermost_loop() {
    on_worker(|| {
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
    on_worker(|| {
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
    on_worker(|| {
        let count = compare(
            || unbox(plain::filtered(300)),
            || unbox(batched::filtered(300)),
        );
        assert_eq!(count, model(0, 100));
    });
}

#[test]
fn into_iter_runs_once() {
    on_worker(|| {
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
    on_worker(|| {
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
    on_worker(|| {
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
    on_worker(|| {
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
    on_worker(|| {
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
    on_worker(|| {
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
    on_worker(|| {
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
    on_worker(|| {
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
    on_worker(|| {
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
    on_worker(|| {
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
    on_worker(|| {
        let items = || vec![1u32, 2, 3, 4, 5];
        let count = compare(
            || unbox(plain::generic(items())),
            || unbox(batched::generic(items())),
        );
        assert_eq!(count, model(5, 5));

        let mut plain_stack = Stack { items: Vec::new() };
        let mut batched_stack = Stack { items: Vec::new() };
        let count = compare(
            || {
                plain_stack.push_plain(7);
                plain_stack.items.len()
            },
            || {
                batched_stack.push_batched(7);
                batched_stack.items.len()
            },
        );
        assert_eq!(count, model(7, 7));
        let (len, count) = counting(|| batched_stack.fill(5));
        assert_eq!((len, count), (12, model(0, 5)));
    });
}

#[test]
fn async_fns_batch_across_awaits() {
    on_worker(|| {
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
