//! Memory goes back to the operating system, as docs/runtime.md ("When
//! memory goes back") promises: after a large structure of batched boxes
//! is dropped, the process's resident memory falls to within the resident
//! pool's limit of where it started, by itself at the program's first
//! event (a refill, a large block, a frame given back) once the freed
//! frames have waited a second unused, or at once on `trim()`; the frames
//! of freed large blocks go back at the next event 100 ms later. And it
//! does not go back when the program is about to use it again: rebuilding
//! the structure after a pause shorter than the delay reuses the resident
//! frames, and so does a loop that builds and drops it, giving frames back
//! in between.

#![cfg(all(target_os = "linux", not(miri)))]
// Vectors of boxes are what the runtime serves.
#![allow(clippy::vec_box)]

use std::time::{Duration, Instant};

use batch_alloc_rt::{stats, trim, Batch};
use workloads::testing::serially;
use workloads::timing::status_kib;

fn resident_bytes() -> u64 {
    status_kib("VmRSS:").expect("/proc/self/status") * 1024
}

// 256 MiB in slots of 1 KiB: few enough boxes that even a debug build on a
// loaded machine drops them well inside the decay delay, so the pause, not
// the drop, is what the rebuild's reuse is measured across.
const BOXES: usize = 262_144;
type Item = [u64; 128];

/// Builds 256 MiB of batched boxes into `boxes` (whose own memory is the
/// inner allocator's, kept by the test) and drops them; returns the
/// resident bytes before and with the structure.
fn build_and_drop(boxes: &mut Vec<Box<Item>>) -> (u64, u64) {
    let start = resident_bytes();
    build(boxes);
    let full = resident_bytes();
    assert!(
        full - start > 200 << 20,
        "the structure is resident: {start} -> {full}"
    );
    boxes.clear();
    (start, full)
}

fn build(boxes: &mut Vec<Box<Item>>) {
    let mut batch = Batch::with_capacity(BOXES);
    for i in 0..BOXES as u64 {
        boxes.push(batch.alloc([i; 128]));
    }
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

/// Minor page faults of this process so far.
fn minor_faults() -> u64 {
    // SAFETY: all-zero bytes are a valid `rusage`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `getrusage` fills the struct it is given, for this process.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    assert_eq!(rc, 0);
    usage.ru_minflt as u64
}

/// Alone in the process while it runs ([`serially`], as every test of this
/// binary), so that nothing else moves the process's memory meanwhile.
#[test]
fn dropping_a_large_structure_returns_its_memory() {
    serially(|| {
        // The pointers' own 16 MB, faulted in now so that they count in every
        // reading's baseline.
        let mut boxes = Vec::with_capacity(BOXES);
        for slot in boxes.spare_capacity_mut() {
            *slot = std::mem::MaybeUninit::zeroed();
        }
        let faults = minor_faults();
        let (start, full) = build_and_drop(&mut boxes);
        let first = minor_faults() - faults;
        // Shorter than the frames' delay (a second): the frames past the
        // resident pool are still there, and the rebuild reuses them rather
        // than fault new memory in.
        std::thread::sleep(Duration::from_millis(300));
        let faults = minor_faults();
        build(&mut boxes);
        boxes.clear();
        let rebuilt = minor_faults() - faults;
        println!("minor faults: first build {first}, rebuilt after a pause {rebuilt}");
        assert!(
            rebuilt * 4 < first,
            "the rebuild faulted its pages in again: {first} then {rebuilt}"
        );

        // Reused at once, the frames would still be there; left alone for a
        // second, they go back at the program's next event.
        let dropped = Instant::now();
        let mut after = resident_bytes();
        while after >= start + (40 << 20) && dropped.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(200));
            keep_working();
            after = resident_bytes();
        }
        println!("back {} ms after the drop", dropped.elapsed().as_millis());
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
        let (start, full) = build_and_drop(&mut boxes);
        trim();
        let after = resident_bytes();
        assert!(
            after < start + (8 << 20),
            "trim returned nothing: {start} -> {full} -> {after}"
        );
        assert_eq!(stats().cached_bytes, 0, "trim leaves nothing cached");
    });
}

/// A loop that builds and drops more than the resident pool keeps its
/// frames across iterations for as long as it runs, although each
/// iteration pauses and gives frames back meanwhile (a parser's
/// temporaries do), which is when the decay runs. When frames went back
/// once they had waited 100 ms, every iteration faulted nearly all of its
/// memory in again.
#[test]
fn a_loop_keeps_its_frames_across_iterations() {
    serially(|| {
        let mut boxes = Vec::with_capacity(BOXES);
        for slot in boxes.spare_capacity_mut() {
            *slot = std::mem::MaybeUninit::zeroed();
        }
        let started = Instant::now();
        let mut faults = Vec::new();
        // Longer than twice the frames' delay, so that frames left from the
        // first iterations would have been due.
        while faults.len() < 4 || started.elapsed() < Duration::from_millis(2_500) {
            let before = minor_faults();
            build(&mut boxes);
            boxes.clear();
            faults.push(minor_faults() - before);
            std::thread::sleep(Duration::from_millis(150));
            keep_working();
        }
        // The other tests of this binary measure from a process that holds
        // no more than it needs.
        trim();
        println!("minor faults per iteration: {faults:?}");
        let first = faults[0];
        let last = faults[faults.len() - 1];
        assert!(
            last * 4 < first,
            "the loop faulted its pages in again: {faults:?}"
        );
    });
}

