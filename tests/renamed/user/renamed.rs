//! `#[batch_alloc]` where the crate is not `::batch_alloc`: the functions
//! of `batch-alloc-renamed` (`../lib.rs`), annotated through a renamed
//! dependency with no argument, and the functions below, annotated through
//! that library's re-export with `crate = path` (this crate does not
//! depend on batch-alloc). Each is served by a scope. And, in `fail/`
//! (trybuild), the error where the attribute finds neither.

// Boxes are what the functions make, for the scopes to serve.
#![allow(clippy::vec_box)]

use batch_alloc_renamed::batch_alloc::{stats, BatchAlloc};
use batch_alloc_renamed::{batch_alloc, boxes, words, Lines};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

#[batch_alloc(crate = batch_alloc_renamed::batch_alloc)]
fn numbers(n: u64) -> Vec<Box<u64>> {
    (0..n).map(Box::new).collect()
}

#[batch_alloc(crate = "batch_alloc_renamed::batch_alloc")]
async fn numbers_async(n: u64) -> Vec<Box<u64>> {
    (0..n).map(Box::new).collect()
}

struct Counter {
    n: u64,
}

#[batch_alloc(crate = batch_alloc_renamed::batch_alloc)]
impl Counter {
    fn numbers(&self) -> Vec<Box<u64>> {
        (0..self.n).map(Box::new).collect()
    }
}

/// How many allocations `f` had served from scopes.
fn served<R>(f: impl FnOnce() -> R) -> u64 {
    let before = stats().scoped_allocations;
    let result = f();
    let after = stats().scoped_allocations;
    drop(result);
    after - before
}

/// Polls `future` to its end on this thread.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};
    struct NoWake;
    impl Wake for NoWake {
        fn wake(self: Arc<Self>) {}
    }
    let waker = Waker::from(Arc::new(NoWake));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

/// One test: the counters are the process's.
#[test]
fn the_attribute_finds_the_facade_renamed_and_re_exported() {
    let text = "a b c d e f g h i j ".repeat(10);
    let lines = Lines {
        text: "a\n".repeat(100),
    };
    let counter = Counter { n: 100 };
    let cases: [(&str, u64); 6] = [
        ("renamed: fn", served(|| words(&text))),
        ("renamed: async fn", served(|| block_on(boxes(100)))),
        ("renamed: impl", served(|| lines.lines())),
        ("crate = path: fn", served(|| numbers(100))),
        (
            "crate = \"path\": async fn",
            served(|| block_on(numbers_async(100))),
        ),
        ("crate = path: impl", served(|| counter.numbers())),
    ];
    for (case, served) in cases {
        assert!(served >= 100, "{case}: {served} of 100 allocations served");
    }
}

#[test]
fn where_it_finds_neither_it_says_so() {
    // As tests/ui does: line tables, the workspace's setting.
    if std::env::var_os("CARGO_PROFILE_DEV_DEBUG").is_none() {
        std::env::set_var("CARGO_PROFILE_DEV_DEBUG", "line-tables-only");
    }
    trybuild::TestCases::new().compile_fail("fail/*.rs");
}
