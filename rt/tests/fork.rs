//! `fork()` while other threads batch, free across threads and come and
//! go. A thread forks hundreds of times, every other time from a new thread
//! of its own that has never batched (so that the child must make its heap);
//! meanwhile two workers box objects through batches and hand some to each
//! other and to the forking thread, which hands some of its own back, to be
//! freed there (frees into spans of a thread that is forking); and a spawner
//! keeps starting short-lived threads that batch, hand boxes on and exit.
//! Whatever lock or protocol bit another thread held at the fork, every
//! child must check and free the boxes it inherited, run a batched loop,
//! free its boxes and exit promptly; a child that has not exited after
//! `CHILD_TIMEOUT` is killed and fails the test.
//!
//! The child only runs the allocator and checks that cannot panic, then
//! leaves with `_exit`; it reports a failure on stderr through `write(2)`
//! and its exit status. Rounds: `FORK_ROUNDS` (200 in debug builds, 1,000
//! in release by default). CI runs
//! `FORK_ROUNDS=1000 cargo test -p batch-alloc-rt --release --test fork`,
//! and again under the race amplifier (`RUSTFLAGS="--cfg batch_alloc_race"`),
//! which widens the windows a fork must land in: with the runtime's fork
//! handlers turned off (a scratch copy of rt), the amplified run hung a
//! child within 210 rounds in each of three runs, the plain run in none.
//!
//! A second test forks while another thread makes the process's first heap
//! (reserving the region, registering the fork handlers, making the heap
//! registry's first record): a fork can land while a one-time run is under
//! way in that thread, which does not exist in the child, and the child
//! must still make its own heap. Each attempt is a fresh process (the test
//! binary run again), since a process makes its first heap once; attempts:
//! `FIRST_INIT_ROUNDS` (100 by default). The race amplifier widens the
//! windows inside the one-time runs. Run beside the first test under the
//! amplifier, it hung in two of three runs while each module registered the
//! fork handlers of its own locks (the handlers' order, the reverse of
//! registration, was not the order the locks nest in); `locks.rs` now holds
//! them all, taken in one order.
//!
//! A test binary of its own: a fork copies only the forking thread, and
//! every other thread the process has at that moment is part of what the
//! test controls (its workers and spawner, and nothing else); the second
//! test needs a process that has made no heap yet; and CI runs this binary
//! by name, in release and under the race amplifier.

#![cfg(target_os = "linux")]

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use batch_alloc_rt::testing::limits::REGION_BYTES;
use batch_alloc_rt::testing::size_classes;
use batch_alloc_rt::{is_active, stats, Batch, BatchAlloc, Stats};
use workloads::in_child;
use workloads::testing::{
    assert_back_at, assert_live, overlap, seeded, wait_or_kill, Batches, Filled, Forked, Patterned,
    RngExt, SeededRng,
};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

const WORKERS: usize = 2;
/// Boxes a worker keeps before it frees a random part of them.
const WORKER_KEEPS: usize = 2_000;
/// Boxes the forking thread keeps across forks, its own and other threads'.
const FORKER_KEEPS: usize = 300;
/// Boxes a child makes in its batched loop.
const CHILD_BOXES: usize = 300;
/// How long a child may take to exit before it counts as hung.
const CHILD_TIMEOUT: Duration = Duration::from_secs(20);
/// Parcels an inbox holds; a thread that finds it full frees the parcel
/// itself, so that no backlog builds up when the receiver is slower.
const INBOX: usize = 8;

type Parcel = Vec<(Filled, u64)>;

/// Ids by maker, so that every live box has its own pattern.
fn id(maker: u64, serial: u64) -> u64 {
    maker << 48 | serial
}

fn check_and_free(parcel: Parcel) -> u64 {
    let n = parcel.len() as u64;
    for (b, id) in parcel {
        b.check(id);
    }
    n
}

