//! Memory that other threads free into the spans of a thread that has gone
//! idle goes back as docs/runtime.md ("When memory goes back") promises:
//! a sweep on another thread takes the spans those frees emptied out of
//! the idle owner's mailbox, at the first refill or large block made or
//! freed past the sweep's delay, and the pool gives them back as every
//! empty frame; `trim()` on any thread does it at once. The owner here
//! makes a structure in a scope, sends it to this thread and waits on a
//! channel, as a reviewer's worker did: its spans stayed resident (198 MiB
//! of spans for a structure of 195 MiB, gone only when the worker exited).
//! Alone in the process while each test runs ([`serially`], as every
//! test of this binary).

use std::sync::mpsc::{channel, Sender};
use std::thread::{self, JoinHandle};

use batch_alloc_rt::testing::limits::{FRAME_SIZE, MAX_SMALL_SIZE};
use batch_alloc_rt::{scope, stats, trim};
use workloads::testing::serially;

/// 1 KiB boxes: 128 MiB of them. Under Miri, whose largest class is 256
/// bytes and whose region 1 MiB, 128-byte boxes: 256 KiB, 64 of its 4 KiB
/// frames.
#[cfg(not(miri))]
type Item = [u64; 128];
#[cfg(miri)]
type Item = [u64; 16];
const BOXES: usize = if cfg!(miri) { 2_048 } else { 131_072 };
const _: () = assert!(size_of::<Item>() <= MAX_SMALL_SIZE, "the boxes are slots");

/// A worker thread that makes [`BOXES`] boxes in a scope, sends them here
/// and then waits, idle, until the returned sender says it may exit.
fn idle_worker_made(boxes: &mut Vec<Box<Item>>) -> (Sender<()>, JoinHandle<()>) {
    let (made, here) = channel();
    let (exit, exits) = channel::<()>();
    let worker = thread::spawn(move || {
        let boxes: Vec<Box<Item>> = scope(|| {
            (0..BOXES)
                .map(|i| Box::new([i as u64; size_of::<Item>() / 8]))
                .collect()
        });
        made.send(boxes).unwrap();
        // Idle: blocked, no refill, no event, until told to exit.
        let _ = exits.recv();
    });
    *boxes = here.recv().unwrap();
    (exit, worker)
}

/// Span bytes the runtime holds now, past `before`, in MiB (rounded down).
#[cfg(all(target_os = "linux", not(miri)))]
fn span_mib_past(before: u64) -> u64 {
    stats().span_bytes.saturating_sub(before) >> 20
}

/// Frames of spans the runtime holds now, past `before` (rounded down).
fn span_frames_past(before: u64) -> u64 {
    stats().span_bytes.saturating_sub(before) / FRAME_SIZE as u64
}

/// `trim()` on this thread takes back what the idle worker's spans hold
/// once this thread has dropped the worker's boxes: its spans leave it at
/// once, but for a span or so per class it allocated from (1 MiB in 64 KiB
/// frames), and nothing stays cached.
#[test]
fn trim_on_another_thread_returns_an_idle_threads_freed_spans() {
    serially(|| {
        trim();
        let before = stats();
        let mut boxes = Vec::new();
        let (exit, worker) = idle_worker_made(&mut boxes);
        let full = span_frames_past(before.span_bytes);
        assert!(
            full * FRAME_SIZE as u64 >= (BOXES * size_of::<Item>()) as u64,
            "the worker's spans hold its boxes: {full} frames"
        );
        drop(boxes);
        trim();
        let after = stats();
        let held = span_frames_past(before.span_bytes);
        println!(
            "idle worker's spans: {full} frames of {FRAME_SIZE} bytes with its boxes, {held} \
             after they were dropped here and trim(); cached {} bytes",
            after.cached_bytes
        );
        assert!(held <= 16, "the worker still holds {held} frames of spans");
        assert_eq!(after.cached_bytes, 0, "trim leaves nothing cached");
        assert_eq!(after.live_slots, before.live_slots, "every box was freed");
        exit.send(()).unwrap();
        worker.join().unwrap();
        trim();
    });
}

