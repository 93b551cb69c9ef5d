//! Long-lived mix: worker threads interleave batched boxes, plain boxes and
//! plain byte buffers, put them in shared shards, and free random ones from
//! random shards, so objects are freed in random order on random threads,
//! often after the thread that made them has exited (workers retire after a
//! random number of operations and new ones take their place). Batches are
//! restarted at random and sometimes ended by whichever thread picks them
//! up. Every object's fill pattern is checked when it is freed, every object
//! made is freed exactly once, and at the end every slot and span is back.
//!
//! Runs for `RELIABILITY_SECS` seconds (3 by default); for a long run:
//! `RELIABILITY_SECS=60 cargo test --release --test system -- reliability_mix --nocapture`.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::seed;
use batch_alloc::{is_active, stats};
use workloads::testing::{
    assert_back_at, assert_disjoint, pattern, seeded, serially, slice_range, Batches, Filled,
    Patterned, RngExt, SeededRng,
};

const WORKERS: usize = 4;
const SHARDS: usize = 16;
/// Objects a shard holds before allocations there free some first.
const SHARD_CAP: usize = 1_500;

enum Item {
    Batched(Filled, u64),
    Plain(Filled, u64),
    Bytes(Vec<u8>, u64),
    /// Batches started on some thread, ended by whoever takes them.
    Batches(Batches),
}

fn byte(id: u64, i: usize) -> u8 {
    pattern(id, i) as u8
}

#[derive(Default)]
struct Counts {
    batched: AtomicU64,
    plain: AtomicU64,
    bytes: AtomicU64,
    freed: AtomicU64,
    batches_passed: AtomicU64,
    workers: AtomicU64,
}

impl Item {
    /// Panics unless the object keeps its pattern; returns its address
    /// range (a batch has none).
    fn check(&self) -> Option<(usize, usize)> {
        match self {
            Item::Batched(b, id) | Item::Plain(b, id) => {
                b.check(*id);
                Some(b.range())
            }
            Item::Bytes(v, id) => {
                for (i, &x) in v.iter().enumerate() {
                    assert_eq!(x, byte(*id, i), "buffer {id} corrupted at byte {i}");
                }
                Some(slice_range(v))
            }
            Item::Batches(_) => None,
        }
    }

    /// Checks the pattern and frees the item; returns how many objects it
    /// was (a batch is none).
    fn check_and_free(self) -> u64 {
        if let Item::Batches(batches) = self {
            drop(batches);
            return 0;
        }
        self.check();
        1
    }
}

/// Panics unless every object in `shards` keeps its pattern and no two of
/// them (boxes and byte buffers, batched and plain) overlap.
fn assert_intact_and_disjoint<'a>(shards: impl IntoIterator<Item = &'a Vec<Item>>) {
    let mut ranges: Vec<_> = shards
        .into_iter()
        .flatten()
        .filter_map(Item::check)
        .collect();
    assert_disjoint(&mut ranges);
}

struct Shared {
    shards: Vec<Mutex<Vec<Item>>>,
    counts: Counts,
    deadline: Instant,
}

/// Frees up to `n` random items of `shard`.
fn free_some(shared: &Shared, rng: &mut SeededRng, shard: usize, n: usize) {
    let taken: Vec<Item> = {
        let mut items = shared.shards[shard].lock().unwrap();
        (0..n.min(items.len()))
            .map(|_| {
                let at = rng.random_range(0..items.len());
                items.swap_remove(at)
            })
            .collect()
    };
    let freed: u64 = taken.into_iter().map(Item::check_and_free).sum();
    shared.counts.freed.fetch_add(freed, Relaxed);
}

