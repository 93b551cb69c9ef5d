//! The runtime's synchronisation primitives: the atomics of the
//! cross-thread protocols (switchable to loom's), one spin lock, one
//! lock-free stack of frame indices, and the markers of protocol windows.
//!
//! The atomics inside spans and heap records are loom's under
//! `RUSTFLAGS="--cfg loom"` (see `loom_model.rs`); process-wide statics use
//! `core`'s directly, since loom's cannot be built in a `static`, and the
//! models check the protocols in isolation.

use core::sync::atomic::AtomicBool;

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64};

pub(crate) use core::sync::atomic::Ordering;

#[cfg(any(not(loom), batch_alloc_race))]
use crate::os;

/// Waits a moment for another thread to finish a short critical step:
/// spins at first, then gives up the CPU.
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
            os::yield_cpu();
        }
    }
}

/// A lock for the runtime's rare, short critical sections (committing
/// memory, carving heap records, reserving the region). Never taken on a
/// path that frees or hands out a slot.
pub(crate) struct SpinLock {
    locked: AtomicBool,
}

impl SpinLock {
    pub(crate) const fn new() -> SpinLock {
        SpinLock {
            locked: AtomicBool::new(false),
        }
    }

    pub(crate) fn lock(&self) {
        let mut spins = 0;
        // Acquire: the previous holder's writes are visible.
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            backoff(&mut spins);
        }
    }

    pub(crate) fn unlock(&self) {
        // Release: this holder's writes are visible to the next.
        self.locked.store(false, Ordering::Release);
    }
}

/// Runs a function once per process; callers that come while it runs wait
/// until it is done. (`std::sync::Once` may park, which is fine, but the
/// optimiser cannot see that it never unwinds; see `NoUnwind`.)
pub(crate) struct RunOnce {
    state: core::sync::atomic::AtomicU8,
}

impl RunOnce {
    const NOT_RUN: u8 = 0;
    const RUNNING: u8 = 1;
    const DONE: u8 = 2;

    pub(crate) const fn new() -> RunOnce {
        RunOnce {
            state: core::sync::atomic::AtomicU8::new(Self::NOT_RUN),
        }
    }

    pub(crate) fn run(&self, f: impl FnOnce()) {
        // Acquire / Release: whoever sees DONE sees what `f` did.
        if self.state.load(Ordering::Acquire) == Self::DONE {
            return;
        }
        if self
            .state
            .compare_exchange(
                Self::NOT_RUN,
                Self::RUNNING,
                Ordering::Acquire,
                Ordering::Acquire,
            )
            .is_ok()
        {
            f();
            self.state.store(Self::DONE, Ordering::Release);
            return;
        }
        let mut spins = 0;
        while self.state.load(Ordering::Acquire) != Self::DONE {
            backoff(&mut spins);
        }
    }
}

/// What an [`IndexStack`]'s top word is made of: a `core` atomic for the
/// shared pool, a loom one inside heap records under the models.
pub(crate) trait StackWord {
    fn load(&self, order: Ordering) -> u64;
    fn compare_exchange_weak(
        &self,
        current: u64,
        new: u64,
        success: Ordering,
        failure: Ordering,
    ) -> Result<u64, u64>;
}

macro_rules! stack_word {
    ($atomic:ty) => {
        impl StackWord for $atomic {
            #[inline]
            fn load(&self, order: Ordering) -> u64 {
                <$atomic>::load(self, order)
            }
            #[inline]
            fn compare_exchange_weak(
                &self,
                current: u64,
                new: u64,
                success: Ordering,
                failure: Ordering,
            ) -> Result<u64, u64> {
                <$atomic>::compare_exchange_weak(self, current, new, success, failure)
            }
        }
    };
}

stack_word!(core::sync::atomic::AtomicU64);
#[cfg(loom)]
stack_word!(loom::sync::atomic::AtomicU64);

/// A lock-free stack (Treiber's) of frame indices, linked through a field
/// of each frame's metadata. The top word holds the top index + 1 (0 for
/// empty) in its low half and a tag bumped by every push and pop in its high
/// half, so that a pop whose compare-and-swap read a stale top fails rather
/// than link in a frame that has moved (the ABA problem).
pub(crate) struct IndexStack<W = core::sync::atomic::AtomicU64> {
    top: W,
}

impl IndexStack {
    pub(crate) const fn new() -> IndexStack {
        IndexStack {
            top: core::sync::atomic::AtomicU64::new(0),
        }
    }
}

impl<W: StackWord> IndexStack<W> {
    /// A stack over the given (zero) word.
    pub(crate) fn over(top: W) -> IndexStack<W> {
        IndexStack { top }
    }

    /// Pushes `index`, whose link field is `link`. Release: what the pusher
    /// wrote before is visible to whoever pops or takes it.
    pub(crate) fn push(&self, index: u32, link: &AtomicU32) {
        let mut top = self.top.load(Ordering::Relaxed);
        loop {
            link.store(top as u32, Ordering::Relaxed);
            let new = next_tag(top) | (index as u64 + 1);
            window();
            match self
                .top
                .compare_exchange_weak(top, new, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(seen) => top = seen,
            }
        }
    }

    /// Pops the top index; `link_of` names the link field of an index.
    pub(crate) fn pop<'a>(&self, link_of: impl Fn(u32) -> &'a AtomicU32) -> Option<u32> {
        let mut top = self.top.load(Ordering::Acquire);
        loop {
            let index = (top as u32).checked_sub(1)?;
            // May read the link of a frame another thread popped meanwhile;
            // the tag then makes the compare-and-swap below fail.
            let next = link_of(index).load(Ordering::Relaxed);
            let new = next_tag(top) | next as u64;
            window();
            match self
                .top
                .compare_exchange_weak(top, new, Ordering::Acquire, Ordering::Acquire)
            {
                Ok(_) => return Some(index),
                Err(seen) => top = seen,
            }
        }
    }

    /// Takes the whole stack at once; returns the first index + 1 (0 for
    /// none), the rest following its links. Acquire: the pushers' writes are
    /// visible.
    pub(crate) fn take_all(&self) -> u32 {
        let mut top = self.top.load(Ordering::Relaxed);
        loop {
            if top as u32 == 0 {
                return 0;
            }
            window();
            match self.top.compare_exchange_weak(
                top,
                next_tag(top),
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return top as u32,
                Err(seen) => top = seen,
            }
        }
    }

    /// Whether anything is on the stack: a plain load, for a fast check.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.top.load(Ordering::Relaxed) as u32 == 0
    }
}

/// The tag half of the word after `top`'s, with an empty index half.
fn next_tag(top: u64) -> u64 {
    (top & !0xFFFF_FFFF).wrapping_add(1 << 32)
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
///
/// Under `--cfg batch_alloc_race` every window is widened (see [`widen`]).
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
        0 => os::sleep_micros(100),
        1..=16 => os::yield_cpu(),
        17..=80 => {
            for _ in 0..(draw >> 16) % 4096 {
                core::hint::spin_loop();
            }
        }
        _ => {}
    }
}
