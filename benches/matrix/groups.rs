//! The matrix: object size × count × scenario, every strategy of a binary.
//!
//! Bench ids are `SCENARIO/SIZE/STRATEGY/N`, throughput in objects, so
//! criterion's time per element is the cost of one object. Scenarios:
//!
//! - `alloc_drop`: allocate `N` objects, then drop them all; the timed
//!   operation is both. For 64-byte objects `N` runs over every power of two
//!   up to 65,536 (the Go proposal's table and the charts); other sizes take
//!   1, 8, 64, 1024 and 65,536.
//! - `alloc_only`: allocation alone. The timer runs around rounds of
//!   allocating `N` objects (enough rounds to make at least 4096 objects,
//!   so that reading the clock costs under 0.01 ns per object); the objects
//!   are dropped after the timer stops, before the next rounds start. A
//!   batch's end (giving its unused slots back) is part of allocating.
//! - `cross_thread`: allocate `N` objects here, send them to a worker thread
//!   that drops them, and get the emptied containers back; timed from the
//!   first allocation to the return, rounds of at least 4096 objects per
//!   message, so the two hand-offs (a few microseconds) are spread thin.
//!   Arenas are sent whole and dropped (or reset) by the worker.
//! - `remote_drop`: the same exchange, but only the worker's dropping is
//!   timed, by the worker: the cost of a free from another thread.

use std::hint::black_box;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{Bencher, BenchmarkGroup, BenchmarkId, Criterion, Throughput};

use super::strategies::{Item, Strategy, T16, T256, T64};
use super::{each_strategy, Allocator, Visit};

/// Every power of two from 1 to 65,536.
pub const POWERS: [usize; 17] = {
    let mut n = [0; 17];
    let mut i = 0;
    while i < 17 {
        n[i] = 1 << i;
        i += 1;
    }
    n
};

/// The counts of the matrix.
pub const COUNTS: [usize; 5] = [1, 8, 64, 1024, 65536];

/// Objects made per timed round at least (per message, across threads).
const ROUND_OBJECTS: usize = 4096;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Scenario {
    AllocDrop,
    AllocOnly,
    CrossThread,
    RemoteDrop,
}

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Scenario::AllocDrop => "alloc_drop",
            Scenario::AllocOnly => "alloc_only",
            Scenario::CrossThread => "cross_thread",
            Scenario::RemoteDrop => "remote_drop",
        }
    }
}

pub fn register(allocator: Allocator, c: &mut Criterion) {
    group::<T64>(allocator, c, Scenario::AllocDrop, &POWERS);
    group::<T16>(allocator, c, Scenario::AllocDrop, &COUNTS);
    group::<T256>(allocator, c, Scenario::AllocDrop, &COUNTS);
    for scenario in [Scenario::AllocOnly, Scenario::CrossThread] {
        group::<T16>(allocator, c, scenario, &COUNTS);
        group::<T64>(allocator, c, scenario, &COUNTS);
        group::<T256>(allocator, c, scenario, &COUNTS);
    }
    group::<T64>(allocator, c, Scenario::RemoteDrop, &[1024, 65536]);
}

fn group<T: Item>(allocator: Allocator, c: &mut Criterion, scenario: Scenario, counts: &[usize]) {
    let name = format!("{}/{}B", scenario.name(), std::mem::size_of::<T>());
    let mut group = c.benchmark_group(name);
    for &n in counts {
        group.throughput(Throughput::Elements(n as u64));
        let mut register = Register {
            group: &mut group,
            scenario,
            n,
        };
        each_strategy::<T, _>(allocator, &mut register);
    }
    group.finish();
}

struct Register<'g, 'c> {
    group: &'g mut BenchmarkGroup<'c, WallTime>,
    scenario: Scenario,
    n: usize,
}

