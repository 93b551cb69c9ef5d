//! Instructions per box on the allocator's paths, counted by gungraun
//! (callgrind): each case runs in a process of its own at two repetition
//! counts, the whole process counted (every thread: a cross-thread free is
//! the other thread's work); benches/report.py divides the difference by
//! the boxes added, which leaves out start-up and first refills.
//!
//! The bench binaries differ only by their global allocator:
//! `paths_batch_system` (`BatchAlloc<System>`, every case), `paths_system`, `paths_mimalloc`
//! and `paths_batch_mimalloc` (the cases with no scope open: what the
//! wrapper costs over the allocator it wraps). Run them with
//! `python3 benches/run.py paths`.

// Vectors of boxes are the workload; the binaries of the wrapper's cases
// alone use part of this module.
#![allow(clippy::vec_box, dead_code)]

use std::hint::black_box;
use std::sync::mpsc;
use std::thread;

use batch_alloc::Batch;

/// 64 bytes, the size every case boxes.
pub type T = [u64; 8];

/// The process had a second thread before measuring, as every program
/// that frees across threads has: glibc's malloc takes a slower path from
/// then on, and a figure taken before it would flatter glibc.
pub fn spawned(n: usize, reps: usize) -> (usize, usize) {
    thread::spawn(|| {}).join().unwrap();
    (n, reps)
}

/// [`spawned`], for [`cross`] and [`shared`].
pub fn spawned_cross(
    batched: bool,
    heap: bool,
    n: usize,
    reps: usize,
) -> (bool, bool, usize, usize) {
    thread::spawn(|| {}).join().unwrap();
    (batched, heap, n, reps)
}

/// `reps` times: `n` boxes from one `Batch`, then dropped.
pub fn batch((n, reps): (usize, usize)) {
    let mut held: Vec<Box<T>> = Vec::with_capacity(n);
    for _ in 0..reps {
        {
            let mut batch = Batch::with_capacity(n);
            for i in 0..n as u64 {
                held.push(batch.alloc([black_box(i); 8]));
            }
        }
        black_box(&held);
        held.clear();
    }
}

/// `reps` times: `n` `Box::new`s (no scope open), then dropped.
pub fn box_new((n, reps): (usize, usize)) {
    let mut held: Vec<Box<T>> = Vec::with_capacity(n);
    for _ in 0..reps {
        for i in 0..n as u64 {
            held.push(Box::new([black_box(i); 8]));
        }
        black_box(&held);
        held.clear();
    }
}

/// `reps` times: the same loop under `#[batch_alloc]`: its boxes reach
/// the global allocator as written and the scope serves them.
pub fn scoped((n, reps): (usize, usize)) {
    let mut held: Vec<Box<T>> = Vec::with_capacity(n);
    for _ in 0..reps {
        scoped::fill(n, &mut held);
        black_box(&held);
        held.clear();
    }
}

/// `reps` times: the loop of [`box_new`] as written, in a function of its
/// own: [`scoped`]'s twin.
pub fn plain((n, reps): (usize, usize)) {
    let mut held: Vec<Box<T>> = Vec::with_capacity(n);
    for _ in 0..reps {
        plain::fill(n, &mut held);
        black_box(&held);
        held.clear();
    }
}

