//! Fragmentation with capture on: the rounds of `reliability_fragmentation`
//! made the way code as written makes them. A loop runs under a batch
//! scope (the guard `#[batch_alloc]` declares, entered every iteration);
//! each round makes 1,000 objects of one kind with `Box::new`, `Vec<u8>` or
//! `String`, which the scope captures, and keeps one of them (chosen at
//! random), over and over. Each kept object pins its span, so span memory
//! stays near the live bytes only if the freed slots of every round are
//! reused, through the scope's runs, by the rounds that follow. Checked
//! every few rounds with the batch version's bound: span memory within
//! twice the live bytes plus, per class, the spans one round covers and one
//! more; exactly one live slot per kept object.
//!
//! `cargo test --test system -- reliability_capture_fragmentation` runs 5,000
//! rounds; 100,000 rounds are the ignored test, for release builds:
//! `cargo test --release --test system -- reliability_capture_fragmentation --ignored --nocapture`.

use std::thread;

use crate::seed;
use batch_alloc::{stats, Stats};
use workloads::testing::{
    assert_back_at, assert_captured, assert_live, assert_span_bytes_sane, before_capture,
    captured_span_bytes, seeded, serially, Captured, Guard, RngExt, CAPTURED_KINDS,
};

/// Objects made per round, of which one is kept.
const PER_ROUND: usize = 1_000;
/// Rounds between two readings of `stats()`.
const CHECK_EVERY: usize = 250;

/// Bytes of span memory allowed on top of twice the live bytes: for each
/// class in use, the spans one round covers and one more.
fn allowance() -> u64 {
    captured_span_bytes(PER_ROUND, 1)
}

/// Runs `rounds` rounds on a fresh thread (its runs go back when it
/// exits); returns the live and span bytes at the last check.
fn run(rounds: usize, seed: u64) -> (u64, u64) {
    let before = before_capture();
    let figures = thread::spawn(move || rounds_on_this_thread(rounds, seed, before))
        .join()
        .unwrap();
    let after = stats();
    assert_back_at(&before, &after);
    assert_captured(&before, &after, (rounds * PER_ROUND) as u64);
    figures
}

fn rounds_on_this_thread(rounds: usize, seed: u64, before: Stats) -> (u64, u64) {
    let mut rng = seeded(seed);
    // Both made before the loop, by the inner allocator: the live slots
    // are then exactly the kept objects.
    let mut kept: Vec<(Captured, u64)> = Vec::with_capacity(rounds);
    let mut made: Vec<(Captured, u64)> = Vec::with_capacity(PER_ROUND);
    let (mut live_bytes, mut span_bytes) = (0, 0);
    let guard = Guard::new();
    for round in 0..rounds {
        guard.enter();
        let first = (round * PER_ROUND) as u64;
        let kind = round % CAPTURED_KINDS;
        made.extend((first..first + PER_ROUND as u64).map(|id| (Captured::make(kind, id), id)));
        let object = made.swap_remove(rng.random_range(0..PER_ROUND));
        live_bytes += object.0.bytes() as u64;
        kept.push(object);
        // The others are freed in a random order.
        for i in (1..made.len()).rev() {
            made.swap(i, rng.random_range(0..i + 1));
        }
        for (object, id) in made.drain(..) {
            object.check_and_free(id);
        }
        if (round + 1) % CHECK_EVERY == 0 || round + 1 == rounds {
            let now = stats();
            assert_span_bytes_sane(&now);
            span_bytes = now.span_bytes - before.span_bytes;
            let bound = 2 * live_bytes + allowance();
            assert_eq!(
                now.live_slots - before.live_slots,
                kept.len() as u64,
                "live slots at round {round}: one per kept object"
            );
            assert!(
                span_bytes <= bound,
                "round {round}: {span_bytes} span bytes for {live_bytes} live bytes \
                 (bound {bound}; seed {seed})"
            );
        }
    }
    drop(guard);
    // The most objects live: one from every round, all intact and disjoint.
    assert_live(&kept);
    for (object, id) in kept {
        object.check_and_free(id);
    }
    (live_bytes, span_bytes)
}

fn report(rounds: usize, (live_bytes, span_bytes): (u64, u64)) {
    println!(
        "fragmentation, capture on: {rounds} rounds of {PER_ROUND} objects (plain boxes of three \
         sizes, byte buffers, strings), one kept: {live_bytes} live bytes in {span_bytes} span \
         bytes at the end ({:.3}x; bound 2x + {} KiB)",
        span_bytes as f64 / live_bytes as f64,
        allowance() / 1024,
    );
}

#[test]
fn keeping_one_captured_object_in_a_thousand_reuses_the_freed_slots() {
    serially(|| {
        let rounds = 5_000;
        report(rounds, run(rounds, seed(0xF4A7)));
    });
}

#[test]
#[ignore = "long: 100,000 rounds (1e8 objects); run in release"]
fn keeping_one_captured_object_in_a_thousand_reuses_the_freed_slots_100k_rounds() {
    serially(|| {
        let rounds = 100_000;
        report(rounds, run(rounds, seed(0xF4A7)));
    });
}
