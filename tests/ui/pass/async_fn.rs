// `async fn`s (free and methods) whose loops await, in every position an
// await can take in a loop: the future opens the scope each time it is
// polled and closes it before it returns, so nothing of the scope is held
// across an await, and the future stays `Send` (some are run on another
// thread below).
#![forbid(unsafe_code)]
#![deny(warnings)]

use batch_alloc::batch_alloc;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

async fn ready(value: u64) -> u64 {
    value
}

#[batch_alloc]
async fn collect(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Box::new(ready(i).await));
        let extra = Box::new(ready(i * 10).await);
        out.push(extra);
    }
    out
}

#[batch_alloc]
async fn awaits_everywhere(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    let mut i = 0;
    // In the condition, the body, an inner loop's head and body, a `match`
    // scrutinee and a `break` value.
    while ready(i).await < n {
        out.push(Box::new(ready(i).await));
        for j in 0..ready(2).await {
            let value = Box::new(ready(i * 10 + j).await);
            out.push(value);
        }
        match ready(i).await {
            0 => out.push(Box::new(100)),
            _ => {}
        }
        i += 1;
    }
    let last = loop {
        break Box::new(ready(i).await);
    };
    out.push(last);
    out
}

#[batch_alloc]
async fn collect_boxes(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Box::new(ready(i).await));
    }
    out
}

struct Worker;

#[batch_alloc]
impl Worker {
    async fn run(&self, n: u64) -> u64 {
        let mut sum = 0;
        let mut i = 0;
        while i < n {
            sum += *Box::new(ready(i).await);
            i += 1;
        }
        sum
    }

    // On the impl block and again on the method: two guards, both
    // suspended at the await.
    #[batch_alloc]
    async fn run_twice_annotated(&self, items: Vec<u64>) -> u64 {
        let mut sum = 0;
        for item in items {
            sum += *Box::new(ready(item).await);
        }
        sum
    }
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

/// Runs a `Send` future to completion on another thread.
fn elsewhere<F: Future + Send + 'static>(future: F) -> F::Output
where
    F::Output: Send + 'static,
{
    std::thread::spawn(move || block_on(future)).join().unwrap()
}

fn main() {
    let boxes = block_on(assert_send(collect(3)));
    assert_eq!(
        boxes.iter().map(|b| **b).collect::<Vec<_>>(),
        [0, 0, 1, 10, 2, 20]
    );
    assert_eq!(block_on(assert_send(Worker.run(4))), 6);
    let boxes = elsewhere(awaits_everywhere(2));
    assert_eq!(
        boxes.iter().map(|b| **b).collect::<Vec<_>>(),
        [0, 0, 1, 100, 1, 10, 11, 2]
    );
    let boxes = elsewhere(collect_boxes(3));
    assert_eq!(boxes.iter().map(|b| **b).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(elsewhere(Worker.run_twice_annotated(vec![1, 2, 3])), 6);
}