/// `reps` times: `n` values pushed into one `Vec::with_capacity(n)`, the
/// one-allocation limit.
pub fn vec((n, reps): (usize, usize)) {
    for _ in 0..reps {
        let mut all: Vec<T> = Vec::with_capacity(n);
        for i in 0..n as u64 {
            all.push([black_box(i); 8]);
        }
        black_box(&all);
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

/// `reps` times: `n` boxes (from a `Batch`, or `Box::new`) made here and
/// dropped on a worker thread that never allocated from a batch (it gets a
/// heap at its first free and frees through its outbox), or (`heap`) one
/// that made its heap with a batch first.
pub fn cross((batched, heap, n, reps): (bool, bool, usize, usize)) {
    let (to_worker, inbox) = mpsc::channel::<Vec<Box<T>>>();
    let (back, returned) = mpsc::channel::<Vec<Box<T>>>();
    let worker = thread::spawn(move || {
        if heap {
            drop(black_box(Batch::with_capacity(8).alloc([0; 8])));
        }
        for mut boxes in inbox {
            boxes.clear();
            back.send(boxes).unwrap();
        }
    });
    let mut held: Vec<Box<T>> = Vec::with_capacity(n);
    for _ in 0..reps {
        match batched {
            true => {
                let mut batch = Batch::with_capacity(n);
                for i in 0..n as u64 {
                    held.push(batch.alloc([black_box(i); 8]));
                }
            }
            false => plain::fill(n, &mut held),
        }
        to_worker.send(held).unwrap();
        held = returned.recv().unwrap();
    }
    drop(to_worker);
    worker.join().unwrap();
}

/// `reps` times: `n` boxes made here, then every other one dropped here
/// while a worker drops the rest at the same time: the owner's frees and
/// remote frees into the same spans at once.
pub fn shared((batched, n, reps): (bool, usize, usize)) {
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    let (to_worker, inbox) = mpsc::channel::<Vec<Box<T>>>();
    let worker = {
        let barrier = barrier.clone();
        thread::spawn(move || {
            for boxes in inbox {
                barrier.wait();
                drop(boxes);
                barrier.wait();
            }
        })
    };
    for _ in 0..reps {
        let (mut mine, mut theirs) = (Vec::with_capacity(n / 2 + 1), Vec::with_capacity(n / 2 + 1));
        let mut batch = Batch::with_capacity(n);
        for i in 0..n as u64 {
            let b = match batched {
                true => batch.alloc([black_box(i); 8]),
                false => Box::new([black_box(i); 8]),
            };
            match i % 2 {
                0 => mine.push(b),
                _ => theirs.push(b),
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

/// `reps` times: 1,024 vectors grown by pushes to up to 23 elements
/// (allocations, reallocations and frees of several sizes), then 1,024
/// strings: small allocations and frees with no scope open.
pub fn small_allocs((n, reps): (usize, usize)) {
    for _ in 0..reps {
        let mut vecs: Vec<Vec<u64>> = Vec::with_capacity(n);
        for i in 0..n {
            let mut v = Vec::new();
            for j in 0..(i % 23) as u64 {
                v.push(black_box(j));
            }
            vecs.push(v);
        }
        black_box(&vecs);
        drop(vecs);
        let strings: Vec<String> = (0..n).map(|i| black_box(i).to_string()).collect();
        black_box(&strings);
    }
}

/// A tree walked by recursion inside `scope()`, as written and annotated:
/// what an annotated call costs inside an open scope (every call but the
/// first joins it). Each walk of `n` nodes makes `2n + 1` calls.
pub mod calls {
    use std::hint::black_box;

    pub struct Node {
        value: u64,
        left: Option<Box<Node>>,
        right: Option<Box<Node>>,
    }

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

    /// `form`: 0 a free function as written, 1 annotated alone, 2 a method
    /// as written, 3 a method of an annotated impl.
    pub fn walk((form, n, reps): (u8, usize, usize)) {
        let root = tree(n);
        let mut total = 0;
        batch_alloc::scope(|| {
            for _ in 0..reps {
                let weight = black_box(2);
                total += match form {
                    0 => sum_plain(black_box(&root)),
                    1 => sum_alone(black_box(&root)),
                    2 => PlainWalker { weight }.sum(black_box(&root)),
                    _ => Walker { weight }.sum(black_box(&root)),
                };
            }
        });
        black_box(total);
    }

    macro_rules! walker {
        ($name:ident, $($attr:tt)*) => {
            struct $name {
                weight: u64,
            }

            $($attr)*
            impl $name {
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
        };
    }
    walker!(PlainWalker,);
    walker!(Walker, #[batch_alloc::batch_alloc]);

    macro_rules! summer {
        ($name:ident, $($attr:tt)*) => {
            $($attr)*
            #[inline(never)]
            fn $name(node: &Option<Box<Node>>) -> u64 {
                match node {
                    None => 0,
                    Some(node) => {
                        node.value + $name(black_box(&node.left)) + $name(black_box(&node.right))
                    }
                }
            }
        };
    }
    summer!(sum_plain,);
    summer!(sum_alone, #[batch_alloc::batch_alloc]);
}

/// The benches of one binary: `wrapper` (no scope open: `Box::new`, small
/// allocations) in every binary; with `all`, the batch, scope, cross-thread
/// and call cases too. Ids end in the repetition count; the pairs differ
/// by it alone.
/// A case at every N of the table, each at two repetition counts that add
/// about 100,000 boxes.
macro_rules! every_n {
    ($case:ident) => {
        #[library_benchmark]
        #[benches::n1(args = [(1, 100_000), (1, 200_000)], setup = paths::spawned)]
        #[benches::n2(args = [(2, 50_000), (2, 100_000)], setup = paths::spawned)]
        #[benches::n8(args = [(8, 12_500), (8, 25_000)], setup = paths::spawned)]
        #[benches::n64(args = [(64, 1_600), (64, 3_200)], setup = paths::spawned)]
        #[benches::n1024(args = [(1024, 100), (1024, 200)], setup = paths::spawned)]
        #[benches::n65536(args = [(65536, 2), (65536, 4)], setup = paths::spawned)]
        fn $case(args: (usize, usize)) {
            paths::$case(args)
        }
    };
}

macro_rules! paths_main {
    ($($all:ident)?) => {
        use gungraun::{
            library_benchmark, library_benchmark_group, main, Callgrind, EntryPoint,
            LibraryBenchmarkConfig,
        };

        every_n!(box_new);

        #[library_benchmark]
        #[benches::n1024(args = [(1024, 100), (1024, 200)], setup = paths::spawned)]
        fn small_allocs(args: (usize, usize)) {
            paths::small_allocs(args)
        }

        library_benchmark_group!(name = wrapper; benchmarks = box_new, small_allocs);

        $(
        every_n!(batch);

        every_n!(scoped);

        every_n!(plain);

        every_n!(vec);

        #[library_benchmark]
        #[benches::batch(args = [(true, false, 65536, 2), (true, false, 65536, 4)], setup = paths::spawned_cross)]
        #[benches::batch_heap(args = [(true, true, 65536, 2), (true, true, 65536, 4)], setup = paths::spawned_cross)]
        #[benches::box_new(args = [(false, false, 65536, 2), (false, false, 65536, 4)], setup = paths::spawned_cross)]
        fn cross(args: (bool, bool, usize, usize)) {
            paths::cross(args)
        }

        #[library_benchmark]
        #[benches::batch(args = [(true, false, 65536, 2), (true, false, 65536, 4)], setup = paths::spawned_cross)]
        #[benches::box_new(args = [(false, false, 65536, 2), (false, false, 65536, 4)], setup = paths::spawned_cross)]
        fn shared(args: (bool, bool, usize, usize)) {
            paths::shared((args.0, args.2, args.3))
        }

        #[library_benchmark]
        #[benches::plain(args = [(0, 1000, 10), (0, 1000, 20)])]
        #[benches::alone(args = [(1, 1000, 10), (1, 1000, 20)])]
        #[benches::plain_method(args = [(2, 1000, 10), (2, 1000, 20)])]
        #[benches::method(args = [(3, 1000, 10), (3, 1000, 20)])]
        fn calls(form: u8, n: usize, reps: usize) {
            paths::calls::walk((form, n, reps))
        }

        library_benchmark_group!(name = $all; benchmarks = batch, scoped, plain, vec, cross, shared, calls);
        )?

        main!(
            // The whole process, every thread: the difference of two
            // repetition counts is the cost of the repetitions added.
            config = LibraryBenchmarkConfig::default()
                .tool(Callgrind::default().entry_point(EntryPoint::None));
            library_benchmark_groups = wrapper $(, $all)?
        );
    };
}