/// The reviewer's program, scaled down: the idle worker's freed spans go
/// back while this thread keeps working (one box of a new batch and one
/// large block every 250 ms), with nothing trimmed, within the promise's
/// delays: the sweep's 100 ms and the pool's second, at this thread's
/// events.
#[cfg(all(target_os = "linux", not(miri)))]
#[test]
fn an_idle_threads_freed_spans_go_back_while_another_keeps_working() {
    use std::time::{Duration, Instant};

    use batch_alloc_rt::Batch;
    use workloads::timing::status_kib;

    let resident_mib = || status_kib("VmRSS:").expect("/proc/self/status") >> 10;
    serially(|| {
        trim();
        let before = stats();
        let start = resident_mib();
        let mut boxes = Vec::new();
        let (exit, worker) = idle_worker_made(&mut boxes);
        let full = resident_mib();
        assert!(
            full >= start + 96,
            "the boxes are resident: {start} -> {full} MiB"
        );
        drop(boxes);
        let dropped = Instant::now();
        let mut readings = Vec::new();
        while dropped.elapsed() < Duration::from_secs(3) {
            thread::sleep(Duration::from_millis(250));
            let one_box = Batch::new().alloc(7u64);
            let block = scope(|| vec![1u8; 512 << 10]);
            drop((one_box, block));
            let s = stats();
            readings.push((
                dropped.elapsed().as_millis(),
                resident_mib(),
                span_mib_past(before.span_bytes),
                s.cached_bytes >> 20,
            ));
            // Back past the resident pool's 32 MiB, and the spans gone.
            if resident_mib() < start + 40 && span_mib_past(before.span_bytes) <= 1 {
                break;
            }
        }
        println!("start {start} MiB, with the boxes {full} MiB; after the drop, every 250 ms:");
        for (ms, resident, spans, cached) in &readings {
            println!(
                "  {ms:>5} ms: resident {resident} MiB, spans +{spans} MiB, cached {cached} MiB"
            );
        }
        let (_, resident, spans, _) = *readings.last().unwrap();
        exit.send(()).unwrap();
        worker.join().unwrap();
        trim();
        assert!(
            spans <= 1,
            "the idle worker kept {spans} MiB of spans its boxes emptied"
        );
        assert!(
            resident < start + 40,
            "memory not returned: {start} -> {full} -> {resident} MiB"
        );
    });
}

/// Sweeps racing owners at work: producers make boxes from batches and in
/// scopes, send most to consumers and free a few, park spans full and
/// drain their mailboxes, now and then waiting a moment idle; consumers
/// free what they get and call `trim()` (a sweep of every other heap, at
/// once) every few parcels, and make boxes of their own (refills: events).
/// Seeded, so a failure replays. At the end every box was intact when
/// freed, no slot is left out and every span is back where it started.
#[test]
fn sweeps_race_owners_at_work_without_losing_a_slot() {
    use std::sync::mpsc::Receiver;
    use std::time::Duration;

    use workloads::testing::{assert_back_at, seeded, Batches, Filled, RngExt};

    const PRODUCERS: usize = if cfg!(miri) { 2 } else { 4 };
    const CONSUMERS: usize = if cfg!(miri) { 2 } else { 3 };
    const ROUNDS: usize = if cfg!(miri) { 3 } else { 60 };
    const PER_ROUND: usize = if cfg!(miri) { 40 } else { 3_000 };
    type Parcel = Vec<(Filled, u64)>;

    fn producer(me: usize, seed: u64, to: Vec<Sender<Parcel>>) {
        let mut rng = seeded(seed ^ me as u64);
        for round in 0..ROUNDS {
            let mut batches = Batches::with_capacity(rng.random_range(0..PER_ROUND));
            let mut parcel = Parcel::new();
            for i in 0..PER_ROUND {
                let id = ((me as u64) << 48) | ((round as u64) << 24) | i as u64;
                let b = batches.alloc(rng.random_range(0..3), id);
                if rng.random_range(0..8) == 0 {
                    b.check(id);
                } else {
                    parcel.push((b, id));
                }
            }
            // Boxes of the thread's runs too, made in a scope.
            let scoped: Vec<Box<[u64; 6]>> = scope(|| {
                (0..PER_ROUND / 4)
                    .map(|i| Box::new([i as u64; 6]))
                    .collect()
            });
            drop(batches);
            let _ = to[rng.random_range(0..CONSUMERS)].send(parcel);
            thread::spawn(move || {
                for (i, b) in scoped.iter().enumerate() {
                    assert_eq!(b[5], i as u64);
                }
            })
            .join()
            .unwrap();
            // Idle now and then, so that what the consumers free waits in
            // this thread's mailbox for a sweep.
            if rng.random_range(0..4) == 0 {
                thread::sleep(Duration::from_millis(if cfg!(miri) { 1 } else { 5 }));
            }
        }
    }

    fn consumer(me: usize, seed: u64, from: Receiver<Parcel>) -> usize {
        let mut rng = seeded(seed ^ (me as u64) << 32);
        let mut freed = 0;
        for (n, parcel) in from.iter().enumerate() {
            for (b, id) in parcel {
                b.check(id);
                freed += 1;
            }
            let mine = batch_alloc_rt::Batch::new().alloc([n as u64; 4]);
            assert_eq!(mine[3], n as u64);
            if rng.random_range(0..3) == 0 {
                trim();
            }
        }
        freed
    }

    serially(|| {
        let seed = std::env::var("STRESS_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x5eed);
        trim();
        let before = stats();
        let (senders, receivers): (Vec<_>, Vec<_>) =
            (0..CONSUMERS).map(|_| channel::<Parcel>()).unzip();
        let consumers: Vec<_> = receivers
            .into_iter()
            .enumerate()
            .map(|(me, from)| thread::spawn(move || consumer(me, seed, from)))
            .collect();
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|me| {
                let to = senders.clone();
                thread::spawn(move || producer(me, seed, to))
            })
            .collect();
        drop(senders);
        for p in producers {
            p.join().unwrap();
        }
        let freed: usize = consumers.into_iter().map(|c| c.join().unwrap()).sum();
        trim();
        let after = stats();
        println!("seed {seed}: freed {freed} boxes; before {before:?}; after {after:?}");
        assert!(freed > 0);
        assert_back_at(&before, &after);
    });
}
