//! What the tests share: a test binary's one serial lock ([`serially`]),
//! checks on live objects and on the statistics, objects that carry a fill
//! pattern ([`Filled`], and [`Captured`] for the capture tests), part of a
//! test run in a child process ([`in_child!`](crate::in_child)), a child
//! made by `fork()` ([`fork_and_wait`]), a seeded generator ([`seeded`]),
//! and futures polled to their end on the test's thread ([`block_on`]).

mod captured;
mod check;
mod child;
mod filled;
#[cfg(unix)]
mod forked;
mod poll;
mod serial;

pub use captured::*;
pub use check::*;
pub use child::*;
pub use filled::*;
#[cfg(unix)]
pub use forked::*;
pub use poll::*;
pub use serial::*;

/// Whether a scope is open on this thread, for the crates that reach the
/// runtime only through the facade (the attribute's differential corpus).
pub use batch_alloc_rt::testing::scope_on_this_thread;

/// The generator's traits: `next_u64`, `random_range`, `random_ratio`.
pub use rand::{Rng, RngExt};

/// The tests' generator: the same sequence for the same seed, so that a
/// failure replays.
pub type SeededRng = rand::rngs::Xoshiro256PlusPlus;

pub fn seeded(seed: u64) -> SeededRng {
    rand::SeedableRng::seed_from_u64(seed)
}

/// Runs `f` on a new thread and joins it: once it returns, the thread's
/// heap has retired, its runs' unused slots are back, and every span it
/// emptied is released.
pub fn on_fresh_thread<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::spawn(f).join().expect("the thread ran")
}
