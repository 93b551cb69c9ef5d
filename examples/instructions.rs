//! Runs one allocation workload a given number of times, for counting
//! instructions with callgrind: the difference between two repetition counts,
//! divided by the items added, is the cost per item without start-up noise.
//!
//! ```text
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/instructions batch 1024 100
//! ```
//!
//! Workloads: `batch`, `box_new`, `vec` (T = 64 bytes, allocate N then drop);
//! `plain` and `scoped` (the loop of `box_new` in a function of its own,
//! written once, as written and under `#[batch_alloc]`: what the attribute's
//! loop costs, scope set-up included);
//! `batch_cross`, `box_new_cross` (allocate N here, drop them on another
//! thread, one that has never allocated from a batch: it gets a heap at its
//! first free, and its frees go through its outbox); `batch_cross_heap`
//! (the same, the other thread having made its heap with a batch first);
//! `batch_shared`, `box_new_shared` (allocate N here, then drop
//! every other one here while another thread drops the rest at the same
//! time: the owner's frees and remote frees into the same spans at once);
//! `calls_plain`, `calls_alone`, `calls_plain_method`, `calls_method` (a
//! recursive walk over a tree of N nodes, inside `scope()`: a free function
//! as written and annotated alone, whose body runs in a closure; a method
//! as written and in an annotated impl, which calls itself to open its
//! scope: what an annotated call costs inside an open scope, per call).

use std::hint::black_box;

use batch_alloc::{Batch, BatchAlloc};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

type T = [u64; 8];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: instructions batch|box_new|plain|scoped|vec N REPS";
    let workload = args.get(1).expect(usage).clone();
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).expect(usage);
    let reps: usize = args.get(3).and_then(|s| s.parse().ok()).expect(usage);
    std::thread::spawn(|| {}).join().unwrap();
    if let Some(batched) = workload.strip_suffix("_cross") {
        cross_thread(batched == "batch", false, n, reps);
        return;
    }
    if workload == "batch_cross_heap" {
        cross_thread(true, true, n, reps);
        return;
    }
    if let Some(batched) = workload.strip_suffix("_shared") {
        shared_spans(batched == "batch", n, reps);
        return;
    }
    if let Some(form) = workload.strip_prefix("calls_") {
        calls::walk(form, n, reps);
        return;
    }
    let mut held: Vec<Box<T>> = Vec::with_capacity(n);
    for _ in 0..reps {
        match workload.as_str() {
            "batch" => {
                {
                    let mut batch = Batch::with_capacity(n);
                    for i in 0..n as u64 {
                        held.push(batch.alloc([black_box(i); 8]));
                    }
                }
                black_box(&held);
                held.clear();
            }
            "box_new" => {
                for i in 0..n as u64 {
                    held.push(Box::new([black_box(i); 8]));
                }
                black_box(&held);
                held.clear();
            }
            "plain" => {
                plain::fill(n, &mut held);
                black_box(&held);
                held.clear();
            }
            "scoped" => {
                scoped::fill(n, &mut held);
                black_box(&held);
                held.clear();
            }
            "vec" => {
                let mut all: Vec<T> = Vec::with_capacity(n);
                for i in 0..n as u64 {
                    all.push([black_box(i); 8]);
                }
                black_box(&all);
            }
            other => panic!("unknown workload {other}; {usage}"),
        }
    }
    if std::env::var_os("INSTRUCTIONS_STATS").is_some() {
        eprintln!("{:?}", batch_alloc::stats());
    }
}

/// One loop, written once: as written and under the attribute.
macro_rules! annotated {
    ($name:ident, $($form:tt)*) => {
        mod $name {
            use super::{black_box, T};

            #[$($form)*]
            #[inline(never)]
            pub fn fill(n: usize, out: &mut Vec<Box<T>>) {
                for i in 0..n as u64 {
                    out.push(Box::new([black_box(i); 8]));
                }
            }
        }
    };
}
annotated!(plain, allow(clippy::vec_box));
annotated!(scoped, batch_alloc::batch_alloc);

/// A tree walked by recursion, as written and annotated: every call but
/// the first joins the scope `scope()` opened.
mod calls {
    use std::hint::black_box;

    pub struct Node {
        value: u64,
        left: Option<Box<Node>>,
        right: Option<Box<Node>>,
    }

    /// A balanced tree of `n` nodes.
    fn tree(n: usize) -> Option<Box<Node>> {
        (n > 0).then(|| {
            let rest = n - 1;
            Box::new(Node {
                value: n as u64,
                left: tree(rest / 2),
                right: tree(rest - rest / 2),
            })
        })
    }

