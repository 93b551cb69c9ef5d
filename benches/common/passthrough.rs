//! The same workload of plain allocations (none batched), for the two
//! pass-through bench binaries: one with `System`, one with
//! `BatchAlloc<System>`. Run them back to back and compare.

use std::hint::black_box;

use criterion::{Criterion, Throughput};

/// Mixed sizes, as a program's ordinary allocations would be.
pub fn run(allocator: &str) {
    std::thread::spawn(|| {}).join().unwrap();
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group(format!("passthrough/{allocator}"));
    group.throughput(Throughput::Elements(1024));
    group.bench_function("box_new_drop", |b| {
        let mut held: Vec<Box<[u64; 8]>> = Vec::with_capacity(1024);
        b.iter(|| {
            for i in 0..1024u64 {
                held.push(Box::new([black_box(i); 8]));
            }
            held.clear();
        })
    });
    group.bench_function("vec_grow", |b| {
        b.iter(|| {
            for n in 0..1024u64 {
                let mut v: Vec<u64> = Vec::new();
                for i in 0..(n % 24) {
                    v.push(black_box(i));
                }
                black_box(&v);
            }
        })
    });
    group.bench_function("string_format", |b| {
        b.iter(|| {
            for i in 0..1024u64 {
                black_box(format!("record-{i}"));
            }
        })
    });
    group.finish();
    c.final_summary();
}
