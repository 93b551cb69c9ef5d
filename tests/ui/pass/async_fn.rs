// `async fn`s (free and methods): the batch lives in the future, across
// `.await`s, and the future stays `Send`.
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
    let boxes = block_on(assert_send(collect(3)));
    assert_eq!(
        boxes.iter().map(|b| **b).collect::<Vec<_>>(),
        [0, 0, 1, 10, 2, 20]
    );
    assert_eq!(block_on(assert_send(Worker.run(4))), 6);
}