/// Sends `parcel` to be freed by the thread behind `outbox`, or frees it
/// here if that inbox is full or closed; returns how many boxes were freed
/// here.
fn hand_over(outbox: &SyncSender<Parcel>, parcel: Parcel) -> u64 {
    match outbox.try_send(parcel) {
        Ok(()) => 0,
        Err(TrySendError::Full(parcel) | TrySendError::Disconnected(parcel)) => {
            check_and_free(parcel)
        }
    }
}

/// Boxes `count` objects from one set of batches; returns them with ids.
fn make(rng: &mut SeededRng, maker: u64, serial: &mut u64, count: usize) -> Parcel {
    let hint = [0, count / 2, count, 2 * count][rng.random_range(0..4)];
    let mut batches = Batches::with_capacity(hint);
    (0..count)
        .map(|_| {
            *serial += 1;
            let id = id(maker, *serial);
            (batches.alloc(rng.random_range(0..3), id), id)
        })
        .collect()
}

/// A long-lived worker: batches, frees some boxes here, hands some to the
/// other workers and the forking thread, keeps some. Returns how many boxes
/// it freed.
fn worker(
    me: usize,
    seed: u64,
    stop: &AtomicBool,
    inbox: Receiver<Parcel>,
    outboxes: Vec<SyncSender<Parcel>>,
    to_forker: SyncSender<Parcel>,
) -> u64 {
    let mut rng = seeded(seed ^ (me as u64) << 32);
    let (mut kept, mut serial, mut freed) = (Parcel::new(), 0, 0);
    let mut round = 0u64;
    while !stop.load(Ordering::Relaxed) {
        round += 1;
        let count = 1 + rng.random_range(0..400);
        let mut parcels: Vec<Parcel> = outboxes.iter().map(|_| Parcel::new()).collect();
        for (b, id) in make(&mut rng, me as u64 + 1, &mut serial, count) {
            match rng.random_range(0..4) {
                0 => freed += check_and_free(vec![(b, id)]),
                1 => kept.push((b, id)),
                _ => parcels[rng.random_range(0..outboxes.len())].push((b, id)),
            }
        }
        for (outbox, parcel) in outboxes.iter().zip(parcels) {
            freed += hand_over(outbox, parcel);
        }
        if rng.random_ratio(1, 8) {
            let at = kept.len().saturating_sub(1 + rng.random_range(0..32));
            freed += hand_over(&to_forker, kept.split_off(at));
        }
        while let Ok(parcel) = inbox.try_recv() {
            freed += check_and_free(parcel);
        }
        if kept.len() > WORKER_KEEPS {
            if round % 16 == 0 {
                assert_live(&kept);
            }
            let at = rng.random_range(0..kept.len());
            freed += check_and_free(kept.split_off(at));
        }
    }
    freed += check_and_free(kept);
    drop(outboxes);
    freed + inbox.into_iter().map(check_and_free).sum::<u64>()
}