    /// Walks a tree of `n` nodes `reps` times with `form`; each walk makes
    /// `2n + 1` calls.
    pub fn walk(form: &str, n: usize, reps: usize) {
        let root = tree(n);
        let mut total = 0;
        batch_alloc::scope(|| {
            for _ in 0..reps {
                total += match form {
                    "plain" => sum_plain(black_box(&root)),
                    "plain_method" => PlainWalker {
                        weight: black_box(2),
                    }
                    .sum(black_box(&root)),
                    "method" => Walker {
                        weight: black_box(2),
                    }
                    .sum(black_box(&root)),
                    "alone" => sum_alone(black_box(&root)),
                    _ => panic!("no such form: {form}"),
                };
            }
        });
        black_box(total);
    }

    #[inline(never)]
    fn sum_plain(node: &Option<Box<Node>>) -> u64 {
        match node {
            None => 0,
            Some(node) => {
                node.value + sum_plain(black_box(&node.left)) + sum_plain(black_box(&node.right))
            }
        }
    }

    struct PlainWalker {
        weight: u64,
    }

    impl PlainWalker {
        #[inline(never)]
        fn sum(&self, node: &Option<Box<Node>>) -> u64 {
            match node {
                None => 0,
                Some(node) => {
                    self.weight * node.value
                        + self.sum(black_box(&node.left))
                        + self.sum(black_box(&node.right))
                }
            }
        }
    }

    struct Walker {
        weight: u64,
    }

    #[batch_alloc::batch_alloc]
    impl Walker {
        #[inline(never)]
        fn sum(&self, node: &Option<Box<Node>>) -> u64 {
            match node {
                None => 0,
                Some(node) => {
                    self.weight * node.value
                        + self.sum(black_box(&node.left))
                        + self.sum(black_box(&node.right))
                }
            }
        }
    }

    #[batch_alloc::batch_alloc]
    #[inline(never)]
    fn sum_alone(node: &Option<Box<Node>>) -> u64 {
        match node {
            None => 0,
            Some(node) => {
                node.value + sum_alone(black_box(&node.left)) + sum_alone(black_box(&node.right))
            }
        }
    }
}

/// Allocates `n` boxes per repetition and hands them to a worker thread,
/// which drops them; with `worker_heap`, the worker first makes a heap of
/// its own (one batched box).
fn cross_thread(batched: bool, worker_heap: bool, n: usize, reps: usize) {
    let (to_worker, inbox) = std::sync::mpsc::channel::<Vec<Box<T>>>();
    let (back, returned) = std::sync::mpsc::channel::<Vec<Box<T>>>();
    let worker = std::thread::spawn(move || {
        if worker_heap {
            let mut batch = Batch::with_capacity(8);
            drop(black_box(batch.alloc([0; 8])));
        }
        for mut boxes in inbox {
            boxes.clear();
            back.send(boxes).unwrap();
        }
    });
    let mut held: Vec<Box<T>> = Vec::with_capacity(n);
    for _ in 0..reps {
        if batched {
            let mut batch = Batch::with_capacity(n);
            for i in 0..n as u64 {
                held.push(batch.alloc([black_box(i); 8]));
            }
        } else {
            for i in 0..n as u64 {
                held.push(Box::new([black_box(i); 8]));
            }
        }
        to_worker.send(held).unwrap();
        held = returned.recv().unwrap();
    }
    drop(to_worker);
    worker.join().unwrap();
}

/// Allocates `n` boxes per repetition; then this thread drops the even ones
/// while a worker drops the odd ones, both at once.
fn shared_spans(batched: bool, n: usize, reps: usize) {
    use std::sync::{Arc, Barrier};
    let barrier = Arc::new(Barrier::new(2));
    let (to_worker, inbox) = std::sync::mpsc::channel::<Vec<Box<T>>>();
    let worker = {
        let barrier = barrier.clone();
        std::thread::spawn(move || {
            for boxes in inbox {
                barrier.wait();
                drop(boxes);
                barrier.wait();
            }
        })
    };
    for _ in 0..reps {
        let mut mine: Vec<Box<T>> = Vec::with_capacity(n / 2 + 1);
        let mut theirs: Vec<Box<T>> = Vec::with_capacity(n / 2 + 1);
        let mut batch = Batch::with_capacity(n);
        for i in 0..n as u64 {
            let b = if batched {
                batch.alloc([black_box(i); 8])
            } else {
                Box::new([black_box(i); 8])
            };
            if i % 2 == 0 {
                mine.push(b);
            } else {
                theirs.push(b);
            }
        }
        drop(batch);
        to_worker.send(theirs).unwrap();
        barrier.wait();
        drop(mine);
        barrier.wait();
    }
    drop(to_worker);
    worker.join().unwrap();
}
