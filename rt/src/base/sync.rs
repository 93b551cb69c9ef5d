//! The runtime's synchronisation primitives: the atomics of the
//! cross-thread protocols (switchable to loom's), one spin lock, one-time
//! calls that survive a fork, one lock-free stack of frame indices, and the
//! markers of protocol windows.
//!
//! The atomics inside spans and heap records are loom's under
//! `RUSTFLAGS="--cfg loom"` (see `loom_model.rs`); process-wide statics use
//! `core`'s directly, since loom's cannot be built in a `static`, and the
//! models check the protocols in isolation.

use core::sync::atomic::{AtomicBool, AtomicU8};

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64};

pub(crate) use core::sync::atomic::Ordering;

use crate::base::frame::Frame;
use crate::base::os;

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
/// memory, carving heap records, mapping the region). Never taken on a
/// path that frees or hands out a slot.
///
/// Each lock has a rank, its place in the order locks nest (`locks.rs`
/// holds them all): a thread takes a lock only while holding none of the
/// same or a later rank. Debug builds check it on every `lock` and abort on
/// a violation, so that an inversion shows in any test that takes the two
/// locks, not only in a fork that lands between them.
pub(crate) struct SpinLock {
    locked: AtomicBool,
    rank: u8,
}

impl SpinLock {
    /// A lock of rank `rank`, below 32 (the debug check keeps one bit per
    /// rank in a `u32`; `locks.rs` uses 0 to 7).
    pub(crate) const fn new(rank: u8) -> SpinLock {
        SpinLock {
            locked: AtomicBool::new(false),
            rank,
        }
    }

    pub(crate) fn lock(&self) {
        lock_order::taking(self.rank);
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

    /// Takes the lock if it is free; false, at once, if another thread
    /// holds it.
    pub(crate) fn try_lock(&self) -> bool {
        lock_order::taking(self.rank);
        // Acquire: as in `lock`.
        let taken = self
            .locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
        if !taken {
            lock_order::released(self.rank);
        }
        taken
    }

    pub(crate) fn unlock(&self) {
        // Release: this holder's writes are visible to the next.
        self.locked.store(false, Ordering::Release);
        lock_order::released(self.rank);
    }
}

/// The lock of one heap's parked spans (`HeapRecord::full_lock`): its
/// owner holds it while it changes its full queues or the spans on them,
/// or drains its mailbox; a sweep (`heap/sweep.rs`) while it takes the
/// spans other threads emptied out of them. A spin lock like
/// [`SpinLock`], of a rank in the same order, but on the protocols'
/// atomics (loom's in the models, which spin on it), so that the models
/// run the owner and a sweep against each other through it.
///
/// A sweep that finds the lock taken marks it ([`HeapLock::try_lock_or_mark`]),
/// and the holder learns it as it lets the lock go ([`HeapLock::unlock`]):
/// the mark and the lock are one word, so that no unlock can come between
/// the sweep's look and its mark unseen.
pub(crate) struct HeapLock {
    /// [`HeapLock::LOCKED`], with [`HeapLock::MARKED`] once a sweep found
    /// it so; 0 when free.
    word: AtomicU32,
    rank: u8,
}

impl HeapLock {
    const LOCKED: u32 = 1;
    const MARKED: u32 = 2;

    /// An unlocked lock of rank `rank` (see [`SpinLock::new`]).
    pub(crate) fn new(rank: u8) -> HeapLock {
        HeapLock {
            word: AtomicU32::new(0),
            rank,
        }
    }

    /// Takes the lock, waiting for a holder to let it go.
    pub(crate) fn lock(&self) {
        lock_order::taking(self.rank);
        let mut spins = 0;
        // Acquire: the previous holder's writes are visible.
        while self
            .word
            .compare_exchange_weak(0, Self::LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            backoff(&mut spins);
        }
    }

