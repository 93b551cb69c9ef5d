//! A thread's heap retires whenever in the thread's life it was made: in
//! the thread's code, in a thread-local's destructor, or in the cleanup
//! that runs after those, where std drops the thread's own `Thread` handle
//! (from a pthread-key destructor) and where a program's own pthread-key
//! destructors run. Each test makes its threads, waits until they have
//! fully exited (`pthread_join` returns only after every key destructor of
//! the thread has run) and checks that every slot and span came back.
//!
//! Before heaps retired from a key destructor of their own, a heap made by
//! a free in that cleanup waited for a thread-local destructor that never
//! ran: the free stayed in the heap's outbox and its span never emptied
//! (`span_bytes` showed it, `live_slots` did not).

#![cfg(unix)]

use std::ffi::c_void;
use std::os::unix::thread::JoinHandleExt;
use std::sync::OnceLock;
use std::thread;

use batch_alloc_rt::testing::Guard;
use batch_alloc_rt::{stats, trim, Batch};

use workloads::testing::{assert_back_at, on_fresh_thread, serially};

/// Threads of each kind a test starts (Miri is slow).
const THREADS: usize = if cfg!(miri) { 2 } else { 10 };

type Slot = [u64; 4];

/// Waits for thread `id` to have exited, its key destructors included.
fn join(id: libc::pthread_t) {
    // SAFETY: a thread of this process that nobody else joins or detaches.
    let status = unsafe { libc::pthread_join(id, std::ptr::null_mut()) };
    assert_eq!(status, 0, "pthread_join");
}

/// std's cleanup drops a thread's `Thread` handle after the thread's
/// thread-locals are gone. A thread whose name was made in a capturing
/// scope elsewhere (a slot of another thread's span) frees that slot there:
/// if the thread freed no slot before, that is its first free, and its heap
/// is made then.
#[test]
fn a_heap_made_when_std_drops_the_thread_handle_retires() {
    serially(|| {
        setup();
        let before = stats();
        on_fresh_thread(|| {
            // The names are slots of this thread's runs; everything else the
            // spawns allocate goes to the inner allocator.
            let names: Vec<String> =
                batch_alloc_rt::scope(|| (0..THREADS).map(|i| format!("cleanup-{i}")).collect());
            let threads: Vec<libc::pthread_t> = names
                .into_iter()
                .map(|name| {
                    // The handle's drop leaves the child the last `Thread`, so
                    // the child's cleanup frees the name.
                    let child = thread::Builder::new().name(name).spawn(|| {});
                    child.expect("a thread").into_pthread_t()
                })
                .collect();
            threads.into_iter().for_each(join);
        });
        trim();
        assert_back_at(&before, &stats());
    });
}

/// A program's own pthread-key destructors run in the same cleanup, and
/// may free slots of other threads, open scopes and use batches: on a
/// thread with a heap or without one, before or after the runtime's own
/// key destructor (keys made before the runtime's run first in each round
/// of destructors, keys made after run after it).
#[test]
fn a_heap_made_or_used_by_a_key_destructor_retires() {
    serially(|| {
        setup();
        let keys = keys();
        let before = stats();
        on_fresh_thread(move || {
            // Slots of this thread's span, freed by the threads below in their
            // key destructors while this thread still owns the span.
            let mut batch = Batch::with_capacity(4 * 2 * THREADS);
            let mut threads = Vec::new();
            for key in [keys.early, keys.late] {
                for has_heap in [false, true] {
                    for _ in 0..THREADS {
                        let slot = Handed(Box::into_raw(batch.alloc([7; 4])));
                        let child = thread::spawn(move || {
                            let slot = slot;
                            if has_heap {
                                let mut own = Batch::<Slot>::new();
                                drop(own.alloc([1; 4]));
                            }
                            // SAFETY: a key of this process; the destructor
                            // frees the box.
                            let set = unsafe { libc::pthread_setspecific(key, slot.0.cast()) };
                            assert_eq!(set, 0, "pthread_setspecific");
                        });
                        threads.push(child.into_pthread_t());
                    }
                }
            }
            drop(batch);
            threads.into_iter().for_each(join);
        });
        trim();
        assert_back_at(&before, &stats());
    });
}

/// A box handed to another thread as a raw pointer, for its key's value.
struct Handed(*mut Slot);

// SAFETY: the box is given up by the thread that sends it.
unsafe impl Send for Handed {}

