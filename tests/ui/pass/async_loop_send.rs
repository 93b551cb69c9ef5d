// `async fn`s whose loops await, in every position an await can take in a
// loop: the scope guard lives in the future, suspended at each await, and
// the future stays `Send` (it is run on another thread below).
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

struct Worker;

// On the impl block and again on the method: two guards, both suspended.
#[batch_alloc]
impl Worker {
    #[batch_alloc]
    async fn run(&self, items: Vec<u64>) -> u64 {
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

fn main() {
    let future = assert_send(awaits_everywhere(2));
    let boxes = std::thread::spawn(move || block_on(future)).join().unwrap();
    assert_eq!(
        boxes.iter().map(|b| **b).collect::<Vec<_>>(),
        [0, 0, 1, 100, 1, 10, 11, 2]
    );
    let future = assert_send(Worker.run(vec![1, 2, 3]));
    assert_eq!(std::thread::spawn(move || block_on(future)).join().unwrap(), 6);
}
