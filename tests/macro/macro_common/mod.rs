//! What the behaviour tests of `#[batch_alloc]` share: the catalogue of
//! functions (`catalogue!`), written once and compiled twice, as written in
//! `plain` and under the attribute in `batched`; the types those functions
//! use; and a small executor that moves futures between threads (`pool`).
//!
//! `macro_scoped.rs` invokes `catalogue!`; the scenarios that run the
//! functions (`macro_scoped/scenarios.rs`) find `plain` and `batched` as
//! `super::plain` and `super::batched`. Each function must give the same
//! results both ways, and the scenarios module states what each counts.

// Each test binary uses part of what is here.
#![allow(dead_code)]

pub mod pool;

use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

pub fn unbox<T: Copy>(boxes: Vec<Box<T>>) -> Vec<T> {
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

/// A binary tree built by recursion.
#[derive(Debug, PartialEq)]
pub struct Tree {
    pub children: Vec<Box<Tree>>,
}

impl Tree {
    pub fn nodes(&self) -> u64 {
        1 + self.children.iter().map(|c| c.nodes()).sum::<u64>()
    }
}

pub trait Shape {
    fn area(&self) -> u64;
}

impl Shape for u64 {
    fn area(&self) -> u64 {
        *self * *self
    }
}

pub trait Fill {
    fn fill(&mut self, n: u64) -> usize;
}

/// Larger than the largest size class.
#[derive(Debug, PartialEq)]
pub struct Big(pub [u8; 5000]);

/// Aligned past a page.
#[derive(Debug, PartialEq)]
#[repr(align(16384))]
pub struct Aligned(pub u64);

/// A `Box::new` of code the attribute does not touch.
pub fn unannotated_box(value: u64) -> Box<u64> {
    Box::new(value)
}

/// A future that is pending once, and wakes its waker, then ready with its
/// value.
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

/// Polls `future` on this thread until it is ready.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(Arc::new(NoopWaker));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

/// `catalogue!(#[attribute])` declares `mod plain` (the catalogue as
/// written) and `mod batched` (every function and impl block of it under
/// `#[attribute]`). Each module has its own `Stack`, so that both can
/// implement methods on it.
#[macro_export]
macro_rules! catalogue {
    (#[$attr:meta]) => {
        $crate::catalogue! {
            @twins #[$attr]
            types {
                pub struct Stack {
                    pub items: Vec<Box<u64>>,
                }
            }
            items {
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

                /// `Box::new` in the `while` condition: evaluated `n + 1`
                /// times, the first before the first iteration.
                pub fn while_condition(n: u64) -> u64 {
                    let mut i = 0;
                    while *Box::new(i) < n {
                        i += 1;
                    }
                    i
                }

                /// `Box::new` in the `for` head: evaluated once, before the
                /// first iteration.
                pub fn head_box(n: u64) -> Vec<Box<u64>> {
                    let mut out = Vec::new();
                    for i in 0..*Box::new(n) {
                        out.push(Box::new(i));
                    }
                    out
                }

                /// `Box::new` after a loop (which ran or not).
                pub fn after_the_loop(items: &[u64]) -> Box<u64> {
                    let mut sum = 0;
                    for item in items {
                        sum += item;
                    }
                    Box::new(sum)
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

                /// A function of the catalogue with no loop, called from
                /// another's loop and from outside any.
                pub fn box_one(i: u64) -> Box<u64> {
                    Box::new(i)
                }

                pub fn calls_annotated(n: u64) -> Vec<Box<u64>> {
                    let mut out = Vec::new();
                    for i in 0..n {
                        out.push(box_one(i));
                    }
                    out
                }

                /// A complete binary tree of `depth` levels below the root.
                pub fn tree(depth: u32) -> Box<Tree> {
                    let mut children = Vec::new();
                    if depth > 0 {
                        for _ in 0..2 {
                            children.push(tree(depth - 1));
                        }
                    }
                    Box::new(Tree { children })
                }

                /// Strings, vectors, `Rc`s and boxes made by unannotated
                /// code, each one allocation, inside a loop.
                pub fn everyday(n: u64) -> Vec<(String, Vec<u64>, std::rc::Rc<u64>, Box<u64>)> {
                    let mut out = Vec::with_capacity(n as usize);
                    for i in 0..n {
                        let mut text = String::with_capacity(16);
                        text.push_str("item");
                        let mut list = Vec::with_capacity(4);
                        list.push(i);
                        out.push((text, list, std::rc::Rc::new(i), unannotated_box(i)));
                    }
                    out
                }

                /// Boxes made here and on threads spawned from the loop.
                pub fn other_threads(n: u64) -> (Vec<Box<u64>>, Vec<Box<u64>>) {
                    let mut here = Vec::new();
                    let mut there = Vec::new();
                    for i in 0..n {
                        here.push(Box::new(i));
                        there.push(std::thread::spawn(move || Box::new(i * 10)).join().unwrap());
                    }
                    (here, there)
                }

                /// Types no size class serves.
                pub fn unbatched(n: u64) -> (Vec<Box<()>>, Vec<Box<Big>>, Vec<Box<Aligned>>) {
                    let (mut units, mut bigs, mut aligned) = (Vec::new(), Vec::new(), Vec::new());
                    for i in 0..n {
                        units.push(Box::new(()));
                        bigs.push(Box::new(Big([i as u8; 5000])));
                        aligned.push(Box::new(Aligned(i)));
                    }
                    (units, bigs, aligned)
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

                /// Sums `0..m`, each term boxed after an await.
                pub async fn async_inner(m: u64) -> u64 {
                    let mut sum = 0;
                    for j in 0..m {
                        sum += *Box::new(YieldOnce::new(j).await);
                    }
                    sum
                }

                /// Awaits an annotated `async fn` with a loop of its own.
                pub async fn async_nested(n: u64) -> Vec<Box<u64>> {
                    let mut out = Vec::new();
                    for i in 0..n {
                        out.push(Box::new(async_inner(i).await));
                    }
                    out
                }

                impl Stack {
                    pub fn push(&mut self, n: u64) {
                        for i in 0..n {
                            self.items.push(Box::new(i));
                        }
                    }
                }

                impl Fill for Stack {
                    fn fill(&mut self, n: u64) -> usize {
                        let mut i = 0;
                        while i < n {
                            self.items.push(Box::new(i));
                            i += 1;
                        }
                        self.items.len()
                    }
                }
            }
        }
    };
    (@twins #[$attr:meta] types { $($type:item)* } items { $($item:item)* }) => {
        pub mod plain {
            #![allow(dead_code)]
            use $crate::macro_common::*;
            $($type)*
            $($item)*
        }
        pub mod batched {
            #![allow(dead_code)]
            use $crate::macro_common::*;
            $($type)*
            $(#[$attr] $item)*
        }
    };
}
