//! A small executor for the async tests: a pool of worker threads, and a
//! [`Task`] that sends its future to one of them for each poll, so that a
//! future suspended on one thread resumes on another, as under a
//! work-stealing runtime. Each poll reports the thread that made it,
//! whether the future woke its waker, and whether a batch scope was open on
//! that thread once the poll returned.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, JoinHandle, ThreadId};

use batch_alloc_rt::testing::scope_on_this_thread;

type Job = Box<dyn FnOnce() + Send>;

/// Worker threads, each running the jobs sent to it in order.
pub struct Pool {
    senders: Vec<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
}

impl Pool {
    pub fn new(workers: usize) -> Pool {
        let (senders, threads) = (0..workers)
            .map(|_| {
                let (sender, jobs) = channel::<Job>();
                let thread = thread::spawn(move || {
                    for job in jobs {
                        job();
                    }
                });
                (sender, thread)
            })
            .unzip();
        Pool { senders, threads }
    }

    pub fn workers(&self) -> usize {
        self.senders.len()
    }

    /// Runs `job` on worker `worker` (modulo the pool's size) and returns
    /// what it returned.
    pub fn run_on<R: Send + 'static>(
        &self,
        worker: usize,
        job: impl FnOnce() -> R + Send + 'static,
    ) -> R {
        let (reply, result) = channel();
        self.senders[worker % self.workers()]
            .send(Box::new(move || {
                let _ = reply.send(job());
            }))
            .expect("the worker is running");
        result.recv().expect("the worker ran the job")
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.senders.clear();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// What one poll saw.
#[derive(Clone, Debug)]
pub struct Polled {
    /// The thread that polled.
    pub thread: ThreadId,
    /// Whether the future was ready.
    pub ready: bool,
    /// Whether the future woke its waker during the poll.
    pub woken: bool,
    /// `scope_on_this_thread()` on the polling thread once the poll returned.
    pub scope_after: Option<bool>,
}

#[derive(Default)]
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A future and the record of its polls.
pub struct Task<F: Future> {
    future: Option<Pin<Box<F>>>,
    pub polls: Vec<Polled>,
}

impl<F> Task<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    pub fn new(future: F) -> Self {
        Task {
            future: Some(Box::pin(future)),
            polls: Vec::new(),
        }
    }

    /// Sends the future to worker `worker`, polls it there once, and takes
    /// it back.
    pub fn poll_on(&mut self, pool: &Pool, worker: usize) -> Poll<F::Output> {
        let mut future = self.future.take().expect("the future is not done");
        let (poll, future, polled) = pool.run_on(worker, move || {
            let flag = Arc::new(Flag::default());
            let waker = Waker::from(flag.clone());
            let poll = future.as_mut().poll(&mut Context::from_waker(&waker));
            let polled = Polled {
                thread: thread::current().id(),
                ready: poll.is_ready(),
                woken: flag.0.load(Ordering::Relaxed),
                scope_after: scope_on_this_thread(),
            };
            (poll, future, polled)
        });
        self.polls.push(polled);
        if poll.is_pending() {
            self.future = Some(future);
        }
        poll
    }

    /// Polls on the pool's workers in turn, each poll on the next one,
    /// until the future is ready.
    pub fn run(mut self, pool: &Pool) -> (F::Output, Vec<Polled>) {
        loop {
            let worker = self.polls.len();
            if let Poll::Ready(output) = self.poll_on(pool, worker) {
                return (output, self.polls);
            }
        }
    }

    /// Drops the future, not done, on worker `worker`; returns
    /// `scope_on_this_thread()` there after the drop.
    pub fn drop_on(mut self, pool: &Pool, worker: usize) -> Option<bool> {
        let future = self.future.take().expect("the future is not done");
        pool.run_on(worker, move || {
            drop(future);
            scope_on_this_thread()
        })
    }
}

/// Runs `future` on `pool` as [`Task::run`] does.
pub fn run<F>(pool: &Pool, future: F) -> (F::Output, Vec<Polled>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    Task::new(future).run(pool)
}

/// Polls `future` `polls` times, each time on the next worker (it must
/// still be pending after each), then drops it on the next worker; returns
/// the polls, and `scope_on_this_thread()` where it was dropped.
pub fn abandon<F>(pool: &Pool, future: F, polls: usize) -> (Vec<Polled>, Option<bool>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let mut task = Task::new(future);
    for worker in 0..polls {
        assert!(task.poll_on(pool, worker).is_pending(), "done too soon");
    }
    let polls = task.polls.clone();
    let scope = task.drop_on(pool, polls.len());
    (polls, scope)
}

/// How many different threads made `polls`.
pub fn threads(polls: &[Polled]) -> usize {
    let threads: HashSet<ThreadId> = polls.iter().map(|p| p.thread).collect();
    threads.len()
}