impl<T: Item> Visit<T> for Register<'_, '_> {
    fn strategy<S: Strategy<T>>(&mut self, label: &str) {
        let n = self.n;
        let rounds = (ROUND_OBJECTS / n).max(1);
        let id = BenchmarkId::new(label, n);
        // Criterion calls the routine once per sample: state is made at the
        // first call and kept, so that only the first sees a cold start
        // (and warm-up absorbs it).
        match self.scenario {
            Scenario::AllocDrop => {
                let mut state: Option<S> = None;
                self.group.bench_function(id, |b| {
                    let held = state.get_or_insert_with(|| S::new(n));
                    alloc_drop(b, held, n)
                });
            }
            Scenario::AllocOnly => {
                let mut state: Option<Vec<S>> = None;
                self.group.bench_function(id, |b| {
                    let pool =
                        state.get_or_insert_with(|| (0..rounds).map(|_| S::new(n)).collect());
                    alloc_only(b, pool, n)
                });
            }
            Scenario::CrossThread | Scenario::RemoteDrop => {
                let remote_only = self.scenario == Scenario::RemoteDrop;
                let mut state: Option<(Worker<S>, Vec<S>)> = None;
                self.group.bench_function(id, |b| {
                    let (worker, pool) = state.get_or_insert_with(|| {
                        (Worker::spawn(), (0..rounds).map(|_| S::new(n)).collect())
                    });
                    cross_thread(b, worker, pool, n, remote_only)
                });
                if let Some((worker, _)) = state {
                    worker.join();
                }
            }
        }
    }
}

fn alloc_drop<T: Item, S: Strategy<T>>(b: &mut Bencher<'_>, held: &mut S, n: usize) {
    b.iter(|| {
        held.fill(n);
        black_box(&mut *held);
        held.release();
    })
}

fn alloc_only<T: Item, S: Strategy<T>>(b: &mut Bencher<'_>, pool: &mut [S], n: usize) {
    b.iter_custom(|iters| {
        let mut timed = Duration::ZERO;
        let mut left = iters as usize;
        while left > 0 {
            let rounds = left.min(pool.len());
            let start = Instant::now();
            for held in &mut pool[..rounds] {
                held.fill(n);
            }
            timed += start.elapsed();
            black_box(&mut *pool);
            for held in &mut pool[..rounds] {
                held.release();
            }
            left -= rounds;
        }
        timed
    })
}

fn cross_thread<T: Item, S: Strategy<T>>(
    b: &mut Bencher<'_>,
    worker: &mut Worker<S>,
    pool: &mut Vec<S>,
    n: usize,
    remote_only: bool,
) {
    b.iter_custom(|iters| {
        let mut timed = Duration::ZERO;
        let mut left = iters as usize;
        while left > 0 {
            let rounds = left.min(pool.len());
            let mut sent = std::mem::take(pool);
            let start = Instant::now();
            for held in &mut sent[..rounds] {
                held.fill(n);
            }
            worker.to.send((sent, rounds)).unwrap();
            let (back, remote) = worker.from.recv().unwrap();
            let round_trip = start.elapsed();
            *pool = back;
            timed += if remote_only { remote } else { round_trip };
            left -= rounds;
        }
        timed
    })
}

/// A thread that releases what it is sent, timing only that, and sends the
/// emptied containers back.
struct Worker<S> {
    to: Sender<(Vec<S>, usize)>,
    from: Receiver<(Vec<S>, Duration)>,
    thread: JoinHandle<()>,
}

impl<S: Send + 'static> Worker<S> {
    fn spawn<T: Item>() -> Self
    where
        S: Strategy<T>,
    {
        let (to, inbox) = channel::<(Vec<S>, usize)>();
        let (outbox, from) = channel();
        let thread = std::thread::spawn(move || {
            for (mut pool, rounds) in inbox {
                let start = Instant::now();
                for held in &mut pool[..rounds] {
                    held.release();
                }
                let took = start.elapsed();
                if outbox.send((pool, took)).is_err() {
                    break;
                }
            }
        });
        Worker { to, from, thread }
    }

    fn join(self) {
        drop(self.to);
        self.thread.join().unwrap();
    }
}