    /// Takes the lock if it is free; false, at once, if another thread
    /// holds it.
    pub(crate) fn try_lock(&self) -> bool {
        lock_order::taking(self.rank);
        // Acquire: as in `lock`.
        let taken = self
            .word
            .compare_exchange(0, Self::LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
        if !taken {
            lock_order::released(self.rank);
        }
        taken
    }

    /// Takes the lock if it is free; if another thread holds it, marks it,
    /// so that the holder's [`HeapLock::unlock`] says a sweep found it
    /// taken, and returns false.
    pub(crate) fn try_lock_or_mark(&self) -> bool {
        lock_order::taking(self.rank);
        let mut word = self.word.load(Ordering::Relaxed);
        loop {
            let new = if word == 0 {
                Self::LOCKED
            } else {
                word | Self::MARKED
            };
            if new == word {
                break;
            }
            // Acquire: as in `lock`, when this takes it.
            match self
                .word
                .compare_exchange_weak(word, new, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) if word == 0 => return true,
                Ok(_) => break,
                Err(seen) => word = seen,
            }
        }
        lock_order::released(self.rank);
        false
    }

    /// Lets the lock go; true if a sweep marked it meanwhile.
    pub(crate) fn unlock(&self) -> bool {
        // Release: this holder's writes are visible to the next.
        let word = self.word.swap(0, Ordering::Release);
        lock_order::released(self.rank);
        word & Self::MARKED != 0
    }
}

/// The ranks of the locks this thread holds, one bit each, in debug builds.
#[cfg(debug_assertions)]
mod lock_order {
    use crate::base::fatal::fatal;
    use core::cell::Cell;

    std::thread_local! {
        // Constant-initialised and without a destructor: reading it neither
        // allocates nor fails, at any point of the thread's life.
        static HELD: Cell<u32> = const { Cell::new(0) };
    }

    // Wrapping shifts: ranks are below 32 (`SpinLock::new` checks it), and
    // an overflow check here would be a panic path on the allocator's.
    pub(super) fn taking(rank: u8) {
        let _ = HELD.try_with(|held| {
            if held.get().wrapping_shr(rank.into()) != 0 {
                fatal("batch-alloc: a lock taken while holding one of the same or a later rank");
            }
            held.set(held.get() | 1u32.wrapping_shl(rank.into()));
        });
    }

    pub(super) fn released(rank: u8) {
        let _ = HELD.try_with(|held| held.set(held.get() & !1u32.wrapping_shl(rank.into())));
    }
}

#[cfg(not(debug_assertions))]
mod lock_order {
    #[inline(always)]
    pub(super) fn taking(_rank: u8) {}
    #[inline(always)]
    pub(super) fn released(_rank: u8) {}
}

/// Calls a function once per process; callers that come while it is being
/// called wait until it is done. (`std::sync::Once` may park, which is
/// fine, but the optimiser cannot see that it never unwinds; see
/// `NoUnwind`.)
///
/// A process forked while one of its threads called the function starts
/// with the call under way and no thread to finish it. The call's word
/// names the fork generation of the process that started it
/// ([`fork_generation`]), which a child handler counts up in every forked
/// child: so a call under way in the child's parent, or in any process it
/// descends from, is abandoned in the child, and its first caller takes the
/// call over and calls the function itself. (A process id would not do: a container's
/// init is pid 1, and so is a child it forks into a new PID namespace.)
/// Each function given to a `CallOnce` must therefore be safe to call again
/// after a partial call in a thread that no longer exists; its caller says
/// why it is.
///
/// The word, one `u64`: [`NOT_CALLED`](Self::NOT_CALLED), [`DONE`](Self::DONE),
/// or the fork generation of the process calling it in the high half and
/// [`CALLING`](Self::CALLING) in the low.
pub(crate) struct CallOnce<W = core::sync::atomic::AtomicU64> {
    word: W,
}

impl CallOnce {
    pub(crate) const fn new() -> CallOnce {
        CallOnce {
            word: core::sync::atomic::AtomicU64::new(Self::NOT_CALLED),
        }
    }

    /// In a child just forked, from a fork handler that `f` registered:
    /// `f` got as far as registering it, which is all it does, so the call
    /// is done even if the thread that made it did not get to say so.
    pub(crate) fn done_after_fork(&self) {
        self.word.store(Self::DONE, Ordering::Release);
    }
}

#[cfg(loom)]
impl CallOnce<loom::sync::atomic::AtomicU64> {
    /// For the models: a call not started yet, or (`Some(generation)`)
    /// under way in the process of that fork generation when this one was
    /// forked from it.
    pub(crate) fn for_model(under_way_in: Option<u32>) -> Self {
        let word = under_way_in.map_or(Self::NOT_CALLED, Self::calling);
        CallOnce {
            word: loom::sync::atomic::AtomicU64::new(word),
        }
    }
}

impl<W: SharedWord> CallOnce<W> {
    const NOT_CALLED: u64 = 0;
    const DONE: u64 = 1;
    const CALLING: u64 = 2;

