//! Remote frees wait in the freeing thread's outbox, chained per span, and
//! go back in one push: when the thread frees into other spans, refills,
//! reads `stats()` or exits. While they wait, `stats()` on any thread still
//! counts them as freed; a span whose owner exits meanwhile is reclaimed
//! when the chain arrives.

// Vectors of boxes are what the allocator is for.
#![allow(clippy::vec_box)]

use std::sync::mpsc::channel;
use std::sync::{Arc, Barrier};
use std::thread;

use batch_alloc_rt::{stats, trim, Batch};

use workloads::testing::serially;

type T = [u64; 8];

const BOXES: usize = if cfg!(miri) { 40 } else { 1_000 };

fn batch_of(n: usize) -> Vec<Box<T>> {
    let mut batch = Batch::with_capacity(n);
    (0..n as u64).map(|i| batch.alloc([i; 8])).collect()
}

/// The cases compare process-wide counts, so they run one after the other on
/// one thread, while no other test of the binary runs: other tests' threads,
/// still exiting, would move them.
#[test]
fn outboxes() {
    serially(|| {
        waiting_frees_count_as_freed_in_stats_read_elsewhere();
        chains_reach_spans_whose_owner_exited();
        an_exiting_thread_sends_its_chains();
        a_thread_that_never_batched_frees_through_an_outbox();
        frees_scattered_over_many_spans_all_come_back();
        boxes_smaller_than_a_link_dropped_by_value_elsewhere_come_back();
    });
}

/// Drops `boxes` on another thread, which first makes a heap with a batch
/// if `batch_first`, then runs `meanwhile` here while that thread idles
/// with whatever its outbox holds, and returns its result once the thread
/// has exited.
fn while_the_freer_idles<R>(
    boxes: Vec<Box<T>>,
    batch_first: bool,
    meanwhile: impl FnOnce() -> R,
) -> R {
    let freed = Arc::new(Barrier::new(2));
    let done = Arc::new(Barrier::new(2));
    let freer = {
        let (freed, done) = (freed.clone(), done.clone());
        thread::spawn(move || {
            if batch_first {
                drop(batch_of(4));
            }
            drop(boxes);
            freed.wait();
            done.wait();
        })
    };
    freed.wait();
    let result = meanwhile();
    done.wait();
    freer.join().unwrap();
    result
}

fn waiting_frees_count_as_freed_in_stats_read_elsewhere() {
    let before = stats();
    // A thread with a heap of its own, so that its frees of this thread's
    // slots wait in its outbox. It holds its chains; this thread cannot
    // send them, yet they count as freed.
    let during = while_the_freer_idles(batch_of(BOXES), true, stats);
    assert_eq!(
        during.live_slots, before.live_slots,
        "waiting frees counted as live"
    );
    assert_eq!(stats().live_slots, before.live_slots);
}

fn chains_reach_spans_whose_owner_exited() {
    let before = stats();
    let (to_freer, inbox) = channel::<Vec<Box<T>>>();
    let hold = Arc::new(Barrier::new(2));
    let freer = {
        let hold = hold.clone();
        thread::spawn(move || {
            drop(batch_of(4));
            let boxes = inbox.recv().unwrap();
            drop(boxes);
            // Chains wait here while the owner exits.
            hold.wait();
            hold.wait();
            // Reading stats on this thread sends them.
            stats()
        })
    };
    thread::spawn(move || to_freer.send(batch_of(BOXES)).unwrap())
        .join()
        .unwrap();
    hold.wait();
    // The owner has exited: its spans are abandoned, some of their slots
    // still in the freer's outbox, which counts them as freed.
    assert_eq!(
        stats().live_slots,
        before.live_slots,
        "waiting frees counted as live"
    );
    hold.wait();
    let at_freer = freer.join().unwrap();
    assert_eq!(at_freer.live_slots, before.live_slots);
    let after = stats();
    assert_eq!(after.live_slots, before.live_slots, "slots leaked");
    assert_eq!(
        after.span_bytes, before.span_bytes,
        "abandoned spans not reclaimed"
    );
}