fn worker(shared: Arc<Shared>, serial: u64, seed: u64) {
    let mut rng = seeded(seed ^ serial << 24);
    let lifetime = 500 + rng.random_range(0..5_000);
    let hint = |rng: &mut SeededRng| [0, 1, 2, 16, 500][rng.random_range(0..5)];
    let mut batches = Batches::with_capacity(hint(&mut rng));
    let mut next_id = serial << 40;
    let counts = &shared.counts;
    for _ in 0..lifetime {
        if Instant::now() >= shared.deadline {
            break;
        }
        let shard = rng.random_range(0..SHARDS);
        match rng.random_range(0..100) {
            0..=49 => {
                let n = 1 + rng.random_range(0..48);
                let made: Vec<Item> = (0..n)
                    .map(|_| {
                        let id = next_id;
                        next_id += 1;
                        match rng.random_range(0..10) {
                            0..=5 => {
                                counts.batched.fetch_add(1, Relaxed);
                                Item::Batched(batches.alloc(rng.random_range(0..3), id), id)
                            }
                            6..=8 => {
                                counts.plain.fetch_add(1, Relaxed);
                                Item::Plain(Filled::plain(rng.random_range(0..3), id), id)
                            }
                            _ => {
                                counts.bytes.fetch_add(1, Relaxed);
                                let len = 1 + rng.random_range(0..300);
                                Item::Bytes((0..len).map(|i| byte(id, i)).collect(), id)
                            }
                        }
                    })
                    .collect();
                let full = {
                    let mut items = shared.shards[shard].lock().unwrap();
                    items.extend(made);
                    items.len() > SHARD_CAP
                };
                if full {
                    free_some(&shared, &mut rng, shard, SHARD_CAP / 2);
                }
            }
            50..=94 => {
                let n = 1 + rng.random_range(0..48);
                free_some(&shared, &mut rng, shard, n);
            }
            _ => {
                let old = std::mem::replace(&mut batches, Batches::with_capacity(hint(&mut rng)));
                if rng.random_ratio(1, 2) {
                    drop(old);
                } else {
                    counts.batches_passed.fetch_add(1, Relaxed);
                    shared.shards[shard]
                        .lock()
                        .unwrap()
                        .push(Item::Batches(old));
                }
            }
        }
    }
}

#[test]
fn interleaved_batched_and_plain_objects_freed_anywhere() {
    serially(|| {
        assert!(is_active());
        let seed = seed(0x313C);
        let secs: u64 = std::env::var("RELIABILITY_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3);
        let before = stats();
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
            let shared = shared.clone();
            let serial = serial;
            thread::spawn(move || worker(shared, serial, seed))
        };
        let mut running: Vec<_> = (0..WORKERS).map(|_| spawn(&shared)).collect();
        let mut peak_span_bytes = 0;
        let mut checks = 0u64;
        while Instant::now() < shared.deadline {
            thread::sleep(Duration::from_millis(5));
            for w in running.iter_mut() {
                if w.is_finished() {
                    let done = std::mem::replace(w, spawn(&shared));
                    done.join().unwrap();
                }
            }
            peak_span_bytes = peak_span_bytes.max(stats().span_bytes - before.span_bytes);
            // Now and then, with every shard held still: what they hold is
            // intact and disjoint.
            checks += 1;
            if checks % 20 == 0 {
                let held: Vec<_> = shared.shards.iter().map(|s| s.lock().unwrap()).collect();
                assert_intact_and_disjoint(held.iter().map(|items| &**items));
            }
        }
        for w in running {
            w.join().unwrap();
        }
        let shared = Arc::into_inner(shared).expect("every worker has exited");
        let shards: Vec<Vec<Item>> = shared
            .shards
            .into_iter()
            .map(|s| s.into_inner().unwrap())
            .collect();
        assert_intact_and_disjoint(&shards);
        let mut left = 0;
        for shard in shards {
            for item in shard {
                left += item.check_and_free();
            }
        }
        let c = &shared.counts;
        let made = c.batched.load(Relaxed) + c.plain.load(Relaxed) + c.bytes.load(Relaxed);
        let freed = c.freed.load(Relaxed) + left;
        let after = stats();
        println!(
        "mix: {:.2?}, {} worker threads ({WORKERS} at a time): {} batched boxes, {} plain boxes, \
         {} byte buffers, {} batches ended on another thread; {left} objects left at the end; \
         span memory peak {} KiB",
        start.elapsed(),
        c.workers.load(Relaxed),
        c.batched.load(Relaxed),
        c.plain.load(Relaxed),
        c.bytes.load(Relaxed),
        c.batches_passed.load(Relaxed),
        peak_span_bytes / 1024,
    );
        assert_eq!(freed, made, "every object made is freed once");
        assert!(c.batched.load(Relaxed) > 0 && c.workers.load(Relaxed) > WORKERS as u64);
        assert!(
            after.batched_boxes > before.batched_boxes,
            "batches handed out span slots"
        );
        assert_back_at(&before, &after);
    });
}
