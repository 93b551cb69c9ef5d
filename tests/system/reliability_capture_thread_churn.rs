//! Thread churn with capture on: as in `reliability_thread_churn`, 1,000
//! short-lived threads, eight at a time, make objects and exit while some
//! of them live on elsewhere: in two long-lived holder threads, which free
//! them some threads later in a random order, and in the main thread, which
//! frees them two waves later. Here each thread's loop runs under a batch
//! scope entered every iteration, and makes its objects as code as written
//! does (`Box::new`, `Vec<u8>`, `String`), all captured; one thread in
//! eight leaks its guard (`mem::forget`) and exits with its scope still
//! open. Every object must keep its fill pattern; span memory must stay
//! within the batch version's bound while threads come and go (each exited
//! thread pins at most the spans twice its objects cover, the spans of
//! exited threads coming back as their last objects are freed); at the end
//! every slot and span must be back.

use std::collections::VecDeque;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread;
use std::time::Instant;

use crate::backlog::Backlog;
use crate::seed;
use batch_alloc::stats;
use workloads::testing::{
    assert_back_at, assert_captured, assert_live, before_capture, captured_span_bytes, seeded,
    serially, Captured, Guard, RngExt, CAPTURED_KINDS,
};

const THREADS: usize = 1_000;
/// Most objects a short-lived thread makes.
const MAX_COUNT: usize = 450;
const AT_ONCE: usize = 8;
const HOLDERS: usize = 2;
/// Parcels a holder keeps before it frees one (a random one).
const HOLD: usize = 12;
/// Waves the main thread keeps the objects threads return before freeing
/// them.
const MAIN_HOLDS_WAVES: usize = 2;

type Parcel = Vec<(Captured, u64)>;

fn free(parcel: Parcel) -> u64 {
    let n = parcel.len() as u64;
    for (object, id) in parcel {
        object.check_and_free(id);
    }
    n
}

fn holder(seed: u64, inbox: Receiver<Parcel>, backlog: Backlog) -> u64 {
    let mut rng = seeded(seed);
    let mut held: Vec<Parcel> = Vec::new();
    let mut freed = 0;
    for parcel in inbox {
        held.push(parcel);
        if held.len() > HOLD {
            freed += free(held.swap_remove(rng.random_range(0..held.len())));
        }
        backlog.taken();
    }
    assert_live(held.iter().flatten());
    freed + held.into_iter().map(free).sum::<u64>()
}

/// One short-lived thread: returns the objects it leaves to the main
/// thread.
fn short_lived(index: usize, seed: u64, holders: Vec<Sender<Parcel>>, backlog: Backlog) -> Parcel {
    let mut rng = seeded(seed ^ (index as u64) << 20);
    let count = 50 + rng.random_range(0..MAX_COUNT - 50);
    // Made before the loop, by the inner allocator: what the scope serves
    // is the objects.
    let mut to_holders: Vec<Parcel> = (0..HOLDERS).map(|_| Vec::with_capacity(count)).collect();
    let mut to_main = Vec::with_capacity(count);
    let guard = Guard::new();
    for i in 0..count {
        guard.enter();
        let id = ((index as u64) << 32) | i as u64;
        let object = Captured::make(rng.random_range(0..CAPTURED_KINDS), id);
        match rng.random_range(0..4) {
            0 => object.check_and_free(id),
            1 => to_main.push((object, id)),
            _ => to_holders[rng.random_range(0..HOLDERS)].push((object, id)),
        }
    }
    if index % 8 == 3 {
        // The thread exits with its scope open.
        std::mem::forget(guard);
    }
    for (holder, parcel) in holders.iter().zip(to_holders) {
        backlog.sent();
        holder.send(parcel).unwrap();
    }
    to_main
}

#[test]
fn captured_objects_outlive_their_threads_and_spans_come_back() {
    serially(|| {
        let seed = seed(0x7C13);
        let start = Instant::now();
        let before = before_capture();
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
        // Exited threads whose objects may still be held: by the holders, by
        // the main thread, plus the wave that just ran. Each pins at most the
        // spans twice its objects cover, in every class it used (a run's
        // refills ask for up to as many slots again as were used).
        let pinning = (HOLDERS * HOLD + (MAIN_HOLDS_WAVES + 1) * AT_ONCE) as u64;
        let span_bound = pinning * captured_span_bytes(2 * MAX_COUNT, 0);
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
            assert_live(main_held.iter().flatten());
            if main_held.len() > MAIN_HOLDS_WAVES {
                main_freed += free(main_held.pop_front().unwrap());
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
        main_freed += main_held.into_iter().map(free).sum::<u64>();
        let after = stats();
        println!(
            "thread churn, capture on: {THREADS} threads ({AT_ONCE} at a time) in {:.2?}; objects \
         freed after their thread exited: {holder_freed} by holders, {main_freed} by the main \
         thread; span memory peak {} KiB (bound {} KiB); {} allocations captured",
            start.elapsed(),
            peak_span_bytes / 1024,
            span_bound / 1024,
            after.scoped_allocations - before.scoped_allocations,
        );
        assert!(holder_freed > 0 && main_freed > 0);
        assert_captured(&before, &after, holder_freed + main_freed);
        assert_back_at(&before, &after);
    });
}