/// Work a key destructor does with the runtime: a scope that serves a
/// string, a batch of boxes, all freed again.
fn scoped_work() {
    let guard = Guard::new();
    guard.enter();
    let text: String = (0..40).map(|i| char::from(b'a' + i % 26)).collect();
    let mut batch = Batch::<Slot>::with_capacity(32);
    let boxes: Vec<Box<Slot>> = (0..32).map(|i| batch.alloc([i; 4])).collect();
    let sum: u64 = boxes.iter().map(|b| b[3]).sum();
    drop((boxes, batch));
    std::hint::black_box((text, sum));
    drop(guard);
}

/// The early key's destructor: the free first (the thread's first free of
/// a slot, when it has no heap), then the scope.
unsafe extern "C" fn free_then_scope(slot: *mut c_void) {
    // SAFETY: the value set is a box of `Slot` given up by its thread.
    drop(unsafe { Box::from_raw(slot.cast::<Slot>()) });
    scoped_work();
}

/// The late key's destructor: the scope first, then the free.
unsafe extern "C" fn scope_then_free(slot: *mut c_void) {
    scoped_work();
    // SAFETY: as above.
    drop(unsafe { Box::from_raw(slot.cast::<Slot>()) });
}

#[derive(Clone, Copy)]
struct Keys {
    early: libc::pthread_key_t,
    late: libc::pthread_key_t,
}

static EARLY: OnceLock<libc::pthread_key_t> = OnceLock::new();
static LATE: OnceLock<libc::pthread_key_t> = OnceLock::new();

fn make_key(destructor: unsafe extern "C" fn(*mut c_void)) -> libc::pthread_key_t {
    let mut key = 0;
    // SAFETY: writes the new key into `key`.
    let status = unsafe { libc::pthread_key_create(&mut key, Some(destructor)) };
    assert_eq!(status, 0, "pthread_key_create");
    key
}

/// Makes the early key, if the constructor below has not: before any heap
/// of the test's own.
fn setup() {
    EARLY.get_or_init(|| make_key(free_then_scope));
}

/// The early key is made before `main`, so before the runtime makes its own
/// key with the first heap of this binary, whichever of the binary's tests
/// runs first and makes it. (The constructors' section: ELF's, or Mach-O's
/// on Apple's systems.)
#[used]
#[cfg_attr(not(target_vendor = "apple"), link_section = ".init_array")]
#[cfg_attr(target_vendor = "apple", link_section = "__DATA,__mod_init_func")]
static MAKE_THE_EARLY_KEY: extern "C" fn() = make_the_early_key;

extern "C" fn make_the_early_key() {
    setup();
}

/// The two keys; the late one made once a heap exists.
fn keys() -> Keys {
    let early = *EARLY.get().expect("setup made the early key");
    let late = *LATE.get_or_init(|| {
        on_fresh_thread(|| drop(Batch::<Slot>::new().alloc([0; 4])));
        make_key(scope_then_free)
    });
    Keys { early, late }
}

/// A thread that claims the heap record an exited thread handed back
/// starts its runs small, as a new heap's: its first refill of a class
/// asks for a few slots, then doubles. (A retired record kept its runs'
/// requests, so that the next thread's first refill of a class the last
/// one had used much took a whole span.)
#[test]
fn a_heap_record_handed_back_starts_its_runs_small() {
    type Boxed = [u64; 8];
    const BOXES: usize = 100;
    serially(|| {
        // Makes its runs of `Boxed`'s class ask for whole spans, and exits.
        on_fresh_thread(|| {
            let boxes: Vec<Box<Boxed>> =
                batch_alloc_rt::scope(|| (0..5_000).map(|i| Box::new([i; 8])).collect());
            drop(boxes);
        });
        // Claims the record handed back last: the one above.
        let refills = on_fresh_thread(|| {
            let mut boxes: Vec<Box<Boxed>> = Vec::with_capacity(BOXES);
            let before = stats().reserve_calls;
            batch_alloc_rt::scope(|| boxes.extend((0..BOXES as u64).map(|i| Box::new([i; 8]))));
            stats().reserve_calls - before
        });
        // From a first refill of 8 slots: 8, 16, 32 and 64 (or, under Miri's
        // smaller spans, more). One refill would mean a whole span at once.
        assert!(refills >= 4, "{BOXES} boxes took {refills} refills");
    });
}