/// Keeps starting two short-lived threads at a time, each of which
/// batches, frees some boxes, hands the rest to a worker and exits.
/// Returns how many it started.
fn spawner(seed: u64, stop: &AtomicBool, outboxes: Vec<SyncSender<Parcel>>) -> u64 {
    let mut started = 0;
    while !stop.load(Ordering::Relaxed) {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                started += 1;
                let (index, outboxes) = (started, outboxes.clone());
                thread::spawn(move || {
                    let mut rng = seeded(seed ^ index << 8);
                    let count = 20 + rng.random_range(0..300);
                    let mut serial = 0;
                    let mut boxes = make(&mut rng, 0x100 + index, &mut serial, count);
                    let handed = boxes.split_off(rng.random_range(0..count));
                    hand_over(&outboxes[rng.random_range(0..outboxes.len())], handed);
                    check_and_free(boxes);
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }
    started
}

/// What the forking thread measured.
struct Forks {
    rounds: usize,
    slowest: Duration,
    total: Duration,
}

/// Forks `rounds` times, waiting for each child. On even rounds this
/// thread forks, keeping boxes (its own, in a batch still open, and other
/// threads') across the fork, handing some of its own to the workers, and
/// a burst that fills spans to `to_freer` just before the fork; on odd
/// rounds a new thread that has never batched forks.
fn forker(
    rounds: usize,
    seed: u64,
    inbox: Receiver<Parcel>,
    to_workers: Vec<SyncSender<Parcel>>,
    to_freer: SyncSender<Parcel>,
) -> Forks {
    // Two spans' worth of the largest boxes: the batch parks the spans it
    // fills on the full queue, armed, so the first remote free into each
    // notifies this thread, while it forks.
    let burst = 2 * size_classes().iter().find(|c| c.size >= 256).unwrap().slots as usize;
    let mut rng = seeded(seed ^ 0xF0F0);
    let mut held = Parcel::new();
    let mut serial = 0;
    let mut slowest = Duration::ZERO;
    let start = Instant::now();
    for round in 0..rounds {
        let forked_at = Instant::now();
        let outcome = if round % 2 == 1 {
            thread::spawn(|| fork_and_wait(&mut Parcel::new(), Batches::default()))
                .join()
                .unwrap()
        } else {
            let mut batches = Batches::with_capacity(rng.random_range(0..64));
            for _ in 0..rng.random_range(0..32) {
                serial += 1;
                let id = id(0xF0, serial);
                held.push((batches.alloc(rng.random_range(0..3), id), id));
            }
            held.extend(inbox.try_iter().flatten());
            if held.len() > FORKER_KEEPS {
                let excess = held.len() - FORKER_KEEPS;
                let parcel = held.drain(..excess).collect();
                hand_over(&to_workers[rng.random_range(0..WORKERS)], parcel);
            }
            assert_live(&held);
            let mut filler = Batches::default();
            let parcel = (0..burst)
                .map(|_| {
                    serial += 1;
                    let id = id(0xF0, serial);
                    (filler.alloc(2, id), id)
                })
                .collect();
            drop(filler);
            hand_over(&to_freer, parcel);
            fork_and_wait(&mut held, batches)
        };
        if let Err(why) = outcome {
            panic!("round {round} of {rounds}: {why}");
        }
        slowest = slowest.max(forked_at.elapsed());
    }
    check_and_free(held);
    Forks {
        rounds,
        slowest,
        total: start.elapsed(),
    }
}

/// Forks; the child runs [`child`] with `held` and `batches`, the parent
/// drops `batches` and waits for the child.
fn fork_and_wait(held: &mut Parcel, batches: Batches) -> Result<(), String> {
    // SAFETY: the child runs only `child`, which ends in `_exit`; it
    // touches nothing another thread may have held at the fork but the
    // allocator (and the C library's malloc, which handles fork).
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        child(std::mem::take(held), batches);
    }
    if pid < 0 {
        return Err(format!("fork failed: {}", errno()));
    }
    drop(batches);
    wait(pid)
}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

/// Waits for child `pid` to exit with status 0, at most `CHILD_TIMEOUT`;
/// kills it if it has not.
fn wait(pid: libc::pid_t) -> Result<(), String> {
    match wait_or_kill(pid, CHILD_TIMEOUT) {
        Forked::Exited(0) => Ok(()),
        Forked::Exited(code) => Err(format!(
            "the child failed (exit status {code}; stderr has why)"
        )),
        Forked::Signalled(signal) => Err(format!("the child died of signal {signal}")),
        Forked::Hung => Err(format!(
            "the child did not exit within {CHILD_TIMEOUT:?} (killed)"
        )),
    }
}

/// The child: runs [`child_work`] and leaves with `_exit` (no destructors,
/// no `atexit` handlers, no return into the forking thread's code), status
/// 0 if every check held.
fn child(held: Parcel, batches: Batches) -> ! {
    let outcome = catch_unwind(AssertUnwindSafe(|| child_work(held, batches)));
    let failure = match outcome {
        Ok(Ok(())) => None,
        Ok(Err(why)) => Some(why),
        Err(_) => Some("a panic"),
    };
    if let Some(why) = failure {
        for part in [&b"fork child: "[..], why.as_bytes(), b"\n"] {
            // SAFETY: writes from a valid buffer to stderr.
            unsafe { libc::write(2, part.as_ptr().cast(), part.len()) };
        }
    }
    // SAFETY: ends the child at once; nothing of the parent's runs.
    unsafe { libc::_exit(i32::from(failure.is_some())) }
}

/// Checks and frees half the boxes the child inherited, runs a batched
/// loop beside the other half, checks everything live, frees it all, and
/// checks the statistics. Nothing here panics on a failed check.
fn child_work(mut held: Parcel, batches: Batches) -> Result<(), &'static str> {
    if held.iter().any(|(b, id)| !b.intact(*id)) {
        return Err("an inherited box is corrupted");
    }
    // The forking thread's own boxes and other threads', freed here; the
    // open batch gives its unused slots back.
    let kept = held.split_off(held.len() / 2);
    drop(held);
    drop(batches);
    let before = stats();
    let mut batches = Batches::with_capacity(CHILD_BOXES);
    let made: Parcel = (0..CHILD_BOXES)
        .map(|i| {
            let id = id(0xC0, i as u64);
            (batches.alloc(i, id), id)
        })
        .collect();
    drop(batches);
    let mid = stats();
    if made.iter().any(|(b, id)| !b.intact(*id)) {
        return Err("a box made in the child is corrupted");
    }
    let mut ranges: Vec<_> = made.iter().chain(&kept).map(|(b, _)| b.range()).collect();
    if overlap(&mut ranges).is_some() {
        return Err("two live boxes overlap");
    }
    if kept.iter().any(|(b, id)| !b.intact(*id)) {
        return Err("an inherited box was overwritten");
    }
    drop(made);
    let after = stats();
    drop(kept);
    let last = stats();
    let sane = |s: &Stats| s.span_bytes <= REGION_BYTES as u64;
    if ![before, mid, after, last].iter().all(sane) {
        return Err("span bytes exceed the region");
    }
    if mid.live_slots != before.live_slots + CHILD_BOXES as u64
        || mid.batched_boxes != before.batched_boxes + CHILD_BOXES as u64
    {
        return Err("the batched loop's boxes are not all slots");
    }
    if after.live_slots != before.live_slots {
        return Err("the batched loop's slots did not all come back");
    }
    if last.live_slots > after.live_slots {
        return Err("freeing the inherited boxes added live slots");
    }
    Ok(())
}

