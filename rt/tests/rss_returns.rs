//! Memory goes back to the operating system: after a large structure of
//! batched boxes is dropped, the process's resident memory falls to within
//! the resident pool's limit of where it started.

#![cfg(all(target_os = "linux", not(miri)))]

use batch_alloc_rt::{stats, Batch, BatchAlloc};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib * 1024
}

#[test]
fn dropping_a_large_structure_returns_its_memory() {
    const BOXES: usize = 2_000_000; // 256 MiB of 128-byte slots
    let start = resident_bytes();
    let mut boxes: Vec<Box<[u64; 16]>> = Vec::with_capacity(BOXES);
    {
        let mut batch = Batch::with_capacity(BOXES);
        for i in 0..BOXES as u64 {
            boxes.push(batch.alloc([i; 16]));
        }
    }
    let full = resident_bytes();
    assert!(
        full - start > 200 << 20,
        "the structure is resident: {start} -> {full}"
    );
    drop(boxes);
    let after = resident_bytes();
    let s = stats();
    println!(
        "resident: start {} MiB, full {} MiB, after drop {} MiB; cached {} MiB",
        start >> 20,
        full >> 20,
        after >> 20,
        s.cached_bytes >> 20
    );
    // What stays is the pool's resident frames (at most 32 MiB) and a few
    // spans kept for reuse, not the structure.
    assert!(
        after < start + (40 << 20),
        "memory not returned: {start} -> {full} -> {after}"
    );
}
