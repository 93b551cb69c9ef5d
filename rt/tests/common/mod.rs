//! Shared by the runtime's integration tests: boxes of three sizes that carry
//! a fill pattern, checked when they are freed; the checks on live objects
//! and statistics (`check.rs`); re-running a test in a child process
//! (`child.rs`); driving and observing batch scopes (`scope.rs`); the
//! binary's one serial lock (`serial.rs`).

#![allow(dead_code)]

use batch_alloc_rt::Batch;

mod check;
mod child;
mod rng;
mod scope;
mod serial;

// Not every test binary that shares this module uses all of these.
#[allow(unused_imports)]
pub use check::*;
#[allow(unused_imports)]
pub use child::*;
#[allow(unused_imports)]
pub use rng::Rng;
#[allow(unused_imports)]
pub use scope::*;
#[allow(unused_imports)]
pub use serial::*;

/// A box of one of three sizes, filled with a pattern derived from its id.
pub enum Filled {
    Small(Box<[u64; 2]>),
    Medium(Box<[u64; 8]>),
    Large(Box<[u64; 32]>),
}

pub fn pattern(id: u64, i: usize) -> u64 {
    id.wrapping_mul(0x0100_0000_01B3) ^ (i as u64).wrapping_mul(0x9E37_79B9)
}

fn fill<const N: usize>(id: u64) -> [u64; N] {
    core::array::from_fn(|i| pattern(id, i))
}

/// Batches for the three sizes.
#[derive(Default)]
pub struct Batches {
    pub small: Batch<[u64; 2]>,
    pub medium: Batch<[u64; 8]>,
    pub large: Batch<[u64; 32]>,
}

impl Batches {
    pub fn with_capacity(n: usize) -> Batches {
        Batches {
            small: Batch::with_capacity(n),
            medium: Batch::with_capacity(n),
            large: Batch::with_capacity(n),
        }
    }

    pub fn alloc(&mut self, kind: usize, id: u64) -> Filled {
        match kind % 3 {
            0 => Filled::Small(self.small.alloc(fill(id))),
            1 => Filled::Medium(self.medium.alloc(fill(id))),
            _ => Filled::Large(self.large.alloc(fill(id))),
        }
    }
}

impl Filled {
    pub fn words(&self) -> &[u64] {
        match self {
            Filled::Small(b) => &b[..],
            Filled::Medium(b) => &b[..],
            Filled::Large(b) => &b[..],
        }
    }

    pub fn addr_range(&self) -> (usize, usize) {
        match self {
            Filled::Small(b) => box_range(b),
            Filled::Medium(b) => box_range(b),
            Filled::Large(b) => box_range(b),
        }
    }

    pub fn align_ok(&self) -> bool {
        self.words().as_ptr() as usize % align_of::<u64>() == 0
    }

    /// Whether the pattern written at allocation is intact (for callers
    /// that must not panic, such as a forked child).
    pub fn intact(&self, id: u64) -> bool {
        self.words()
            .iter()
            .enumerate()
            .all(|(i, &w)| w == pattern(id, i))
    }

    /// Panics unless the pattern written at allocation is intact.
    pub fn check(&self, id: u64) {
        for (i, &w) in self.words().iter().enumerate() {
            assert_eq!(w, pattern(id, i), "box {id} corrupted at word {i}");
        }
    }
}

impl Patterned for Filled {
    fn range(&self) -> (usize, usize) {
        self.addr_range()
    }

    fn check(&self, id: u64) {
        Filled::check(self, id);
    }
}