fn rounds() -> usize {
    let default = if cfg!(debug_assertions) { 200 } else { 1_000 };
    std::env::var("FORK_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot fork")]
fn forks_while_threads_batch_free_across_threads_and_exit() {
    assert!(is_active());
    let seed = 0xF02C;
    let before = stats();
    let stop = Arc::new(AtomicBool::new(false));
    let (to_forker, forker_inbox) = sync_channel(INBOX);
    let (senders, inboxes): (Vec<_>, Vec<_>) = (0..WORKERS).map(|_| sync_channel(INBOX)).unzip();
    let workers: Vec<_> = inboxes
        .into_iter()
        .enumerate()
        .map(|(me, inbox)| {
            let (stop, outboxes, to_forker) = (stop.clone(), senders.clone(), to_forker.clone());
            thread::spawn(move || worker(me, seed, &stop, inbox, outboxes, to_forker))
        })
        .collect();
    let spawner = {
        let (stop, outboxes) = (stop.clone(), senders.clone());
        thread::spawn(move || spawner(seed, &stop, outboxes))
    };
    // Frees what the forking thread hands it as soon as it arrives.
    let (to_freer, freer_inbox) = sync_channel(INBOX);
    let freer = thread::spawn(move || freer_inbox.into_iter().map(check_and_free).sum::<u64>());
    drop(to_forker);
    // A thread of its own, so that its heap retires before the last reading.
    let rounds = rounds();
    let forks = thread::spawn(move || forker(rounds, seed, forker_inbox, senders, to_freer)).join();
    stop.store(true, Ordering::Relaxed);
    let started = spawner.join().unwrap();
    let freed = freer.join().unwrap() + workers.into_iter().map(|w| w.join().unwrap()).sum::<u64>();
    let forks = forks.unwrap_or_else(|panic| resume_unwind(panic));
    println!(
        "fork: {} forks in {:.2?} (slowest fork to exit {:.2?}) while {WORKERS} workers \
         and {started} short-lived threads freed {freed} boxes",
        forks.rounds, forks.total, forks.slowest,
    );
    assert!(started > 0 && freed > 0);
    assert_back_at(&before, &stats());
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot fork")]
fn forks_while_another_thread_makes_the_first_heap() {
    let rounds = std::env::var("FIRST_INIT_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    for round in 0..rounds {
        // Each round's child reaches this call in its first round, and runs
        // the attempt there.
        let child = in_child!(
            forks_while_another_thread_makes_the_first_heap,
            |_| {},
            || {
                if let Err(why) = fork_during_first_init() {
                    panic!("{why}");
                }
            }
        );
        assert!(child.status.success(), "round {round} of {rounds}: {child}");
    }
}

/// In a process that has made no heap yet: one thread makes the first
/// while this one forks as soon as it starts; the child (only the forking
/// thread, with whatever the other had under way) makes its own heap,
/// batches, frees and exits.
fn fork_during_first_init() -> Result<(), String> {
    let started = Arc::new(AtomicBool::new(false));
    let first = {
        let started = started.clone();
        thread::spawn(move || {
            started.store(true, Ordering::Release);
            let mut batch = Batch::with_capacity(64);
            let boxes: Vec<Box<[u64; 4]>> = (0..64).map(|i| batch.alloc([i; 4])).collect();
            drop(batch);
            assert!(boxes.iter().enumerate().all(|(i, b)| b[3] == i as u64));
        })
    };
    while !started.load(Ordering::Acquire) {
        std::hint::spin_loop();
    }
    // SAFETY: the child runs the allocator only, then leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let before = stats().batched_boxes;
        let mut batch = Batch::with_capacity(64);
        let boxes: Vec<Box<[u64; 4]>> = (0..64).map(|i| batch.alloc([i; 4])).collect();
        drop(batch);
        let intact = boxes.iter().enumerate().all(|(i, b)| b[3] == i as u64);
        drop(boxes);
        let slots = stats().batched_boxes == before + 64;
        // SAFETY: ends the child at once.
        unsafe { libc::_exit(if intact && slots { 0 } else { 1 }) };
    }
    if pid < 0 {
        return Err(format!("fork failed: {}", errno()));
    }
    first
        .join()
        .map_err(|_| "the first heap's thread panicked")?;
    wait(pid)
}

