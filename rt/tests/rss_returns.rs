//! Memory goes back to the operating system: after a large structure of
//! batched boxes is dropped, the process's resident memory falls to within
//! the resident pool's limit of where it started, by itself once the freed
//! frames have waited the decay delay unused and the program goes on
//! working, or at once on `trim()`.

#![cfg(all(target_os = "linux", not(miri)))]

use std::time::Duration;

use batch_alloc_rt::{stats, trim, Batch, BatchAlloc};

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

/// Builds and drops 256 MiB of batched boxes; returns the resident bytes
/// before and with the structure.
fn build_and_drop() -> (u64, u64) {
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
    (start, full)
}

/// Work that takes frames and gives them back, as a running program does.
fn keep_working() {
    for _ in 0..4 {
        let mut batch = Batch::with_capacity(4_000);
        let boxes: Vec<Box<[u64; 64]>> = (0..4_000).map(|i| batch.alloc([i; 64])).collect();
        drop(batch);
        drop(boxes);
    }
}

#[test]
fn dropping_a_large_structure_returns_its_memory() {
    let (start, full) = build_and_drop();
    // Reused at once, the frames would still be there; left alone past the
    // decay delay, they go back at the program's next frame traffic.
    std::thread::sleep(Duration::from_millis(300));
    keep_working();
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
    let (start, full) = build_and_drop();
    trim();
    let after = resident_bytes();
    assert!(
        after < start + (8 << 20),
        "trim returned nothing: {start} -> {full} -> {after}"
    );
    assert_eq!(stats().cached_bytes, 0, "trim leaves nothing cached");
}
