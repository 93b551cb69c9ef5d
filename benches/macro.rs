//! `#[batch_alloc]` functions against the same functions without the
//! attribute, under `BatchAlloc<System>`, in one process (a batch scope per
//! loop nest, capturing).
//!
//! `cargo bench -p batch-alloc-benches --bench macro` (add `-- --quick` for a
//! fast pass). Every group has a `plain` and a `scoped` member built from one
//! source by the `twins!` macro below, so they differ by the attribute
//! alone. Each iteration allocates and then drops everything it allocated.
//! Throughput is in boxes, so criterion's time per element is the cost of one
//! box.
//!
//! The one- and two-iteration loops cost a few tens of nanoseconds, and on a
//! shared machine separate measurements a few seconds apart differed by ±40%
//! here. Their members are therefore measured in alternation ([`group`] with
//! a chunk size): while one is timed, the other runs between its chunks of
//! 64 calls, so both see the same machine. A full run (no filter) also
//! prints, for them, the median ratio over 4000 adjacent pairs of chunks,
//! the steadiest figure this machine gives. Larger cases are measured one
//! after the other as usual: alternating them would have each start with
//! caches the other just filled.

// The functions box the way the code the attribute is for does.
#![allow(clippy::vec_box, clippy::while_let_on_iterator)]

use std::hint::black_box;

use std::time::{Duration, Instant};

use batch_alloc::BatchAlloc;
use criterion::{BenchmarkId, Criterion, Throughput};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

/// A 64-byte record.
#[derive(Clone, Copy, Debug)]
pub struct Record {
    pub id: u64,
    pub fields: [u64; 7],
}

impl Record {
    #[inline]
    pub fn new(id: u64) -> Record {
        Record {
            id,
            fields: [id; 7],
        }
    }
}

const _: () = assert!(std::mem::size_of::<Record>() == 64);

pub struct Node {
    pub value: u64,
    pub next: Option<Box<Node>>,
}

/// Drops a list without recursing once per node.
fn drop_list(mut head: Option<Box<Node>>) {
    while let Some(mut node) = head {
        head = node.next.take();
    }
}

pub struct Leaf(pub u64);

pub struct Tree {
    pub id: u64,
    pub left: Box<Leaf>,
    pub right: Box<[u64; 4]>,
}

/// Emits every function twice: in `plain` as written, in `scoped` under
/// `#[batch_alloc]`.
macro_rules! twins {
    ($($item:item)*) => {
        mod plain {
            use super::*;
            $($item)*
        }
        mod scoped {
            use super::*;
            $(#[batch_alloc::batch_alloc] $item)*
        }
    };
}

twins! {
    pub fn records(n: usize, out: &mut Vec<Box<Record>>) {
        for i in 0..n as u64 {
            out.push(Box::new(Record::new(i)));
        }
    }

    pub fn linked_list(n: u64) -> Option<Box<Node>> {
        let mut values = 0..n;
        let mut head = None;
        while let Some(value) = values.next() {
            head = Some(Box::new(Node { value, next: head }));
        }
        head
    }

    pub fn trees(n: usize, out: &mut Vec<Box<Tree>>) {
        for i in 0..n as u64 {
            out.push(Box::new(Tree {
                id: i,
                left: Box::new(Leaf(i)),
                right: Box::new([i; 4]),
            }));
        }
    }

    pub fn filtered(input: &[Record], out: &mut Vec<Box<Record>>) {
        for record in input.iter().filter(|r| r.id % 2 == 0) {
            out.push(Box::new(*record));
        }
    }

    pub fn nested(outer: usize, inner: usize, out: &mut Vec<Box<Record>>) {
        for i in 0..outer as u64 {
            for j in 0..inner as u64 {
                out.push(Box::new(Record::new(i ^ j)));
            }
        }
    }
}

/// One member of a group: a name and one iteration of its work.
type Way<'a> = (&'a str, &'a mut dyn FnMut());

/// Benchmarks every member of `ways`. With `Some(chunk)`, each is timed in
/// chunks of `chunk` iterations with the other members run (untimed) between
/// its chunks; with `None`, one after the other.
fn group(
    c: &mut Criterion,
    group: &str,
    label: &str,
    boxes: u64,
    chunk: Option<u64>,
    ways: &mut [Way],
) {
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(boxes));
    for timed in 0..ways.len() {
        let name = ways[timed].0;
        let Some(chunk) = chunk else {
            let work = &mut ways[timed].1;
            g.bench_function(BenchmarkId::new(name, label), |b| b.iter(&mut *work));
            continue;
        };
        g.bench_function(BenchmarkId::new(name, label), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut left = iters;
                while left > 0 {
                    let n = left.min(chunk);
                    for (i, (_, other)) in ways.iter_mut().enumerate() {
                        if i != timed {
                            for _ in 0..n {
                                other();
                            }
                        }
                    }
                    let work = &mut ways[timed].1;
                    let start = Instant::now();
                    for _ in 0..n {
                        work();
                    }
                    total += start.elapsed();
                    left -= n;
                }
                total
            })
        });
    }
    g.finish();
}

/// `f(n, out)` then dropping what it pushed: one iteration.
fn filling<'a, T>(
    f: fn(usize, &mut Vec<Box<T>>),
    n: usize,
    out: &'a mut Vec<Box<T>>,
) -> impl FnMut() + 'a {
    move || {
        f(black_box(n), out);
        black_box(&mut *out).clear();
    }
}

