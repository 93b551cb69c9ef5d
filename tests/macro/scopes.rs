//! When an annotated function's scope is open: from the first statement of
//! its body to its end, whichever way it ends; joined by what it calls;
//! for an `async fn`, in each poll and never between them, on whichever
//! thread polls; on each `rayon` worker that runs an annotated function.
//! (That the function still does what it did as written is the
//! differential corpus's subject, `transparent`; what its scope serves is
//! `served`'s.)

#![allow(clippy::vec_box)]

use std::panic::{catch_unwind, AssertUnwindSafe};

use batch_alloc::{batch_alloc, scope};
use batch_alloc_rt::testing::scope_on_this_thread;

use workloads::testing::{serially, served, silenced};

use crate::pool::{self, Pool};

fn open() -> bool {
    scope_on_this_thread().is_some()
}

#[batch_alloc]
fn exits(how: u8, seen: &mut Vec<bool>) -> Result<u8, String> {
    seen.push(open());
    let parsed: u8 = match how {
        0 => return Ok(0),
        1 => "x"
            .parse()
            .map_err(|e: std::num::ParseIntError| e.to_string())?,
        2 => panic!("unwinding"),
        3 => 'labelled: {
            seen.push(open());
            break 'labelled 3;
        }
        _ => how,
    };
    seen.push(open());
    Ok(parsed)
}

#[test]
fn the_scope_is_open_while_the_body_runs_and_closed_by_every_exit() {
    serially(|| {
        for how in 0..5 {
            let mut seen = Vec::new();
            let result = silenced(|| catch_unwind(AssertUnwindSafe(|| exits(how, &mut seen))));
            assert_eq!(result.is_err(), how == 2, "exit {how}");
            assert!(seen.iter().all(|&open| open), "exit {how}: {seen:?}");
            assert!(!open(), "exit {how} left its scope open");
        }
    });
}

#[batch_alloc]
fn inner(seen: &mut Vec<bool>) -> Box<u64> {
    seen.push(open());
    Box::new(1)
}

#[batch_alloc]
fn outer(seen: &mut Vec<bool>) -> Vec<Box<u64>> {
    let first = inner(seen);
    // The inner call joined the scope: it is still open here.
    seen.push(open());
    let second = scope(|| inner(seen));
    seen.push(open());
    vec![first, second]
}

#[batch_alloc]
fn depth(n: u32, seen: &mut Vec<bool>) -> u32 {
    seen.push(open());
    match n {
        0 => 0,
        _ => 1 + depth(n - 1, seen),
    }
}

#[test]
fn calls_inside_join_the_scope_and_leave_it_open() {
    serially(|| {
        let mut seen = Vec::new();
        let ((boxes, in_scope), served_by_scope) = served(|| {
            let boxes = scope(|| outer(&mut seen));
            (boxes, open())
        });
        assert_eq!(boxes.len(), 2);
        assert!(!in_scope);
        assert_eq!(seen, [true; 4]);
        assert!(served_by_scope >= 3, "{served_by_scope}");
        let mut seen = Vec::new();
        assert_eq!(depth(20, &mut seen), 20);
        assert_eq!(seen, [true; 21]);
        assert!(!open());
    });
}

// ---- async fn: a scope in each poll ----

