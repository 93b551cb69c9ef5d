//! A thread's heap retires at the thread's exit on every platform (a
//! pthread key's destructor on Unix, a fiber-local slot's callback on
//! Windows), whichever runs first of that and the thread's own
//! thread-local destructors: a destructor that runs before it works with
//! the thread's heap, or makes one that still retires; one that runs after
//! it (Windows runs fiber-local callbacks first) finds the heap retired, so
//! its scope serves plain allocations and its frees are pushed one by one.
//! Either way, once the threads are joined, every slot and span is back.
//!
//! Not on Windows with GNU's toolchain: there std's thread-locals, the
//! runtime's included, are boxes behind Windows TLS slots, destroyed one
//! by one among the program's own, so a destructor that runs after the
//! runtime's are gone finds a thread with no heap, not retired, and makes
//! one that never retires (measured under Wine: 2 MiB of spans kept by ten
//! such threads).

use std::cell::RefCell;
use std::thread;

use batch_alloc_rt::testing::Guard;
use batch_alloc_rt::{stats, trim, Batch};

use workloads::testing::{assert_back_at, on_fresh_thread, serially};

const THREADS: usize = if cfg!(miri) { 2 } else { 10 };

type Slot = [u64; 4];

/// A box of another thread's span, freed by this thread-local's
/// destructor after some work in a scope.
struct FreedAtExit(RefCell<Option<Box<Slot>>>);

impl Drop for FreedAtExit {
    fn drop(&mut self) {
        let guard = Guard::new();
        guard.enter();
        let text: String = (0..40).map(|i| char::from(b'a' + i % 26)).collect();
        let mut batch = Batch::<Slot>::with_capacity(16);
        let boxes: Vec<Box<Slot>> = (0..16).map(|i| batch.alloc([i; 4])).collect();
        std::hint::black_box((&text, &boxes));
        drop((boxes, batch, text));
        drop(guard);
        drop(self.0.borrow_mut().take());
    }
}

thread_local! {
    static AT_EXIT: FreedAtExit = const { FreedAtExit(RefCell::new(None)) };
}

#[test]
#[cfg_attr(
    all(windows, target_env = "gnu"),
    ignore = "windows-gnu: a heap made in a thread-local's destructor does not retire"
)]
fn a_thread_locals_destructor_may_free_slots_and_open_scopes() {
    serially(|| {
        let before = stats();
        on_fresh_thread(|| {
            let mut batch = Batch::with_capacity(2 * THREADS);
            let mut threads = Vec::new();
            for has_heap in [false, true] {
                for _ in 0..THREADS {
                    let slot = batch.alloc([7; 4]);
                    threads.push(thread::spawn(move || {
                        if has_heap {
                            drop(Batch::<Slot>::new().alloc([1; 4]));
                        }
                        AT_EXIT.with(|at_exit| *at_exit.0.borrow_mut() = Some(slot));
                    }));
                }
            }
            drop(batch);
            for thread in threads {
                thread.join().expect("the thread ran");
            }
        });
        trim();
        assert_back_at(&before, &stats());
    });
}
