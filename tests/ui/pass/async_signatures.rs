// The attribute makes an `async fn` the function returning one future that
// the compiler makes of it, polled inside a scope: every signature an
// `async fn` can have still compiles, and means what it did. Methods on `&self` and `&mut self` that return
// borrows, `?` whose error type only the return type names, lifetimes,
// generics and `impl Trait` arguments, patterns as parameters, `Self`,
// `async fn` in traits, an `unsafe async fn`, a parameter that is never
// used (dropped when the future completes, as before) and one moved.
#![deny(warnings)]

use batch_alloc::batch_alloc;
use std::cell::RefCell;
use std::fmt::Display;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

async fn ready<T>(value: T) -> T {
    value
}

#[derive(Debug, PartialEq)]
struct Error(String);

impl From<std::num::ParseIntError> for Error {
    fn from(e: std::num::ParseIntError) -> Error {
        Error(e.to_string())
    }
}

#[batch_alloc]
async fn question_mark(words: &[&str]) -> Result<Vec<Box<u64>>, Error> {
    let mut out = Vec::new();
    for word in words {
        out.push(Box::new(ready(word).await.parse::<u64>()?));
    }
    if out.is_empty() {
        return Err(Error("empty".into()));
    }
    Ok(out)
}

#[batch_alloc]
async fn longest<'a>(a: &'a str, b: &'a str) -> &'a str {
    if ready(a.len()).await >= b.len() {
        a
    } else {
        b
    }
}

#[batch_alloc]
async fn shown<T: Display>(items: impl IntoIterator<Item = T>, (open, close): (char, char)) -> String {
    let mut out = String::new();
    for item in items {
        out.push_str(&format!("{open}{}{close}", ready(item).await));
    }
    out
}

struct Log(Rc<RefCell<Vec<&'static str>>>, &'static str);

impl Drop for Log {
    fn drop(&mut self) {
        self.0.borrow_mut().push(self.1);
    }
}

#[batch_alloc]
async fn unused_parameter(_kept: Log, moved: Log, _: Log) -> usize {
    let moved = Box::new(moved);
    ready(moved.1.len()).await
}

async fn unused_parameter_as_written(_kept: Log, moved: Log, _: Log) -> usize {
    let moved = Box::new(moved);
    ready(moved.1.len()).await
}

struct Counter {
    seen: Vec<Box<u64>>,
}

#[batch_alloc]
impl Counter {
    async fn add(&mut self, value: u64) -> &Self {
        self.seen.push(Box::new(ready(value).await));
        self
    }

    async fn first(&self) -> Option<&u64> {
        ready(()).await;
        self.seen.first().map(|b| &**b)
    }

    async fn make(n: u64) -> Self {
        let mut counter = Self { seen: Vec::new() };
        for i in 0..n {
            counter.add(i).await;
        }
        counter
    }
}

trait Source {
    async fn next_value(&mut self) -> Option<Box<u64>>;
}

struct Countdown(u64);

impl Source for Countdown {
    #[batch_alloc]
    async fn next_value(&mut self) -> Option<Box<u64>> {
        let value = ready(self.0).await;
        self.0 = value.checked_sub(1)?;
        Some(Box::new(value))
    }
}

#[batch_alloc]
#[allow(unused_unsafe)]
async unsafe fn unsafe_async(value: u64) -> u64 {
    *Box::new(ready(value).await)
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

fn assert_send<T: Send>(value: T) -> T {
    value
}

fn main() {
    let parsed = block_on(assert_send(question_mark(&["1", "2"]))).unwrap();
    assert_eq!(parsed.iter().map(|b| **b).collect::<Vec<_>>(), [1, 2]);
    assert!(block_on(question_mark(&["x"])).unwrap_err().0.contains("invalid"));
    assert_eq!(block_on(question_mark(&[])), Err(Error("empty".into())));
    assert_eq!(block_on(longest("abc", "de")), "abc");
    assert_eq!(block_on(shown([1, 2], ('[', ']'))), "[1][2]");

    // Parameters are dropped when and in the order they were.
    let logs = [0, 1].map(|annotated| {
        let log = Rc::new(RefCell::new(Vec::new()));
        let args = [
            Log(log.clone(), "kept"),
            Log(log.clone(), "moved"),
            Log(log.clone(), "wild"),
        ];
        let [kept, moved, wild] = args;
        let length = match annotated {
            1 => block_on(unused_parameter(kept, moved, wild)),
            _ => block_on(unused_parameter_as_written(kept, moved, wild)),
        };
        assert_eq!(length, 5);
        let events = log.borrow().clone();
        events
    });
    assert_eq!(logs[0], logs[1]);

    let counter = block_on(Counter::make(3));
    assert_eq!(block_on(counter.first()), Some(&0));
    let mut source = Countdown(2);
    let mut values = Vec::new();
    while let Some(value) = block_on(source.next_value()) {
        values.push(*value);
    }
    assert_eq!(values, [2, 1]);
    // SAFETY: `unsafe_async` has no precondition; it is `unsafe` to show
    // that the attribute accepts it.
    assert_eq!(block_on(unsafe { unsafe_async(7) }), 7);
}