/// Forks while another thread gives frames back: it builds and drops more
/// boxes than the resident pool holds, so that frames wait on the pool's
/// stacks, then calls `trim()`, which walks those stacks; the decay walks
/// them too. A fork that lands inside a walk must not lose the frames the
/// walk holds, nor leave the pool's counts off: each child calls `trim()`
/// and must then find nothing cached. In a fresh process (the test binary
/// run again), so that no other test's thread gives frames back at the
/// fork; forks: `WALK_FORKS` (60 by default).
#[test]
#[cfg_attr(miri, ignore = "Miri cannot fork")]
fn forks_while_another_thread_gives_frames_back() {
    let child = in_child!(forks_while_another_thread_gives_frames_back, |_| {}, || {
        let forks = std::env::var("WALK_FORKS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(60);
        let outcomes = fork_while_frames_go_back(forks);
        let left: Vec<_> = outcomes.iter().filter(|&&(_, c)| c != Some(0)).collect();
        println!(
            "fork during the pool's walks: {forks} forks, {} children with frames cached after trim",
            left.len()
        );
        assert!(
            left.is_empty(),
            "children left with frames cached after trim (round, frames up to 100): {left:?}"
        );
    });
    assert!(child.status.success(), "{child}");
    println!(
        "{}",
        child
            .output
            .lines()
            .find(|l| l.starts_with("fork during"))
            .unwrap_or("")
    );
}

/// Forks `forks` times while a walker thread builds and drops 96 MiB of
/// boxes and trims, in a loop; each child trims and reports what stays
/// cached. Returns each round and the frames the child found cached after
/// its trim (in its exit status, up to 100), or `None` if it failed.
fn fork_while_frames_go_back(forks: usize) -> Vec<(usize, Option<u64>)> {
    const BOXES: usize = 96 << 20 >> 12;
    let stop = Arc::new(AtomicBool::new(false));
    let walker = {
        let stop = stop.clone();
        thread::spawn(move || {
            let mut boxes = Vec::with_capacity(BOXES);
            while !stop.load(Ordering::Relaxed) {
                let mut batch = Batch::with_capacity(BOXES);
                boxes.extend((0..BOXES).map(|i| batch.alloc([i as u8; 4096])));
                drop(batch);
                boxes.clear();
                batch_alloc_rt::trim();
            }
        })
    };
    let mut rng = seeded(0x7A1C);
    let outcomes = (0..forks)
        .map(|round| {
            thread::sleep(Duration::from_micros(rng.random_range(0..20_000)));
            let ended = workloads::testing::fork_and_wait(CHILD_TIMEOUT, || {
                batch_alloc_rt::trim();
                let frames =
                    stats().cached_bytes / batch_alloc_rt::testing::limits::FRAME_SIZE as u64;
                frames.min(100) as i32
            });
            let cached = match ended {
                Forked::Exited(frames) => Some(frames as u64),
                _ => None,
            };
            (round, cached)
        })
        .collect();
    stop.store(true, Ordering::Relaxed);
    walker.join().unwrap();
    outcomes
}

/// Environment variables a settings child gets beside its own, so that the
/// settings' first read, which looks at every variable, takes a while.
const FILLER_VARS: usize = 4_000;
/// The child's delay between the reader's start and the fork, in
/// microseconds.
const DELAY_ENV: &str = "BA_RT_TEST_FORK_DELAY_US";

/// A child forked while another thread reads the settings (the
/// environment, at the process's first scope) must open its own first
/// scope and allocate (settings behind std's `OnceLock`, which no fork
/// takes over, would hang such a child at its first scope). Each attempt is a fresh process (the test binary run again),
/// since a process reads its settings once; attempts: `SETTINGS_ROUNDS`
/// (20 by default). The window is widened as the reproducers did:
/// a few thousand environment variables make the read itself slow, and a
/// misspelled `BATCH_ALLOC_*` variable makes the reader write a warning
/// into a stderr that is a full pipe, where it blocks until the child is
/// done. The fork lands after a delay that varies by round (0 to 2 ms;
/// the read took 1.5 ms in a debug build): inside the read, or while the
/// warning blocks.
#[test]
#[cfg_attr(miri, ignore = "Miri cannot fork")]
fn forks_while_another_thread_reads_the_settings() {
    let rounds = std::env::var("SETTINGS_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    for round in 0..rounds {
        let settings = |command: &mut Command| {
            command
                .env("BATCH_ALLOC_CAPTUER", "boxes")
                .env(DELAY_ENV, (round * 397 % 2_000).to_string());
            for i in 0..FILLER_VARS {
                command.env(
                    format!("BA_RT_TEST_FILLER_{i}"),
                    "a value long enough to copy",
                );
            }
        };
        let child = in_child!(
            forks_while_another_thread_reads_the_settings,
            settings,
            || {
                let delay = std::env::var(DELAY_ENV)
                    .ok()
                    .and_then(|us| us.parse().ok())
                    .unwrap_or(0);
                if let Err(why) = fork_during_settings_read(Duration::from_micros(delay)) {
                    panic!("{why}");
                }
            }
        );
        assert!(child.status.success(), "round {round} of {rounds}: {child}");
    }
}

/// With stderr a full pipe: one thread opens the process's first scope,
/// which reads the settings; this one forks `delay` after it starts. The
/// child opens its own first scope, allocates in it and exits; then the
/// pipe is drained, which lets the reader go on.
fn fork_during_settings_read(delay: Duration) -> Result<(), String> {
    let stderr = FullStderr::new()?;
    let started = Arc::new(AtomicBool::new(false));
    let reader = {
        let started = started.clone();
        thread::spawn(move || {
            started.store(true, Ordering::Release);
            batch_alloc_rt::scope(|| ());
        })
    };
    while !started.load(Ordering::Acquire) {
        std::hint::spin_loop();
    }
    thread::sleep(delay);
    // SAFETY: the child runs the allocator and a scope only, then leaves
    // with `_exit`.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // The full pipe widens the parent's window; what the child itself
        // may warn (if it reads the settings itself) goes nowhere.
        stderr.to_null_in_child();
        let before = stats();
        let boxes: Vec<Box<[u64; 4]>> =
            batch_alloc_rt::scope(|| (0..64).map(|i| Box::new([i; 4])).collect());
        let intact = boxes.iter().enumerate().all(|(i, b)| b[3] == i as u64);
        let scoped = stats().scoped_allocations >= before.scoped_allocations + 64;
        drop(boxes);
        // SAFETY: ends the child at once.
        unsafe { libc::_exit(if intact && scoped { 0 } else { 1 }) };
    }
    let outcome = match pid {
        pid if pid < 0 => Err(format!("fork failed: {}", errno())),
        pid => wait(pid),
    };
    stderr.drain();
    reader.join().map_err(|_| "the reader panicked")?;
    drop(stderr);
    outcome
}