fn an_exiting_thread_sends_its_chains() {
    let before = stats();
    let boxes = batch_of(BOXES);
    thread::spawn(move || {
        drop(batch_of(4));
        drop(boxes);
    })
    .join()
    .unwrap();
    // The freer exited; its chains went back as it did, and this thread,
    // the owner, collects them at its next look.
    let again = batch_of(BOXES);
    drop(again);
    let after = stats();
    assert_eq!(after.live_slots, before.live_slots);
}

/// A thread that only frees (it never allocated from a batch) gets a heap
/// at its first free of another thread's slot, so its frees wait in its
/// outbox like any other thread's: the owner cannot empty its span while
/// the freer idles, and can once the freer has exited.
fn a_thread_that_never_batched_frees_through_an_outbox() {
    trim();
    let before = stats();
    let (during, trimmed) = while_the_freer_idles(batch_of(BOXES), false, || {
        let during = stats();
        // Collects what the freer sent and releases every span left empty.
        trim();
        (during, stats())
    });
    trim();
    let after = stats();
    assert_eq!(
        during.live_slots, before.live_slots,
        "waiting frees counted as live"
    );
    assert!(
        trimmed.span_bytes > before.span_bytes,
        "the freer's last frees did not wait in an outbox: {before:?} -> {trimmed:?}"
    );
    assert_eq!(after.live_slots, before.live_slots);
    assert_eq!(
        after.span_bytes, before.span_bytes,
        "the span did not come back once the freer exited"
    );
}

/// Boxes smaller than a link (two bytes) freed on another thread join its
/// chains like any other, their links written byte by byte, the box's
/// bytes through the box's pointer: each is dropped by value, so the box's
/// borrow stays protected through its free (which Miri checks). Their
/// contents are intact until each drop, and every slot comes back once
/// the freer has exited.
fn boxes_smaller_than_a_link_dropped_by_value_elsewhere_come_back() {
    let before = stats();
    let tiny = |n: usize| -> Vec<Box<[u8; 2]>> {
        let mut batch = Batch::with_capacity(n);
        (0..n).map(|i| batch.alloc([i as u8, !(i as u8)])).collect()
    };
    let boxes = tiny(BOXES);
    thread::spawn(move || {
        for (i, b) in boxes.into_iter().enumerate() {
            assert_eq!(*b, [i as u8, !(i as u8)], "box {i} before its drop");
            drop(b);
        }
    })
    .join()
    .unwrap();
    let again = tiny(BOXES);
    drop(again);
    assert_eq!(stats().live_slots, before.live_slots);
}

/// Frees that jump from span to span (each entry of the outbox sees frees
/// into other spans: pushed at once, until the entry gives way) and frees
/// that stay in a span (chained) mix; every slot must come back, and the
/// spans once the freer has exited.
fn frees_scattered_over_many_spans_all_come_back() {
    // Under Miri too, more spans than the outbox has entries.
    let n = if cfg!(miri) { 1_200 } else { 20_000 };
    trim();
    let before = stats();
    let mut boxes: Vec<Option<Box<T>>> = batch_of(n).into_iter().map(Some).collect();
    for (i, b) in boxes.iter().enumerate() {
        assert_eq!(b.as_ref().unwrap()[0], i as u64);
    }
    let freer = thread::spawn(move || {
        // A stride co-prime with n visits every box, each free in another
        // span than the one before; then the rest in order.
        let stride = 1031;
        for k in 0..n / 2 {
            drop(boxes[k * stride % n].take());
        }
        for (i, b) in boxes.iter_mut().enumerate() {
            if let Some(b) = b.take() {
                assert_eq!(b[7], i as u64, "a box was overwritten");
            }
        }
        stats()
    });
    let seen_by_freer = freer.join().unwrap();
    trim();
    let after = stats();
    assert_eq!(seen_by_freer.live_slots, before.live_slots);
    assert_eq!(after.live_slots, before.live_slots);
    assert_eq!(
        after.span_bytes, before.span_bytes,
        "spans did not come back"
    );
}