/// Pending once (waking itself), then ready.
fn yield_now() -> impl std::future::Future<Output = ()> {
    let mut yielded = false;
    std::future::poll_fn(move |cx| match yielded {
        true => std::task::Poll::Ready(()),
        false => {
            yielded = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    })
}

#[batch_alloc]
async fn suspends(n: u64, mut seen: Vec<bool>) -> (Vec<Box<u64>>, Vec<bool>) {
    let mut out = Vec::new();
    for i in 0..n {
        seen.push(open());
        out.push(Box::new(i));
        yield_now().await;
    }
    (out, seen)
}

struct Receiver(Vec<u64>);

impl Receiver {
    #[batch_alloc]
    async fn consume(self, extra: u64) -> Vec<String> {
        yield_now().await;
        self.0
            .iter()
            .chain([&extra])
            .map(|i| i.to_string())
            .collect()
    }
}

#[test]
fn an_async_fn_is_a_scope_in_each_poll_on_whichever_thread_polls() {
    serially(|| {
        let pool = Pool::new(2);
        let ((output, polls), count) = served(|| pool::run(&pool, suspends(6, Vec::new())));
        let (boxes, seen) = output;
        assert_eq!(boxes.len(), 6);
        assert_eq!(seen, [true; 6], "a poll ran without its scope");
        assert!(polls.len() > 6, "the future was suspended");
        let (last, pending) = polls.split_last().expect("polled");
        assert!(last.ready && pending.iter().all(|poll| !poll.ready && poll.woken));
        assert!(
            polls.iter().all(|poll| poll.scope_after.is_none()),
            "{polls:?}"
        );
        assert_eq!(pool::threads(&polls), 2, "the future moved");
        assert!(count >= 6, "{count}");
        let ((strings, _), count) = served(|| pool::run(&pool, Receiver(vec![1, 2]).consume(3)));
        assert_eq!(strings, ["1", "2", "3"]);
        assert!(count >= 3, "{count}");
    });
}

#[test]
fn an_async_fn_dropped_while_suspended_leaves_no_scope() {
    serially(|| {
        let pool = Pool::new(2);
        let (polls, after_drop) = pool::abandon(&pool, suspends(6, Vec::new()), 3);
        assert!(polls.iter().all(|poll| poll.scope_after.is_none()));
        assert_eq!(after_drop, None);
    });
}

const _: () = {
    fn assert_send<T: Send>(_: &T) {}
    #[allow(dead_code)]
    fn futures_are_send() {
        assert_send(&suspends(1, Vec::new()));
        assert_send(&Receiver(Vec::new()).consume(1));
    }
};

// ---- threads ----

#[batch_alloc]
fn parse_numbers(text: &str) -> (Vec<Box<u64>>, bool) {
    let numbers = text
        .split(' ')
        .map(|w| Box::new(w.parse().unwrap_or(0)))
        .collect();
    (numbers, open())
}

#[test]
fn rayon_workers_each_open_their_own_scope() {
    use rayon::prelude::*;
    serially(|| {
        // Workers spawned here, to be joined before the next test reads
        // the process-wide counters (a thread gives its runs back as it
        // exits).
        let workers = std::sync::Mutex::new(Vec::new());
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .spawn_handler(|worker| {
                let handle = std::thread::Builder::new().spawn(|| worker.run())?;
                workers.lock().unwrap().push(handle);
                Ok(())
            })
            .build()
            .unwrap();
        let texts: Vec<String> = (0..30)
            .map(|i| {
                (0..100)
                    .map(|j| (i * j).to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        type Parsed = Vec<(Vec<Box<u64>>, bool)>;
        let (parsed, count): (Parsed, u64) =
            served(|| pool.install(|| texts.par_iter().map(|t| parse_numbers(t)).collect()));
        assert!(parsed
            .iter()
            .all(|(numbers, open)| numbers.len() == 100 && *open));
        assert!(count >= 30 * 100, "{count}");
        drop(pool);
        for worker in workers.into_inner().unwrap() {
            worker.join().unwrap();
        }
    });
}

// ---- another attribute macro below this one ----

// `#[tokio::test]` must see an `async fn`: the attribute puts itself below
// it, to make a scope of the function `tokio::test` makes (one that runs
// the body to its end on a runtime of its own), so the body runs in it.
// (It allocates nothing in the scope: it runs beside the serial tests,
// which read the process's counters.)
#[batch_alloc]
#[tokio::test(flavor = "current_thread")]
async fn an_async_test_below_the_attribute_runs_in_its_scope() {
    assert!(open(), "the test's body ran without a scope");
    tokio::task::yield_now().await;
    assert!(open());
}
