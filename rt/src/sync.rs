//! The atomics of the cross-thread protocols (a span's remote word, owner
//! and links; a heap's mailbox), switchable to loom's for model checking
//! (`RUSTFLAGS="--cfg loom"`, see `loom_model.rs`). Process-wide statics use
//! `core`'s atomics directly: loom's cannot be built in a `static`, and the
//! models check the protocols in isolation.

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64};

pub(crate) use std::sync::atomic::Ordering;

/// Waits a moment for another thread to finish a short critical step.
#[inline]
pub(crate) fn backoff(spins: &mut u32) {
    #[cfg(loom)]
    {
        let _ = spins;
        loom::thread::yield_now();
    }
    #[cfg(not(loom))]
    {
        if *spins < 64 {
            *spins += 1;
            core::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// Marks a window of a cross-thread protocol: a point between two steps
/// where another thread's steps may land. Free in normal builds.
///
/// Under loom every window is a read-modify-write of one shared counter, so
/// that any two windows depend on each other and the model checker tries
/// every order of them. Without it, loom's partial-order reduction, which
/// remembers only the last access to each atomic, can miss a thread's load
/// that races with another thread's later store when that thread loaded the
/// same atomic in between: exactly the shape of a decision read after a
/// compare-and-swap.
#[inline(always)]
pub(crate) fn window() {
    #[cfg(loom)]
    {
        loom::lazy_static! {
            static ref WINDOWS: loom::sync::atomic::AtomicUsize =
                loom::sync::atomic::AtomicUsize::new(0);
        }
        WINDOWS.fetch_add(1, Ordering::Relaxed);
    }
    #[cfg(batch_alloc_race)]
    widen();
}

/// The race amplifier (`RUSTFLAGS="--cfg batch_alloc_race"`): at each window,
/// now and then sleep for a tenth of a millisecond, give up the CPU, or spin
/// for up to a few microseconds, so that other threads' steps land inside
/// windows that are a few instructions wide in a normal build. Draws from a
/// per-thread generator and allocates nothing, so it is safe in the
/// allocator path.
#[cfg(batch_alloc_race)]
#[inline(never)]
fn widen() {
    use core::cell::Cell;
    std::thread_local! {
        static STATE: Cell<u64> = const { Cell::new(0) };
    }
    let draw = STATE
        .try_with(|state| {
            let mut x = state.get();
            if x == 0 {
                x = (state as *const Cell<u64>).addr() as u64 | 1;
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            state.set(x);
            x
        })
        .unwrap_or(1);
    match draw % 256 {
        0 => std::thread::sleep(std::time::Duration::from_micros(100)),
        1..=16 => std::thread::yield_now(),
        17..=80 => {
            for _ in 0..(draw >> 16) % 4096 {
                core::hint::spin_loop();
            }
        }
        _ => {}
    }
}
