//! Thread churn: 1,000 short-lived threads, eight at a time, allocate
//! through batches and exit while some of their boxes live on elsewhere:
//! in two long-lived holder threads, which free them some threads later in
//! a random order, and in the main thread, which frees them two waves
//! later. Some threads also leave a batch with unused slots to a holder,
//! which ends it after the thread is gone. Every box must keep its fill
//! pattern, span memory must stay bounded while threads come and go (the
//! spans of exited threads are reclaimed as their last boxes are freed),
//! and at the end every slot and span must be back.

use std::collections::VecDeque;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread;
use std::time::Instant;

use crate::backlog::Backlog;
use crate::seed;
use batch_alloc::{is_active, stats};
use workloads::testing::{
    assert_back_at, assert_live, filled_span_bytes, seeded, serially, Batches, Filled, RngExt,
};

const THREADS: usize = 1_000;
/// Most boxes a short-lived thread makes; its hint is at most twice that.
const MAX_COUNT: usize = 450;
const AT_ONCE: usize = 8;
const HOLDERS: usize = 2;
/// Parcels a holder keeps before it frees one (a random one).
const HOLD: usize = 12;
/// Waves the main thread keeps the boxes threads return before freeing them.
const MAIN_HOLDS_WAVES: usize = 2;

type Parcel = Vec<(Filled, u64)>;

enum Mail {
    Parcel(Parcel),
    /// A batch whose owner thread has exited, with slots it never used.
    Batches(Batches),
}

fn holder(seed: u64, inbox: Receiver<Mail>, backlog: Backlog) -> u64 {
    let mut rng = seeded(seed);
    let mut held: Vec<Parcel> = Vec::new();
    let mut freed = 0;
    let mut free = |parcel: Parcel| {
        for (b, id) in parcel {
            b.check_and_free(id);
            freed += 1;
        }
    };
    for mail in inbox {
        match mail {
            Mail::Parcel(parcel) => {
                held.push(parcel);
                if held.len() > HOLD {
                    free(held.swap_remove(rng.random_range(0..held.len())));
                }
            }
            Mail::Batches(batches) => drop(batches),
        }
        backlog.taken();
    }
    // The most boxes this holder has: intact and disjoint.
    assert_live(held.iter().flatten());
    for parcel in held {
        free(parcel);
    }
    freed
}

/// One short-lived thread: returns the boxes it leaves to the main thread.
fn short_lived(index: usize, seed: u64, holders: Vec<Sender<Mail>>, backlog: Backlog) -> Parcel {
    let mut rng = seeded(seed ^ (index as u64) << 20);
    let count = 50 + rng.random_range(0..MAX_COUNT - 50);
    // Hints from none to more than the thread uses, so some batches end
    // with slots left over.
    let hint = [0, count / 2, count, count * 2][rng.random_range(0..4)];
    let mut batches = Batches::with_capacity(hint);
    let mut to_holders: Vec<Parcel> = (0..HOLDERS).map(|_| Vec::new()).collect();
    let mut to_main = Vec::new();
    for i in 0..count {
        let id = ((index as u64) << 32) | i as u64;
        let b = batches.alloc(rng.random_range(0..3), id);
        match rng.random_range(0..4) {
            0 => b.check_and_free(id),
            1 => to_main.push((b, id)),
            _ => to_holders[rng.random_range(0..HOLDERS)].push((b, id)),
        }
    }
    for (holder, parcel) in holders.iter().zip(to_holders) {
        backlog.sent();
        holder.send(Mail::Parcel(parcel)).unwrap();
    }
    if rng.random_ratio(1, 4) {
        backlog.sent();
        holders[rng.random_range(0..HOLDERS)]
            .send(Mail::Batches(batches))
            .unwrap();
    }
    to_main
}

#[test]
fn boxes_outlive_their_threads_and_spans_come_back() {
    serially(|| {
        assert!(is_active());
        let seed = seed(0x7C12);
        let start = Instant::now();
        let before = stats();
        let backlog = Backlog::default();
        let (senders, holders): (Vec<_>, Vec<_>) = (0..HOLDERS)
            .map(|h| {
                let (tx, rx) = channel();
                let backlog = backlog.clone();
                (
                    tx,
                    thread::spawn(move || holder(seed ^ h as u64, rx, backlog)),
                )
            })
            .unzip();
        let mut rng = seeded(seed);
        let mut main_held: VecDeque<Parcel> = VecDeque::new();
        let mut main_freed = 0u64;
        let mut peak_span_bytes = 0;
        // Exited threads whose boxes may still be held: by the holders, by the
        // main thread, plus the wave that just ran. Each pins at most the spans
        // its batches reserved from: up to twice `MAX_COUNT` slots per class.
        let pinning = (HOLDERS * HOLD + (MAIN_HOLDS_WAVES + 1) * AT_ONCE) as u64;
        let span_bound = pinning * filled_span_bytes(2 * MAX_COUNT, 0);
        for wave in 0..THREADS / AT_ONCE {
            let handles: Vec<_> = (0..AT_ONCE)
                .map(|t| {
                    let index = wave * AT_ONCE + t;
                    let (senders, backlog) = (senders.clone(), backlog.clone());
                    thread::spawn(move || short_lived(index, seed, senders, backlog))
                })
                .collect();
            let mut returned: Parcel = handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect();
            for i in (1..returned.len()).rev() {
                returned.swap(i, rng.random_range(0..i + 1));
            }
            main_held.push_back(returned);
            // Before the oldest wave is freed, the boxes of exited threads the
            // main thread holds are intact and disjoint.
            assert_live(main_held.iter().flatten());
            if main_held.len() > MAIN_HOLDS_WAVES {
                for (b, id) in main_held.pop_front().unwrap() {
                    b.check_and_free(id);
                    main_freed += 1;
                }
            }
            // The bound counts what the holders keep, not what waits in their
            // inboxes.
            backlog.wait_until_dealt_with();
            let span_bytes = stats().span_bytes - before.span_bytes;
            peak_span_bytes = peak_span_bytes.max(span_bytes);
            assert!(
                span_bytes <= span_bound,
                "wave {wave}: {span_bytes} span bytes held (bound {span_bound}): \
             spans of exited threads are not coming back"
            );
        }
        drop(senders);
        let holder_freed: u64 = holders.into_iter().map(|h| h.join().unwrap()).sum();
        for (b, id) in main_held.into_iter().flatten() {
            b.check_and_free(id);
            main_freed += 1;
        }
        let after = stats();
        println!(
            "thread churn: {THREADS} threads ({AT_ONCE} at a time) in {:.2?}; boxes freed after \
         their thread exited: {holder_freed} by holders, {main_freed} by the main thread; \
         span memory peak {} KiB (bound {} KiB); {} boxes batched",
            start.elapsed(),
            peak_span_bytes / 1024,
            span_bound / 1024,
            after.batched_boxes - before.batched_boxes,
        );
        assert!(holder_freed > 0 && main_freed > 0);
        assert!(
            after.batched_boxes - before.batched_boxes >= (holder_freed + main_freed) / 2,
            "most boxes should come from batches: {before:?} {after:?}"
        );
        assert_back_at(&before, &after);
    });
}
