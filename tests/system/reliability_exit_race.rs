//! Exit races: threads exit while other threads free the last boxes of their
//! spans. Each round, short-lived owner threads box a few objects through
//! batches, hand them to two freer threads of their own and exit; the
//! freers wait until the owner is on its way out, then free the boxes one by
//! one a few moments apart, so the frees of an owner's last slots land while its
//! heap abandons its spans, and two freers empty one abandoned span
//! together. Some owners leave boxes to the main thread for a few rounds,
//! which checks that no two live boxes overlap. Every box keeps its fill pattern, the span counter
//! never wraps, and at the end every slot and span is back.
//!
//! The windows these races need are a few instructions wide; CI also runs
//! this test under the race amplifier (`RUSTFLAGS="--cfg batch_alloc_race"`,
//! see `rt/src/base/sync.rs`), which widens every one of them.

use std::collections::VecDeque;
use std::hint::spin_loop;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread;

use crate::seed;
use batch_alloc::{is_active, stats};
use workloads::testing::{
    assert_back_at, assert_live, assert_span_bytes_sane, seeded, serially, Batches, Filled, RngExt,
};

const ROUNDS: usize = if cfg!(debug_assertions) { 150 } else { 1_500 };
const OWNERS_AT_ONCE: usize = 4;
const FREERS: usize = 2;
/// Rounds the main thread keeps its share of boxes.
const SURVIVE_ROUNDS: usize = 3;

type Parcel = Vec<(Filled, u64)>;

/// Boxes for a freer, the flag their owner sets as it exits, and how long
/// after that to wait before each free.
struct Mail {
    parcel: Parcel,
    owner_exiting: Arc<AtomicBool>,
    spins: usize,
}

fn freer(seed: u64, inbox: Receiver<Mail>) -> u64 {
    let mut rng = seeded(seed);
    let mut freed = 0;
    if let Ok(mail) = inbox.recv() {
        while !mail.owner_exiting.load(Ordering::Acquire) {
            spin_loop();
        }
        for (b, id) in mail.parcel {
            for _ in 0..rng.random_range(0..mail.spins) {
                spin_loop();
            }
            b.check_and_free(id);
            freed += 1;
        }
    }
    freed
}

/// Boxes a few objects, sends most of them to the freers, returns the rest
/// and exits. Half the owners box one object of each kind, so that each of
/// their spans has one slot out when they exit: the shape in which the free
/// of that slot races the abandonment most narrowly.
fn owner(index: u64, seed: u64, freers: Vec<Sender<Mail>>) -> Parcel {
    let mut rng = seeded(seed ^ index << 16);
    let one_each = rng.random_ratio(1, 2);
    let count = if one_each {
        3
    } else {
        1 + rng.random_range(0..48)
    };
    let leaves_survivors = !one_each && rng.random_ratio(1, 4);
    // A hint of at least three, so that even one box per kind comes from a
    // span (shorter loops are served plain).
    let mut batches = Batches::with_capacity(count.max(3));
    let mut parcels: Vec<Parcel> = (0..=FREERS).map(|_| Vec::new()).collect();
    for i in 0..count {
        let id = index << 32 | i as u64;
        let kind = if one_each { i } else { rng.random_range(0..3) };
        let b = batches.alloc(kind, id);
        let to = if leaves_survivors && rng.random_ratio(1, 4) {
            FREERS
        } else {
            rng.random_range(0..FREERS)
        };
        parcels[to].push((b, id));
    }
    drop(batches);
    let survivors = parcels.pop().unwrap_or_default();
    let exiting = Arc::new(AtomicBool::new(false));
    for (freer, parcel) in freers.iter().zip(parcels) {
        let owner_exiting = exiting.clone();
        let spins = [1, 100, 1_000, 10_000][rng.random_range(0..4)];
        freer
            .send(Mail {
                parcel,
                owner_exiting,
                spins,
            })
            .unwrap();
    }
    exiting.store(true, Ordering::Release);
    survivors
}

#[test]
fn owners_exit_while_their_last_boxes_are_freed() {
    serially(|| {
        assert!(is_active());
        let seed = seed(0xE817);
        let before = stats();
        let mut survivors: VecDeque<Parcel> = VecDeque::new();
        let mut freed = 0;
        for round in 0..ROUNDS {
            let mut freers = Vec::new();
            let owners: Vec<_> = (0..OWNERS_AT_ONCE)
                .map(|t| {
                    let index = (round * OWNERS_AT_ONCE + t) as u64;
                    let senders = (0..FREERS)
                        .map(|f| {
                            let (tx, rx) = channel();
                            let seed = seed ^ index << 8 ^ f as u64;
                            freers.push(thread::spawn(move || freer(seed, rx)));
                            tx
                        })
                        .collect();
                    thread::spawn(move || owner(index, seed, senders))
                })
                .collect();
            let kept: Parcel = owners.into_iter().flat_map(|h| h.join().unwrap()).collect();
            freed += freers.into_iter().map(|f| f.join().unwrap()).sum::<u64>();
            survivors.push_back(kept);
            if survivors.len() > SURVIVE_ROUNDS {
                for (b, id) in survivors.pop_front().unwrap() {
                    b.check_and_free(id);
                }
            }
            assert_live(survivors.iter().flatten());
            assert_span_bytes_sane(&stats());
        }
        for (b, id) in survivors.into_iter().flatten() {
            b.check_and_free(id);
        }
        assert!(freed > 0);
        assert_back_at(&before, &stats());
    });
}