fn bench_records(c: &mut Criterion) {
    for n in [1usize, 2, 1024, 65536] {
        let (mut a, mut b) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let chunk = if n <= 2 { Some(64) } else { None };
        group(
            c,
            "records",
            &n.to_string(),
            n as u64,
            chunk,
            &mut [
                ("plain", &mut filling(plain::records, n, &mut a)),
                ("scoped", &mut filling(scoped::records, n, &mut b)),
            ],
        );
    }
}

fn bench_linked_list(c: &mut Criterion) {
    let n = 1024u64;
    group(
        c,
        "linked_list",
        &n.to_string(),
        n,
        None,
        &mut [
            ("plain", &mut || {
                drop_list(black_box(plain::linked_list(black_box(n))))
            }),
            ("scoped", &mut || {
                drop_list(black_box(scoped::linked_list(black_box(n))))
            }),
        ],
    );
}

fn bench_trees(c: &mut Criterion) {
    let n = 1024usize;
    let (mut a, mut b) = (Vec::with_capacity(n), Vec::with_capacity(n));
    group(
        c,
        "trees",
        &n.to_string(),
        3 * n as u64,
        None,
        &mut [
            ("plain", &mut filling(plain::trees, n, &mut a)),
            ("scoped", &mut filling(scoped::trees, n, &mut b)),
        ],
    );
}

fn bench_filtered(c: &mut Criterion) {
    let input: Vec<Record> = (0..2048).map(Record::new).collect();
    let ways: [(&str, Filtered); 2] = [("plain", plain::filtered), ("scoped", scoped::filtered)];
    let mut outs: Vec<Vec<Box<Record>>> = ways.iter().map(|_| Vec::with_capacity(1024)).collect();
    let mut closures: Vec<Box<dyn FnMut() + '_>> = ways
        .iter()
        .zip(outs.iter_mut())
        .map(|(&(_, f), out)| {
            let input = &input;
            Box::new(move || {
                f(black_box(input), out);
                black_box(&mut *out).clear();
            }) as Box<dyn FnMut()>
        })
        .collect();
    group(
        c,
        "filtered",
        "1024_of_2048",
        1024,
        None,
        &mut members(&ways, &mut closures),
    );
}

type Filtered = fn(&[Record], &mut Vec<Box<Record>>);

/// The members of a group: each way's name with its closure.
fn members<'a, F>(
    ways: &[(&'a str, F)],
    closures: &'a mut [Box<dyn FnMut() + '_>],
) -> Vec<Way<'a>> {
    ways.iter()
        .zip(closures.iter_mut())
        .map(|(&(way, _), f)| (way, &mut **f as &mut dyn FnMut()))
        .collect()
}

type Nested = fn(usize, usize, &mut Vec<Box<Record>>);

/// `outer` x `inner` boxes, as written and under the attribute.
fn nested_group(c: &mut Criterion, name: &str, outer: usize, inner: usize) {
    let ways: [(&str, Nested); 2] = [("plain", plain::nested), ("scoped", scoped::nested)];
    let n = outer * inner;
    let mut outs: Vec<Vec<Box<Record>>> = ways.iter().map(|_| Vec::with_capacity(n)).collect();
    let mut closures: Vec<Box<dyn FnMut() + '_>> = ways
        .iter()
        .zip(outs.iter_mut())
        .map(|(&(_, f), out)| {
            Box::new(move || {
                f(black_box(outer), black_box(inner), out);
                black_box(&mut *out).clear();
            }) as Box<dyn FnMut()>
        })
        .collect();
    group(
        c,
        name,
        &format!("{outer}x{inner}"),
        n as u64,
        None,
        &mut members(&ways, &mut closures),
    );
}

fn bench_nested(c: &mut Criterion) {
    nested_group(c, "nested_short_inner", 10_000, 3);
    nested_group(c, "nested_long_inner", 10, 3_000);
}

/// Median over many adjacent pairs of chunks of `attributed`'s time over
/// `plain`'s: the figure for the short loops, whose few nanoseconds of
/// difference drown in the machine's noise between separate measurements.
fn chunk_ratio(name: &str, plain: &mut dyn FnMut(), attributed: &mut dyn FnMut()) {
    const CHUNK: u32 = 64;
    const PAIRS: usize = 4000;
    let time = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        for _ in 0..CHUNK {
            f();
        }
        start.elapsed().as_secs_f64()
    };
    let mut ratios: Vec<f64> = (0..PAIRS)
        .map(|i| {
            // Alternate which goes first, so neither always runs warm.
            if i % 2 == 0 {
                let p = time(plain);
                time(attributed) / p
            } else {
                let b = time(attributed);
                b / time(plain)
            }
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q) as usize];
    println!(
        "{name}: attributed/plain time, median of {PAIRS} adjacent chunk pairs: {:.3} (quartiles {:.3}..{:.3})",
        at(0.5),
        at(0.25),
        at(0.75)
    );
}

fn short_loop_ratios() {
    for n in [1usize, 2] {
        let (mut a, mut b) = (Vec::with_capacity(n), Vec::with_capacity(n));
        chunk_ratio(
            &format!("records/{n}, scoped"),
            &mut filling(plain::records, n, &mut a),
            &mut filling(scoped::records, n, &mut b),
        );
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench_records(&mut c);
    bench_linked_list(&mut c);
    bench_trees(&mut c);
    bench_filtered(&mut c);
    bench_nested(&mut c);
    c.final_summary();
    // With no filter, or with the filter `short_loop_ratios` alone (which
    // selects no criterion benchmark); never under `cargo test`.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let wanted = filters.is_empty() || filters.iter().all(|f| *f == "short_loop_ratios");
    if wanted && args.iter().any(|a| a == "--bench") {
        short_loop_ratios();
    }
}
