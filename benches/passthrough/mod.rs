//! The same workload of plain allocations (none batched), for the two
//! pass-through bench binaries: one with `System`, one with
//! `BatchAlloc<System>`. Run them back to back and compare, in time
//! (criterion) or in instructions:
//!
//! ```text
//! PASSTHROUGH_REPS=100 valgrind --tool=callgrind target/release/deps/passthrough_system-*
//! ```
//!
//! (the difference between two repetition counts, divided by the added
//! operations, is the cost per operation).

// Vectors of boxes are the workload.
#![allow(clippy::vec_box)]

use std::hint::black_box;

use criterion::{Criterion, Throughput};

/// Boxes 1024 values and frees them.
fn box_new_drop(held: &mut Vec<Box<[u64; 8]>>) {
    for i in 0..1024u64 {
        held.push(Box::new([black_box(i); 8]));
    }
    held.clear();
}

/// 1024 vectors grown by pushes to up to 23 elements: allocations,
/// reallocations and frees of several sizes.
fn vec_grow() {
    for n in 0..1024u64 {
        let mut v: Vec<u64> = Vec::new();
        for i in 0..(n % 24) {
            v.push(black_box(i));
        }
        black_box(&v);
    }
}

/// 1024 formatted strings.
fn string_format() {
    for i in 0..1024u64 {
        black_box(format!("record-{i}"));
    }
}

/// Mixed sizes, as a program's ordinary allocations would be.
pub fn run(allocator: &str) {
    std::thread::spawn(|| {}).join().unwrap();
    if let Some(reps) = std::env::var("PASSTHROUGH_REPS")
        .ok()
        .and_then(|r| r.parse::<usize>().ok())
    {
        let mut held = Vec::with_capacity(1024);
        for _ in 0..reps {
            box_new_drop(&mut held);
            vec_grow();
            string_format();
        }
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group(format!("passthrough/{allocator}"));
    group.throughput(Throughput::Elements(1024));
    group.bench_function("box_new_drop", |b| {
        let mut held: Vec<Box<[u64; 8]>> = Vec::with_capacity(1024);
        b.iter(|| box_new_drop(&mut held))
    });
    group.bench_function("vec_grow", |b| b.iter(vec_grow));
    group.bench_function("string_format", |b| b.iter(string_format));
    group.finish();
    c.final_summary();
}
