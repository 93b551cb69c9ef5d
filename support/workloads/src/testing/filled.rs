//! Boxes of three sizes that carry a fill pattern derived from an id,
//! checked when they are freed, made plainly or from batches; the size
//! classes they take their slots from.

use batch_alloc::Batch;
use batch_alloc_rt::testing::{size_classes, SizeClass};

use super::{box_range, Patterned};

/// Word `i` of the pattern of object `id`.
pub fn pattern(id: u64, i: usize) -> u64 {
    id.wrapping_mul(0x0100_0000_01B3) ^ (i as u64).wrapping_mul(0x9E37_79B9) ^ 0xA5A5
}

/// An array of `N` words filled with the pattern of `id`.
pub fn fill<const N: usize>(id: u64) -> [u64; N] {
    core::array::from_fn(|i| pattern(id, i))
}

/// Panics unless `words` hold the pattern of `id`.
pub fn check_words(words: &[u64], id: u64) {
    for (i, &w) in words.iter().enumerate() {
        assert_eq!(w, pattern(id, i), "object {id} corrupted at word {i}");
    }
}

/// Sizes of the three kinds of [`Filled`] boxes: 16 B, 40 B (a 48-byte
/// class, so slots are larger than objects) and 256 B.
pub type Small = [u64; 2];
pub type Medium = [u64; 5];
pub type Large = [u64; 32];

/// A box of one of three sizes, filled with a pattern derived from its id.
pub enum Filled {
    Small(Box<Small>),
    Medium(Box<Medium>),
    Large(Box<Large>),
}

impl Filled {
    /// A plain box (`Box::new`) of kind `kind % 3`.
    pub fn plain(kind: usize, id: u64) -> Filled {
        match kind % 3 {
            0 => Filled::Small(Box::new(fill(id))),
            1 => Filled::Medium(Box::new(fill(id))),
            _ => Filled::Large(Box::new(fill(id))),
        }
    }

    /// Bytes of the object (not of its slot).
    pub fn bytes(&self) -> usize {
        size_of_val(self.words())
    }

    pub fn words(&self) -> &[u64] {
        match self {
            Filled::Small(b) => &b[..],
            Filled::Medium(b) => &b[..],
            Filled::Large(b) => &b[..],
        }
    }

    /// Panics unless the pattern written at allocation is intact.
    pub fn check(&self, id: u64) {
        check_words(self.words(), id);
    }

    /// Whether the pattern written at allocation is intact (for callers
    /// that must not panic, such as a forked child).
    pub fn intact(&self, id: u64) -> bool {
        self.words()
            .iter()
            .enumerate()
            .all(|(i, &w)| w == pattern(id, i))
    }

    pub fn align_ok(&self) -> bool {
        self.words().as_ptr().addr() % align_of::<u64>() == 0
    }

    /// Checks the pattern, then frees the box.
    pub fn check_and_free(self, id: u64) {
        self.check(id);
        drop(self);
    }
}

impl Patterned for Filled {
    fn range(&self) -> (usize, usize) {
        match self {
            Filled::Small(b) => box_range(b),
            Filled::Medium(b) => box_range(b),
            Filled::Large(b) => box_range(b),
        }
    }

    fn check(&self, id: u64) {
        Filled::check(self, id);
    }
}

/// The size class a batch of `T` takes its slots from.
pub fn class_of<T>() -> SizeClass {
    *size_classes()
        .iter()
        .find(|c| c.size as usize >= size_of::<T>() && c.size as usize % align_of::<T>() == 0)
        .expect("a class for the type")
}

/// The classes of the three kinds of [`Filled`].
pub fn filled_classes() -> [SizeClass; 3] {
    [
        class_of::<Small>(),
        class_of::<Medium>(),
        class_of::<Large>(),
    ]
}

/// Bytes of the spans that `slots` slots of each kind of [`Filled`] cover
/// at most, plus `extra` spans per kind.
pub fn filled_span_bytes(slots: usize, extra: usize) -> u64 {
    filled_classes()
        .iter()
        .map(|c| (slots.div_ceil(c.slots as usize) + extra) * c.span_bytes())
        .sum::<usize>() as u64
}

/// Batches for the three sizes.
#[derive(Default)]
pub struct Batches {
    pub small: Batch<Small>,
    pub medium: Batch<Medium>,
    pub large: Batch<Large>,
}

impl Batches {
    pub fn with_capacity(n: usize) -> Batches {
        Batches {
            small: Batch::with_capacity(n),
            medium: Batch::with_capacity(n),
            large: Batch::with_capacity(n),
        }
    }

    /// A batched box of kind `kind % 3`.
    pub fn alloc(&mut self, kind: usize, id: u64) -> Filled {
        match kind % 3 {
            0 => Filled::Small(self.small.alloc(fill(id))),
            1 => Filled::Medium(self.medium.alloc(fill(id))),
            _ => Filled::Large(self.large.alloc(fill(id))),
        }
    }
}
