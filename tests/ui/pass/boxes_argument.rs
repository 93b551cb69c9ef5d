// `#[batch_alloc(boxes)]`: per-site batches instead of batch scopes, on
// every kind of item the attribute takes.
#![forbid(unsafe_code)]
#![deny(warnings)]

use batch_alloc::batch_alloc;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

#[batch_alloc(boxes)]
fn for_loop(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Box::new(i));
    }
    out
}

#[batch_alloc(boxes)]
fn generic<T: Clone>(items: &[T]) -> Vec<Box<T>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < items.len() {
        out.push(Box::new(items[i].clone()));
        i += 1;
    }
    out
}

struct Stack(Vec<Box<u64>>);

#[batch_alloc(boxes)]
impl Stack {
    fn push(&mut self, n: u64) -> usize {
        for i in 0..n {
            self.0.push(Box::new(i));
        }
        self.0.len()
    }
}

trait Fill {
    fn fill(&mut self, n: u64) -> u64;
}

impl Fill for Stack {
    #[batch_alloc(boxes)]
    fn fill(&mut self, n: u64) -> u64 {
        let mut i = 0;
        loop {
            if i == n {
                break i;
            }
            self.0.push(Box::new(i));
            i += 1;
        }
    }
}

async fn ready(value: u64) -> u64 {
    value
}

#[batch_alloc(boxes)]
async fn collect(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Box::new(ready(i).await));
    }
    out
}

fn assert_send<T: Send>(value: T) -> T {
    value
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

fn main() {
    assert_eq!(for_loop(3).iter().map(|b| **b).sum::<u64>(), 3);
    assert_eq!(*generic(&["a", "b"])[1], "b");
    let mut stack = Stack(Vec::new());
    assert_eq!(stack.push(4), 4);
    assert_eq!(stack.fill(2), 2);
    let boxes = block_on(assert_send(collect(3)));
    assert_eq!(boxes.iter().map(|b| **b).collect::<Vec<_>>(), [0, 1, 2]);
}
