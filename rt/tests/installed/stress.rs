//! Many threads allocating through batches, handing boxes to each other and
//! freeing them there; some threads exit while their boxes live on. Seeded,
//! so a failure replays. At the end no slot may be left and every span of
//! the exited threads must be back in the pool.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Barrier};
use std::thread;

use batch_alloc_rt::stats;

use workloads::testing::{assert_back_at, assert_live, seeded, serially, Batches, Filled, RngExt};

const THREADS: usize = if cfg!(miri) { 4 } else { 8 };
const ROUNDS: usize = if cfg!(miri) { 3 } else { 150 };
const PER_ROUND: usize = if cfg!(miri) { 24 } else { 2_000 };

type Parcel = Vec<(Filled, u64)>;

fn worker(
    me: usize,
    seed: u64,
    inbox: Receiver<Parcel>,
    outboxes: Vec<Sender<Parcel>>,
    barrier: Arc<Barrier>,
) -> usize {
    let mut rng = seeded(seed ^ me as u64);
    let mut kept: Parcel = Vec::new();
    let mut freed = 0;
    // Half the threads stop early, leaving their boxes to the others.
    let rounds = if me % 2 == 1 { ROUNDS / 3 } else { ROUNDS };
    for round in 0..rounds {
        let mut batches = Batches::with_capacity(rng.random_range(0..PER_ROUND));
        let mut parcels: Vec<Parcel> = (0..THREADS).map(|_| Vec::new()).collect();
        for i in 0..PER_ROUND {
            let id = ((me as u64) << 48) | ((round as u64) << 24) | i as u64;
            let b = batches.alloc(rng.random_range(0..3), id);
            match rng.random_range(0..4) {
                0 => kept.push((b, id)),
                1 => {
                    b.check(id);
                    freed += 1;
                }
                _ => parcels[rng.random_range(0..THREADS)].push((b, id)),
            }
        }
        // Sometimes end the batches on another thread.
        if rng.random_range(0..4) == 0 {
            thread::spawn(move || drop(batches)).join().unwrap();
        }
        for (to, parcel) in parcels.into_iter().enumerate() {
            // A receiver that has exited drops what it is sent: a free on
            // whatever thread the channel's buffer is dropped.
            let _ = outboxes[to].send(parcel);
        }
        while let Ok(parcel) = inbox.try_recv() {
            for (b, id) in parcel {
                b.check(id);
                freed += 1;
            }
        }
        // Every few rounds, before the thread frees some: the boxes it keeps
        // are intact and disjoint.
        if round % 16 == 0 || round + 1 == rounds {
            assert_live(&kept);
        }
        if kept.len() > PER_ROUND {
            let at = rng.random_range(0..kept.len());
            for (b, id) in kept.drain(at..) {
                b.check(id);
                freed += 1;
            }
        }
    }
    // Early leavers exit with boxes alive in other threads' inboxes and
    // their own `kept`, handed on to the next thread.
    if me % 2 == 1 {
        let _ = outboxes[(me + 1) % THREADS].send(kept);
        return freed;
    }
    assert_live(&kept);
    for (b, id) in kept {
        b.check(id);
        freed += 1;
    }
    drop(outboxes);
    barrier.wait();
    // Everything still sent to this thread, once every sender has exited or
    // passed the barrier.
    let left: Parcel = inbox.iter().flatten().collect();
    assert_live(&left);
    for (b, id) in left {
        b.check(id);
        freed += 1;
    }
    freed
}

#[test]
fn threads_hand_boxes_around_and_exit_without_losing_a_slot() {
    serially(|| {
        let seed = std::env::var("STRESS_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x5eed);
        assert!(batch_alloc_rt::is_active());
        let before = stats();
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..THREADS).map(|_| mpsc::channel()).unzip();
        let staying = (0..THREADS).filter(|me| me % 2 == 0).count();
        let barrier = Arc::new(Barrier::new(staying));
        let handles: Vec<_> = receivers
            .into_iter()
            .enumerate()
            .map(|(me, inbox)| {
                let outboxes = senders.clone();
                let barrier = barrier.clone();
                thread::spawn(move || worker(me, seed, inbox, outboxes, barrier))
            })
            .collect();
        drop(senders);
        let freed: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
        let after = stats();
        println!("seed {seed}: freed {freed} boxes; before {before:?}; after {after:?}");
        assert!(freed > 0);
        assert_back_at(&before, &after);
        assert!(
            after.batched_boxes - before.batched_boxes >= freed as u64 / 2,
            "{before:?} {after:?} freed {freed}"
        );
    });
}
