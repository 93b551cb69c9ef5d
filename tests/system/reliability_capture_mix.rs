//! Long-lived mix with capture on: as in `reliability_mix`, worker threads
//! put objects in shared shards and free random ones from random shards, so
//! objects are freed in random order on random threads, often after the
//! thread that made them has exited (workers retire after a random number
//! of operations and new ones take their place). Here each worker's loop
//! runs under a batch scope entered every iteration, and its objects are
//! plain boxes, byte buffers and strings: captured while the scope is open,
//! and from the inner allocator while it is suspended, as an async loop
//! suspends it around an `.await` (one batch of objects in four). The
//! shards' vectors grow and shrink inside the scopes of whichever workers
//! touch them. Every object's fill pattern is checked when it is freed,
//! every object made is freed exactly once, and at the end every slot and
//! span is back.
//!
//! Runs for `RELIABILITY_SECS` seconds (3 by default); for a long run:
//! `RELIABILITY_SECS=60 cargo test --release --test system -- reliability_capture_mix --nocapture`.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::seed;
use batch_alloc::stats;
use workloads::testing::{
    assert_back_at, assert_captured, assert_live, before_capture, seeded, serially, Captured,
    Guard, RngExt, SeededRng, CAPTURED_KINDS,
};

const WORKERS: usize = 4;
const SHARDS: usize = 16;
/// Objects a shard holds before allocations there free some first.
const SHARD_CAP: usize = 1_500;

type Shard = Mutex<Vec<(Captured, u64)>>;

#[derive(Default)]
struct Counts {
    captured: AtomicU64,
    plain: AtomicU64,
    freed: AtomicU64,
    workers: AtomicU64,
}

struct Shared {
    shards: Vec<Shard>,
    counts: Counts,
    deadline: Instant,
}

/// Frees up to `n` random objects of `shard`.
fn free_some(shared: &Shared, rng: &mut SeededRng, shard: usize, n: usize) {
    let taken: Vec<(Captured, u64)> = {
        let mut objects = shared.shards[shard].lock().unwrap();
        (0..n.min(objects.len()))
            .map(|_| {
                let at = rng.random_range(0..objects.len());
                objects.swap_remove(at)
            })
            .collect()
    };
    shared.counts.freed.fetch_add(taken.len() as u64, Relaxed);
    for (object, id) in taken {
        object.check_and_free(id);
    }
}

fn worker(shared: Arc<Shared>, serial: u64, seed: u64) {
    let mut rng = seeded(seed ^ serial << 24);
    let lifetime = 500 + rng.random_range(0..5_000);
    let mut next_id = serial << 40;
    let counts = &shared.counts;
    for _ in 0..lifetime {
        if Instant::now() >= shared.deadline {
            break;
        }
        let shard = rng.random_range(0..SHARDS);
        if rng.random_range(0..100) >= 50 {
            let n = 1 + rng.random_range(0..48);
            let guard = Guard::new();
            guard.enter();
            free_some(&shared, &mut rng, shard, n);
            continue;
        }
        // One batch in four is made as across an "await": with no scope
        // open, so from the inner allocator.
        let awaiting = rng.random_ratio(1, 4);
        let n = 1 + rng.random_range(0..48);
        let made: Vec<(Captured, u64)> = {
            let guard = Guard::new();
            if !awaiting {
                guard.enter();
            }
            (0..n as u64)
                .map(|i| {
                    (
                        Captured::make(rng.random_range(0..CAPTURED_KINDS), next_id + i),
                        next_id + i,
                    )
                })
                .collect()
        };
        next_id += n as u64;
        match awaiting {
            true => counts.plain.fetch_add(n as u64, Relaxed),
            false => counts.captured.fetch_add(n as u64, Relaxed),
        };
        let guard = Guard::new();
        guard.enter();
        let full = {
            let mut objects = shared.shards[shard].lock().unwrap();
            objects.extend(made);
            objects.len() > SHARD_CAP
        };
        if full {
            free_some(&shared, &mut rng, shard, SHARD_CAP / 2);
        } else if rng.random_ratio(1, 16) {
            // Shrink the shard's vector in place of whoever touches it.
            shared.shards[shard].lock().unwrap().shrink_to_fit();
        }
    }
}

#[test]
fn captured_and_plain_objects_freed_anywhere() {
    serially(|| {
        let seed = seed(0x313D);
        let secs: u64 = std::env::var("RELIABILITY_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3);
        let before = before_capture();
        let start = Instant::now();
        let shared = Arc::new(Shared {
            shards: (0..SHARDS).map(|_| Mutex::new(Vec::new())).collect(),
            counts: Counts::default(),
            deadline: start + Duration::from_secs(secs),
        });
        let mut serial = 0;
        let mut spawn = |shared: &Arc<Shared>| {
            serial += 1;
            shared.counts.workers.fetch_add(1, Relaxed);
            let (shared, serial) = (shared.clone(), serial);
            thread::spawn(move || worker(shared, serial, seed))
        };
        let mut running: Vec<_> = (0..WORKERS).map(|_| spawn(&shared)).collect();
        let mut peak_span_bytes = 0;
        let mut looks = 0u64;
        while Instant::now() < shared.deadline {
            thread::sleep(Duration::from_millis(5));
            for w in running.iter_mut() {
                if w.is_finished() {
                    std::mem::replace(w, spawn(&shared)).join().unwrap();
                }
            }
            peak_span_bytes = peak_span_bytes.max(stats().span_bytes - before.span_bytes);
            looks += 1;
            if looks % 20 == 0 {
                let held: Vec<_> = shared.shards.iter().map(|s| s.lock().unwrap()).collect();
                assert_live(held.iter().flat_map(|objects| objects.iter()));
            }
        }
        for w in running {
            w.join().unwrap();
        }
        let shared = Arc::into_inner(shared).expect("every worker has exited");
        let shards: Vec<_> = shared
            .shards
            .into_iter()
            .map(|s| s.into_inner().unwrap())
            .collect();
        assert_live(shards.iter().flatten());
        let left: u64 = shards.iter().map(|s| s.len() as u64).sum();
        for (object, id) in shards.into_iter().flatten() {
            object.check_and_free(id);
        }
        let c = &shared.counts;
        let (captured, plain) = (c.captured.load(Relaxed), c.plain.load(Relaxed));
        let after = stats();
        println!(
            "mix, capture on: {:.2?}, {} worker threads ({WORKERS} at a time): {captured} objects \
         made in scopes, {plain} with the scope suspended; {left} objects left at the end; span \
         memory peak {} KiB; {} allocations captured",
            start.elapsed(),
            c.workers.load(Relaxed),
            peak_span_bytes / 1024,
            after.scoped_allocations - before.scoped_allocations,
        );
        assert_eq!(
            c.freed.load(Relaxed) + left,
            captured + plain,
            "every object made is freed once"
        );
        assert!(plain > 0 && c.workers.load(Relaxed) > WORKERS as u64);
        assert_captured(&before, &after, captured);
        assert_back_at(&before, &after);
    });
}
