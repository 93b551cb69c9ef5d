//! The allocation-policy study: reserve versus exact refills,
//! size classes before and after the growth rule, and the page and span
//! configuration this binary was built with. Prints markdown, in the layout
//! of the Go and Rust changes these policies come from (a row per metric
//! with old, new and delta).
//!
//! The study reads switches that production builds leave out, behind a
//! `--cfg` (not a cargo feature, which any crate of a dependency graph
//! could turn on for the whole process): built without it, the bench only
//! says so.
//!
//! ```text
//! RUSTFLAGS="--cfg batch_alloc_policy_study" \
//!     cargo bench -p batch-alloc-benches --bench policy -- [reserve|classes|spans|all]
//! python3 benches/run.py policy   # every section, for every page/span build, into docs/policy-results.md
//! ```
//!
//! The page and span builds add `--cfg batch_alloc_page_4k` and
//! `--cfg batch_alloc_small_spans` to the same RUSTFLAGS.

// Without the cfg, `main` prints how to build the study and runs none of it.
#![cfg_attr(not(batch_alloc_policy_study), allow(dead_code))]

use std::hint::black_box;
use std::thread;
use std::time::Instant;

use batch_alloc::{stats, Batch, BatchAlloc};
#[cfg(batch_alloc_policy_study)]
use batch_alloc_rt::testing::{class_candidates, set_exact_refills, size_classes_before_growth};
use batch_alloc_rt::testing::{limits, size_classes};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

/// What one loop of `n` allocations cost.
#[derive(Clone, Copy, Default)]
struct LoopCost {
    refills: u64,
    /// Median nanoseconds per allocation, allocate then drop.
    ns_per_item: f64,
}

/// Runs `f` on a fresh thread, so that it starts with an empty heap and the
/// counts do not depend on what ran before.
fn on_fresh_thread<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    thread::spawn(f).join().unwrap()
}

