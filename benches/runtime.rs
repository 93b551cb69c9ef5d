//! The runtime against per-item boxing and the one-allocation limit, all
//! under `BatchAlloc<System>` in one process, measured side by side.
//!
//! `cargo bench -p batch-alloc-benches --bench runtime` (add `-- --quick` for
//! a fast pass). Each group's throughput is in elements, so criterion's time
//! divided by N is the cost per item.

use std::hint::black_box;
use std::sync::mpsc;
use std::thread;

use batch_alloc::{Batch, BatchAlloc};
use criterion::{BenchmarkId, Criterion, Throughput};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

const SIZES: [usize; 5] = [1, 8, 64, 1024, 65536];

/// Allocate `n` values and drop them, three ways.
fn alloc_then_drop<T, F: Fn(u64) -> T + Copy>(c: &mut Criterion, name: &str, make: F) {
    let mut group = c.benchmark_group(format!("alloc_then_drop/{name}"));
    for n in SIZES {
        group.throughput(Throughput::Elements(n as u64));
        let mut held: Vec<Box<T>> = Vec::with_capacity(n);
        group.bench_with_input(BenchmarkId::new("batch", n), &n, |b, &n| {
            b.iter(|| {
                {
                    let mut batch = Batch::with_capacity(n);
                    for i in 0..n as u64 {
                        held.push(batch.alloc(make(black_box(i))));
                    }
                }
                black_box(&held);
                held.clear();
            })
        });
        group.bench_with_input(BenchmarkId::new("box_new", n), &n, |b, &n| {
            b.iter(|| {
                for i in 0..n as u64 {
                    held.push(Box::new(make(black_box(i))));
                }
                black_box(&held);
                held.clear();
            })
        });
        group.bench_with_input(BenchmarkId::new("vec_limit", n), &n, |b, &n| {
            b.iter(|| {
                let mut all: Vec<T> = Vec::with_capacity(n);
                for i in 0..n as u64 {
                    all.push(make(black_box(i)));
                }
                black_box(&all);
            })
        });
    }
    group.finish();
}

/// Allocate on this thread, drop on a worker thread.
fn cross_thread(c: &mut Criterion) {
    type T = [u64; 8];
    let (to_worker, inbox) = mpsc::channel::<Vec<Box<T>>>();
    let (done, finished) = mpsc::channel::<Vec<Box<T>>>();
    let worker = thread::spawn(move || {
        for mut boxes in inbox {
            boxes.clear();
            done.send(boxes).unwrap();
        }
    });
    let mut group = c.benchmark_group("cross_thread_drop/64B");
    for n in [1024usize, 65536] {
        group.throughput(Throughput::Elements(n as u64));
        let mut held = Some(Vec::with_capacity(n));
        group.bench_with_input(BenchmarkId::new("batch", n), &n, |b, &n| {
            b.iter(|| {
                let mut boxes = held.take().unwrap();
                {
                    let mut batch = Batch::with_capacity(n);
                    for i in 0..n as u64 {
                        boxes.push(batch.alloc([black_box(i); 8]));
                    }
                }
                to_worker.send(boxes).unwrap();
                held = Some(finished.recv().unwrap());
            })
        });
        group.bench_with_input(BenchmarkId::new("box_new", n), &n, |b, &n| {
            b.iter(|| {
                let mut boxes = held.take().unwrap();
                for i in 0..n as u64 {
                    boxes.push(Box::new([black_box(i); 8]));
                }
                to_worker.send(boxes).unwrap();
                held = Some(finished.recv().unwrap());
            })
        });
    }
    group.finish();
    drop(to_worker);
    worker.join().unwrap();
}

fn main() {
    // glibc runs slower once a process has a second thread; spawn one first
    // so that every figure is measured in the same mode.
    thread::spawn(|| {}).join().unwrap();
    let mut c = Criterion::default().configure_from_args();
    alloc_then_drop(&mut c, "64B", |i| [i; 8]);
    alloc_then_drop(&mut c, "16B", |i| [i; 2]);
    alloc_then_drop(&mut c, "256B", |i| [i; 32]);
    cross_thread(&mut c);
    c.final_summary();
}