/// This process's stderr replaced by a pipe that is full, so that a write
/// to it blocks until [`drain`](FullStderr::drain); the old stderr comes
/// back on drop.
struct FullStderr {
    saved: libc::c_int,
    read_end: libc::c_int,
    write_end: libc::c_int,
}

impl FullStderr {
    fn new() -> Result<FullStderr, String> {
        let mut fds = [0; 2];
        // SAFETY: writes two descriptors into `fds`.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return Err(format!("pipe failed: {}", errno()));
        }
        let [read_end, write_end] = fds;
        set_nonblocking(write_end, true);
        let chunk = [b'.'; 4096];
        // SAFETY: writes from a valid buffer into the pipe, until full.
        while unsafe { libc::write(write_end, chunk.as_ptr().cast(), chunk.len()) } > 0 {}
        set_nonblocking(write_end, false);
        // SAFETY: plain descriptor calls on descriptors this process owns.
        let saved = unsafe { libc::dup(2) };
        // SAFETY: as above.
        if saved < 0 || unsafe { libc::dup2(write_end, 2) } < 0 {
            return Err(format!("dup failed: {}", errno()));
        }
        Ok(FullStderr {
            saved,
            read_end,
            write_end,
        })
    }

    /// Empties the pipe, so that a write blocked on it goes through.
    fn drain(&self) {
        set_nonblocking(self.read_end, true);
        let mut buffer = [0u8; 4096];
        // SAFETY: reads into a valid buffer until the pipe is empty.
        while unsafe { libc::read(self.read_end, buffer.as_mut_ptr().cast(), buffer.len()) } > 0 {}
    }

    /// In a forked child: stderr becomes /dev/null.
    fn to_null_in_child(&self) {
        // SAFETY: opens a path from a valid C string; dup2 on the result.
        unsafe {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY);
            libc::dup2(null, 2);
        }
    }
}

impl Drop for FullStderr {
    fn drop(&mut self) {
        // SAFETY: puts the saved stderr back and closes this one's
        // descriptors, all this process's.
        unsafe {
            libc::dup2(self.saved, 2);
            libc::close(self.saved);
            libc::close(self.read_end);
            libc::close(self.write_end);
        }
    }
}

fn set_nonblocking(fd: libc::c_int, on: bool) {
    // SAFETY: reads and sets the flags of a descriptor this process owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        let flags = match on {
            true => flags | libc::O_NONBLOCK,
            false => flags & !libc::O_NONBLOCK,
        };
        libc::fcntl(fd, libc::F_SETFL, flags);
    }
}