    /// A call under way in the process of fork generation `generation`.
    fn calling(generation: u32) -> u64 {
        u64::from(generation) << 32 | Self::CALLING
    }

    /// Calls `f` unless it has been called (or is being called now, on
    /// another thread of this process, which this caller then waits for).
    #[inline]
    pub(crate) fn call(&self, f: impl FnOnce()) {
        // Acquire: whoever sees DONE sees what `f` did.
        if self.word.load(Ordering::Acquire) != Self::DONE {
            self.call_in(fork_generation(), f);
        }
    }

    /// [`call`](Self::call), in the process of fork generation
    /// `generation`.
    #[cold]
    pub(crate) fn call_in(&self, generation: u32, f: impl FnOnce()) {
        let mine = Self::calling(generation);
        let mut spins = 0;
        let mut word = self.word.load(Ordering::Acquire);
        loop {
            if word == Self::DONE {
                return;
            }
            if word == mine {
                // Another thread of this process calls it.
                backoff(&mut spins);
                word = self.word.load(Ordering::Acquire);
                continue;
            }
            // Not called yet, or under way in a process this one descends
            // from, whose calling thread does not exist here.
            window();
            match self
                .word
                .compare_exchange_weak(word, mine, Ordering::Acquire, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(seen) => word = seen,
            }
        }
        window();
        f();
        window();
        // Release: pairs with the waiters' acquire.
        self.word.store(Self::DONE, Ordering::Release);
    }
}

/// This process's fork generation, once the handler that counts it is
/// registered: 0 in the process the program started as, and in each child
/// one more than in the process it was forked from (or more: see
/// [`count_generations`]).
static GENERATION: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

/// Whether that handler is registered: [`UNDECIDED`] until the first call
/// of a process asks, then for good [`COUNTED`] or (the C library refused)
/// [`NOT_COUNTED`]. A child inherits its parent's state.
static GENERATIONS: AtomicU8 = AtomicU8::new(UNDECIDED);
const UNDECIDED: u8 = 0;
const COUNTED: u8 = 1;
const NOT_COUNTED: u8 = 2;

/// This process's name for [`CallOnce`]: its fork generation, which differs
/// from that of every process it descends from, in any PID namespace. A
/// process's first call registers the child handler that counts
/// generations, so it is there before any call starts (a child forked
/// before then has no call of its parent's to take over). Should the C
/// library refuse it (it can only be out of memory), the process id names
/// the process instead, with the top bit set so that it equals no
/// generation: that tells a child from its parent everywhere but across
/// PID namespaces.
pub(crate) fn fork_generation() -> u32 {
    match GENERATIONS.load(Ordering::Acquire) {
        COUNTED => GENERATION.load(Ordering::Relaxed),
        NOT_COUNTED => os::process_id() | 1 << 31,
        _ => {
            count_generations();
            fork_generation()
        }
    }
}

/// Registers the handler that counts generations. Threads that come here
/// at once may each register one: a child whose generation counts up twice
/// is as distinct from its parent as one counted once. The first to decide
/// decides for the process, before any call of it starts.
#[cold]
fn count_generations() {
    let counted = match os::at_fork(nothing_around_fork, nothing_around_fork, next_generation) {
        true => COUNTED,
        false => NOT_COUNTED,
    };
    // Release: a thread that sees the decision sees the registration.
    let _ = GENERATIONS.compare_exchange(UNDECIDED, counted, Ordering::Release, Ordering::Relaxed);
}

/// A fork handler for the places where only the child has work.
pub(crate) unsafe extern "C" fn nothing_around_fork() {}

/// In a child just forked: one generation on. Every call under way in the
/// parent is now another generation's, abandoned.
unsafe extern "C" fn next_generation() {
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// A 64-bit atomic word of a lock-free structure that the loom models check
/// in isolation: `core`'s in the runtime's statics, loom's in the models.
pub(crate) trait SharedWord {
    fn load(&self, order: Ordering) -> u64;
    fn store(&self, value: u64, order: Ordering);
    fn compare_exchange_weak(
        &self,
        current: u64,
        new: u64,
        success: Ordering,
        failure: Ordering,
    ) -> Result<u64, u64>;
}

macro_rules! shared_word {
    ($atomic:ty) => {
        impl SharedWord for $atomic {
            #[inline]
            fn load(&self, order: Ordering) -> u64 {
                <$atomic>::load(self, order)
            }
            #[inline]
            fn store(&self, value: u64, order: Ordering) {
                <$atomic>::store(self, value, order)
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

shared_word!(core::sync::atomic::AtomicU64);
#[cfg(loom)]
shared_word!(loom::sync::atomic::AtomicU64);

/// A lock-free stack (Treiber's) of frame indices, linked through a field
/// of each frame's metadata. The top word holds the link to the top frame
/// ([`Frame::link`], 0 for empty) in its low half and a tag bumped by every
/// push and pop in its high half, so that a pop whose compare-and-swap read
/// a stale top fails rather than link in a frame that has moved (the ABA
/// problem).
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

impl<W: SharedWord> IndexStack<W> {
    /// A stack over the given (zero) word.
    pub(crate) fn over(top: W) -> IndexStack<W> {
        IndexStack { top }
    }

    /// Pushes `frame`, whose link field is `link`. Release: what the pusher
    /// wrote before is visible to whoever pops or takes it.
    pub(crate) fn push(&self, frame: Frame, link: &AtomicU32) {
        let mut top = self.top.load(Ordering::Relaxed);
        loop {
            link.store(top as u32, Ordering::Relaxed);
            let new = next_tag(top) | frame.link() as u64;
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

    /// Pops the top frame; `link_of` names the link field of a frame.
    pub(crate) fn pop<'a>(&self, link_of: impl Fn(Frame) -> &'a AtomicU32) -> Option<Frame> {
        let mut top = self.top.load(Ordering::Acquire);
        loop {
            let frame = Frame::from_link(top as u32)?;
            // May read the link of a frame another thread popped meanwhile;
            // the tag then makes the compare-and-swap below fail.
            let next = link_of(frame).load(Ordering::Relaxed);
            let new = next_tag(top) | next as u64;
            window();
            match self
                .top
                .compare_exchange_weak(top, new, Ordering::Acquire, Ordering::Acquire)
            {
                Ok(_) => return Some(frame),
                Err(seen) => top = seen,
            }
        }
    }

    /// Takes the whole stack at once; returns the link to the first frame
    /// ([`Frame::link`], 0 for none), the rest following its links.
    /// Acquire: the pushers' writes are visible.
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

    /// The link to the top frame ([`Frame::link`], 0 for none), the rest
    /// following its links: for a walk where nothing else touches the
    /// stack (a forked child's fork handler).
    pub(crate) fn peek(&self) -> u32 {
        self.top.load(Ordering::Acquire) as u32
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

#[cfg(all(test, unix, not(miri), not(loom)))]
mod tests {
    use super::*;
    use core::sync::atomic::AtomicU32;
    use std::time::Duration;
    use workloads::testing::{fork_and_wait, Forked};

    /// How long a forked child may take before it counts as hung.
    const CHILD_TIMEOUT: Duration = Duration::from_secs(10);

    /// A thread that calls `once`'s function, and stays inside it until
    /// `release` is set; returned once it is inside.
    fn hold_a_call(
        once: &'static CallOnce,
        calls: &'static AtomicU32,
        release: &'static AtomicBool,
    ) -> std::thread::JoinHandle<()> {
        static INSIDE: AtomicBool = AtomicBool::new(false);
        INSIDE.store(false, Ordering::Relaxed);
        let runner = std::thread::spawn(move || {
            once.call(|| {
                calls.fetch_add(1, Ordering::Relaxed);
                INSIDE.store(true, Ordering::Release);
                while !release.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
            })
        });
        while !INSIDE.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
        runner
    }

    /// A fork while another thread calls a `CallOnce`'s function leaves the
    /// child with the call under way and nobody to finish it: the child's
    /// first call must call the function itself, not wait forever.
    #[test]
    fn a_forked_child_runs_what_a_thread_was_running_at_the_fork() {
        static ONCE: CallOnce = CallOnce::new();
        static CALLS: AtomicU32 = AtomicU32::new(0);
        static RELEASE: AtomicBool = AtomicBool::new(false);
        let runner = hold_a_call(&ONCE, &CALLS, &RELEASE);
        let parent_generation = fork_generation();
        // The child touches only atomics and the CallOnce.
        let child = fork_and_wait(CHILD_TIMEOUT, || {
            let next_generation = fork_generation() != parent_generation;
            ONCE.call(|| {
                CALLS.fetch_add(1, Ordering::Relaxed);
            });
            // The parent's call, copied at the fork, and the child's own.
            let ran_here = CALLS.load(Ordering::Relaxed) == 2;
            // A second call finds the call done.
            ONCE.call(|| {
                CALLS.fetch_add(1, Ordering::Relaxed);
            });
            let once = CALLS.load(Ordering::Relaxed) == 2;
            i32::from(!(next_generation && ran_here && once))
        });
        RELEASE.store(true, Ordering::Release);
        runner.join().unwrap();
        ONCE.call(|| {
            CALLS.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(
            child,
            Forked::Exited(0),
            "the child hung (killed after {CHILD_TIMEOUT:?}), kept its parent's generation or \
             ran the function twice"
        );
        assert_eq!(CALLS.load(Ordering::Relaxed), 1, "the parent ran it once");
    }

    /// A container's init process (pid 1) forks a child into a new PID
    /// namespace, where the child is pid 1 as well, while another thread
    /// calls a `CallOnce`'s function: the child must call it itself, not
    /// take the call for its own and wait. The test binary runs this again under
    /// `unshare --pid --fork`, as pid 1; where that is not allowed (it
    /// takes `CAP_SYS_ADMIN`), it says so and passes.
    #[test]
    fn a_child_in_a_new_pid_namespace_runs_what_a_thread_was_running_at_the_fork() {
        const CHILD: &str = "BATCH_ALLOC_PID_NAMESPACE_CHILD";
        const NAME: &str =
            "base::sync::tests::a_child_in_a_new_pid_namespace_runs_what_a_thread_was_running_at_the_fork";
        if std::env::var_os(CHILD).is_some() {
            std::process::exit(init_forks_into_a_new_namespace());
        }
        let exe = std::env::current_exe().unwrap();
        let output = std::process::Command::new("unshare")
            .args(["--pid", "--fork"])
            .arg(exe)
            .args([NAME, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .output();
        let output = match output {
            Ok(output) if output.status.code() != Some(UNSHARE_REFUSED) => output,
            Ok(_) | Err(_) => {
                println!("skipped: unshare --pid --fork or unshare(CLONE_NEWPID) was refused");
                return;
            }
        };
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{:?}: {stdout}", output.status);
    }

    /// Exit status of the process under `unshare` when it may not make a
    /// namespace of its own.
    const UNSHARE_REFUSED: i32 = 77;

    /// Under `unshare --pid --fork`, as pid 1: a thread enters a call and
    /// stays there; this thread moves its future children into a new PID
    /// namespace and forks; the child (pid 1 there) makes the call. Exit
    /// status: 0 if the child ran the function and exited, 1 if it hung or
    /// did not, [`UNSHARE_REFUSED`] if the namespace could not be made.
    fn init_forks_into_a_new_namespace() -> i32 {
        static ONCE: CallOnce = CallOnce::new();
        static CALLS: AtomicU32 = AtomicU32::new(0);
        static RELEASE: AtomicBool = AtomicBool::new(false);
        // SAFETY: no preconditions.
        assert_eq!(unsafe { libc::getpid() }, 1, "pid 1 under unshare");
        let runner = hold_a_call(&ONCE, &CALLS, &RELEASE);
        // SAFETY: no preconditions; affects only the children forked next.
        if unsafe { libc::unshare(libc::CLONE_NEWPID) } != 0 {
            return UNSHARE_REFUSED;
        }
        let child = fork_and_wait(CHILD_TIMEOUT, || {
            // SAFETY: no preconditions.
            let pid_one = unsafe { libc::getpid() } == 1;
            ONCE.call(|| {
                CALLS.fetch_add(1, Ordering::Relaxed);
            });
            let ran = CALLS.load(Ordering::Relaxed) == 2;
            i32::from(!(pid_one && ran))
        });
        RELEASE.store(true, Ordering::Release);
        runner.join().unwrap();
        println!("the child, pid 1 in a new namespace: {child:?} (killed after {CHILD_TIMEOUT:?} if hung)");
        i32::from(child != Forked::Exited(0))
    }
}