/// Frames a dropped structure left waiting go back even when the program
/// then makes only large blocks, which single frames cannot serve, and
/// gives no frame back: each large block made lets the decay run. (When
/// only a frame given back ran it, they stayed until `trim`.)
#[test]
fn waiting_frames_go_back_while_the_program_makes_only_large_blocks() {
    const BLOCK: usize = 1 << 20;
    serially(|| {
        let mut boxes = Vec::with_capacity(BOXES);
        for slot in boxes.spare_capacity_mut() {
            *slot = std::mem::MaybeUninit::zeroed();
        }
        let (start, full) = build_and_drop(&mut boxes);
        let dropped = Instant::now();
        // Kept, so that no freed block's extent serves the next one.
        let mut blocks: Vec<Vec<u8>> = Vec::new();
        let bound = |blocks: usize| start + (40 << 20) + (blocks * BLOCK) as u64;
        let mut after = resident_bytes();
        while after >= bound(blocks.len()) && dropped.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(200));
            blocks.push(batch_alloc_rt::scope(|| vec![1u8; BLOCK]));
            after = resident_bytes();
        }
        println!(
            "back {} ms after the drop, {} blocks made",
            dropped.elapsed().as_millis(),
            blocks.len()
        );
        let held = blocks.len();
        drop(blocks);
        trim();
        assert!(
            after < bound(held),
            "memory not returned: {start} -> {full} -> {after} with {held} blocks"
        );
    });
}

/// How long a frame past the resident pool waits unused before its memory
/// may go back (`DECAY_WINDOW_MILLIS`), and a margin for a loaded machine.
const WINDOW_AND_MARGIN: Duration = Duration::from_millis(1_000 + 400);

/// Panics unless the process holds at most the resident pool (32 MiB) and
/// a few spans more than at `start`, and the runtime caches at most the
/// resident pool. `what` names the case.
fn assert_back(start: u64, full: u64, what: &str) {
    let after = resident_bytes();
    let cached = stats().cached_bytes;
    println!(
        "{what}: resident start {} MiB, full {} MiB, after {} MiB; cached {} MiB",
        start >> 20,
        full >> 20,
        after >> 20,
        cached >> 20
    );
    assert!(
        after < start + (40 << 20) && cached <= 32 << 20,
        "{what}: memory not returned: resident {start} -> {full} -> {after}, {cached} bytes cached"
    );
}

/// A program that does nothing after a burst but one allocation, a window
/// later, gets the burst's memory back at that allocation: one box of a
/// new batch (the batch's first refill), or a large block in a scope. (The
/// windows rolled only when the decay ran, which took a frame given back
/// or a large block that grew the region: one such event after the burst
/// rolled the first window, and the memory stayed until a second one.)
#[test]
fn a_burst_goes_back_at_one_allocation_a_window_later() {
    type OneAllocation = fn() -> Box<dyn std::any::Any>;
    let cases: [(&str, OneAllocation); 2] = [
        ("one box of a new batch", || {
            Box::new(Batch::new().alloc(7u64))
        }),
        ("one large block", || {
            Box::new(batch_alloc_rt::scope(|| vec![1u8; 1 << 20]))
        }),
    ];
    serially(|| {
        for (what, one_allocation) in cases {
            let mut boxes = Vec::with_capacity(BOXES);
            for slot in boxes.spare_capacity_mut() {
                *slot = std::mem::MaybeUninit::zeroed();
            }
            let (start, full) = build_and_drop(&mut boxes);
            std::thread::sleep(WINDOW_AND_MARGIN);
            let kept = one_allocation();
            assert_back(start, full, what);
            drop(kept);
            trim();
        }
    });
}

/// The free extents that large blocks leave go back at the program's next
/// allocation after the delay (100 ms), here one box of a new batch. (Only
/// another large block's free let them decay: 160 MiB stayed cached
/// through seconds of frames coming and going.)
#[test]
fn freed_large_blocks_go_back_at_the_next_allocation() {
    const BLOCK: usize = 1 << 20;
    serially(|| {
        let start = resident_bytes();
        let blocks: Vec<Vec<u8>> =
            batch_alloc_rt::scope(|| (0..160).map(|_| vec![1u8; BLOCK]).collect());
        let full = resident_bytes();
        assert!(
            full - start > 150 << 20,
            "the blocks are resident: {start} -> {full}"
        );
        drop(blocks);
        std::thread::sleep(Duration::from_millis(300));
        let kept = Batch::new().alloc(7u64);
        assert_back(start, full, "160 large blocks of 1 MiB, then one box");
        drop(kept);
        trim();
    });
}