fn measure_loop<T: Send + 'static>(n: usize, make: fn(u64) -> T, hinted: bool) -> LoopCost {
    let mut cost = on_fresh_thread(move || {
        let before = stats();
        let mut kept = Vec::with_capacity(n);
        let mut batch = if hinted {
            Batch::with_capacity(n)
        } else {
            Batch::new()
        };
        for i in 0..n as u64 {
            kept.push(batch.alloc(make(i)));
        }
        let at_end = stats();
        drop((batch, kept));
        LoopCost {
            refills: at_end.reserve_calls - before.reserve_calls,
            ns_per_item: 0.0,
        }
    });
    let reps = (2_000_000 / n).clamp(5, 200);
    let mut times: Vec<f64> = (0..7)
        .map(|_| {
            let mut kept = Vec::with_capacity(n);
            let start = Instant::now();
            for _ in 0..reps {
                let mut batch = Batch::new();
                for i in 0..n as u64 {
                    kept.push(batch.alloc(make(black_box(i))));
                }
                drop(batch);
                kept.clear();
            }
            start.elapsed().as_nanos() as f64 / (reps * n) as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    cost.ns_per_item = times[times.len() / 2];
    cost
}

fn delta(old: f64, new: f64) -> String {
    if old == 0.0 {
        if new == 0.0 {
            "~".into()
        } else {
            "+inf".into()
        }
    } else {
        format!("{:+.1}%", (new - old) / old * 100.0)
    }
}

/// Boxes `per_loop` values in each of `loops` loops in a row, keeping them,
/// with exact or rest-of-span refills. Returns the refills, and the slots
/// reserved but unused when the loops end (summed over loops).
#[cfg(batch_alloc_policy_study)]
fn refills_for(loops: usize, per_loop: usize, hinted: bool, exact: bool) -> (u64, u64) {
    on_fresh_thread(move || {
        set_exact_refills(exact);
        let before = stats();
        let mut unused = 0;
        let mut kept: Vec<Box<[u64; 8]>> = Vec::with_capacity(loops * per_loop);
        for _ in 0..loops {
            let mut batch = if hinted {
                Batch::with_capacity(per_loop)
            } else {
                Batch::new()
            };
            for i in 0..per_loop as u64 {
                kept.push(batch.alloc([i; 8]));
            }
            let at_end = stats().batched_boxes;
            drop(batch);
            unused += at_end - stats().batched_boxes;
        }
        let refills = stats().reserve_calls - before.reserve_calls;
        set_exact_refills(false);
        (refills, unused)
    })
}

#[cfg(batch_alloc_policy_study)]
fn reserve_section() {
    println!("## Reserve versus exact refills\n");
    println!(
        "A refill asks for what the loop still needs. \"Exact\" takes just that; \"reserve\" \
         (the default) takes the rest of the span when less than twice the request would \
         remain. T = 64 B; 100 loops in a row, boxes kept.\n"
    );
    println!(
        "| loop | refills, old (exact) | refills, new (reserve) | delta | \
         unused at loop end, old | unused at loop end, new |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (hinted, per_loop) in [
        (true, 100),
        (true, 700),
        (true, 1000),
        (true, 3000),
        (false, 10),
        (false, 100),
        (false, 1000),
        (false, 5000),
    ] {
        let (exact, exact_unused) = refills_for(100, per_loop, hinted, true);
        let (reserve, reserve_unused) = refills_for(100, per_loop, hinted, false);
        let kind = if hinted { "hinted" } else { "no hint" };
        println!(
            "| {per_loop} items, {kind} | {exact} | {reserve} | {} | {exact_unused} | {reserve_unused} |",
            delta(exact as f64, reserve as f64)
        );
    }
    println!();
}

#[cfg(batch_alloc_policy_study)]
fn classes_section() {
    println!("## Size classes before and after the growth rule\n");
    println!(
        "Pages of {} KiB; spans of at least {} page(s). Before: each candidate size with \
         the fewest pages whose tail waste is at most 1/8. After: each class grown to the \
         largest size that keeps the same objects per span.\n",
        limits::PAGE_SIZE / 1024,
        limits::MIN_SPAN_PAGES
    );
    let before = size_classes_before_growth();
    let after = size_classes();
    println!("| class | size before | size after | pages | objects | tail waste before | tail waste after |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for (i, (class, candidate)) in after.iter().zip(class_candidates()).enumerate() {
        let old = before
            .iter()
            .find(|c| c.size == candidate)
            .expect("a class comes from a candidate");
        println!(
            "| {i} | {} | {} | {} | {} | {} | {} |",
            old.size,
            class.size,
            class.pages,
            class.slots,
            old.tail_waste(),
            class.tail_waste()
        );
    }
    let waste_before: usize = before.iter().map(|c| c.tail_waste()).sum();
    let waste_after: usize = after.iter().map(|c| c.tail_waste()).sum();
    println!(
        "\n| metric | old (before) | new (after) | delta |\n|---|---:|---:|---:|\n\
         | classes | {} | {} | {} |\n| total tail waste, bytes | {waste_before} | {waste_after} | {} |\n",
        before.len(),
        after.len(),
        delta(before.len() as f64, after.len() as f64),
        delta(waste_before as f64, waste_after as f64)
    );
}

fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// One value of each candidate size, from its own batch, kept alive: the
/// worst case for memory held in partly used spans (one object from each
/// class per thread).
fn one_of_each_class() -> (u64, u64) {
    macro_rules! one_each {
        ($($n:literal)*) => {
            vec![$(Box::new(Batch::<[u8; $n]>::with_capacity(3).alloc([1; $n])) as Box<dyn Send>),*]
        };
    }
    on_fresh_thread(|| {
        let before = (stats().span_bytes, resident_kib());
        let kept: Vec<Box<dyn Send>> = one_each!(8 16 24 32 48 64 80 96 112 128 144 160 176 192 208 224 240 256 288 320
            352 384 416 448 480 512 576 640 704 768 896 1024 1152 1280 1408 1536 1792 2048
            2304 2688 3072 3200 3456 4096);
        let after = (stats().span_bytes, resident_kib());
        drop(kept);
        (after.0 - before.0, after.1.saturating_sub(before.1))
    })
}

fn spans_section() {
    let (held, resident) = one_of_each_class();
    let classes = size_classes();
    let mean_pages = classes.iter().map(|c| c.pages as f64).sum::<f64>() / classes.len() as f64;
    let cost = measure_loop(1024, |i| [i; 8], true);
    let big = measure_loop(100_000, |i| [i; 8], true);
    let big_unhinted = measure_loop(100_000, |i| [i; 8], false);
    println!("## This build's pages and spans\n");
    println!("| metric | value |\n|---|---:|");
    println!("| page | {} KiB |", limits::PAGE_SIZE / 1024);
    println!("| fewest pages per span | {} |", limits::MIN_SPAN_PAGES);
    println!("| mean pages per span over classes | {mean_pages:.2} |");
    println!(
        "| metadata per MiB of spans | {} bytes |",
        (1 << 20) / limits::FRAME_SIZE * limits::SPAN_METADATA_BYTES
    );
    println!(
        "| one object of each class on a thread: span KiB held | {} |",
        held / 1024
    );
    println!("| one object of each class on a thread: resident KiB added | {resident} |");
    println!("| 64 B x 100,000 kept, hinted: refills | {} |", big.refills);
    println!(
        "| 64 B x 100,000 kept, no hint: refills | {} |",
        big_unhinted.refills
    );
    println!(
        "| 64 B x 1024, allocate then drop, ns per item | {:.2} |",
        cost.ns_per_item
    );
    println!(
        "| total tail waste over classes, bytes | {} |\n",
        classes.iter().map(|c| c.tail_waste()).sum::<usize>()
    );
}

#[cfg(not(batch_alloc_policy_study))]
fn main() {
    eprintln!(
        "The allocation-policy study reads switches production builds leave out: run it \
         with\n  python3 benches/run.py policy\n(docs/policy.md)."
    );
}

#[cfg(batch_alloc_policy_study)]
fn main() {
    thread::spawn(|| {}).join().unwrap();
    // `cargo bench` passes `--bench` first.
    let section = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .unwrap_or_else(|| "all".into());
    match section.as_str() {
        "reserve" => reserve_section(),
        "classes" => classes_section(),
        "spans" => spans_section(),
        "all" => {
            reserve_section();
            classes_section();
            spans_section();
        }
        other => {
            eprintln!("unknown section {other:?}: reserve, classes, spans or all");
            std::process::exit(2);
        }
    }
}
