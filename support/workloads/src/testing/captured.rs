//! Capture on: what the reliability suite's capture variants share (its
//! `reliability_capture_*` tests and the capture tests of the fault tests).
//! Their workers run their loops under a scope, held by the guard
//! `#[batch_alloc]` puts in front of a function's body, entered at the
//! start of every iteration (the guard takes the scope at its first
//! `enter`), and allocate the way code as written does: `Box::new`,
//! `Vec<u8>` buffers and `String`s, which the open scope serves.

use batch_alloc::{is_active, stats, Stats};
use batch_alloc_rt::testing::{size_classes, SizeClass};

use super::{filled_classes, pattern, slice_range, Filled, Patterned};

/// The guard `#[batch_alloc]` puts in front of a function's body: the
/// first `enter()` opens this thread's scope (or joins the one open), its
/// drop closes what it opened.
pub use batch_alloc_rt::testing::Guard;

/// Bytes of a captured byte buffer, and of a captured string: fixed, so
/// that each kind of object takes slots of one class and the bounds can
/// count spans per class as the batch versions do.
pub const BUFFER_LEN: usize = 100;
pub const TEXT_LEN: usize = 24;

/// Kinds of [`Captured`] objects: the three sizes of plain box, a byte
/// buffer, a string.
pub const CAPTURED_KINDS: usize = 5;

/// An object made the way code as written makes it, filled with a pattern
/// derived from its id.
pub enum Captured {
    Boxed(Filled),
    Buffer(Vec<u8>),
    Text(String),
}

fn byte(id: u64, i: usize) -> u8 {
    pattern(id, i) as u8
}

fn hex_digit(id: u64, i: usize) -> char {
    char::from(b"0123456789abcdef"[byte(id, i) as usize & 15])
}

impl Captured {
    /// An object of kind `kind % CAPTURED_KINDS`.
    pub fn make(kind: usize, id: u64) -> Captured {
        match kind % CAPTURED_KINDS {
            3 => Captured::Buffer((0..BUFFER_LEN).map(|i| byte(id, i)).collect()),
            4 => {
                let mut text = String::with_capacity(TEXT_LEN);
                text.extend((0..TEXT_LEN).map(|i| hex_digit(id, i)));
                Captured::Text(text)
            }
            kind => Captured::Boxed(Filled::plain(kind, id)),
        }
    }

    /// Panics unless the pattern made with the object is intact.
    pub fn check(&self, id: u64) {
        match self {
            Captured::Boxed(b) => b.check(id),
            Captured::Buffer(v) => {
                for (i, &x) in v.iter().enumerate() {
                    assert_eq!(x, byte(id, i), "buffer {id} corrupted at byte {i}");
                }
            }
            Captured::Text(s) => {
                for (i, c) in s.chars().enumerate() {
                    assert_eq!(c, hex_digit(id, i), "string {id} corrupted at char {i}");
                }
            }
        }
    }

    /// Checks the pattern, then frees the object.
    pub fn check_and_free(self, id: u64) {
        self.check(id);
        drop(self);
    }

    /// A checksum of the object's contents.
    pub fn checksum(&self) -> u64 {
        let fold = |sum: u64, x: u64| sum.wrapping_mul(31).wrapping_add(x);
        match self {
            Captured::Boxed(b) => b.words().iter().copied().fold(0, fold),
            Captured::Buffer(v) => v.iter().map(|&x| x as u64).fold(0, fold),
            Captured::Text(s) => s.bytes().map(u64::from).fold(0, fold),
        }
    }

    /// Bytes of the object's allocation (not of its slot).
    pub fn bytes(&self) -> usize {
        match self {
            Captured::Boxed(b) => b.bytes(),
            Captured::Buffer(v) => v.capacity(),
            Captured::Text(s) => s.capacity(),
        }
    }
}

impl Patterned for Captured {
    fn range(&self) -> (usize, usize) {
        match self {
            Captured::Boxed(b) => b.range(),
            Captured::Buffer(v) => slice_range(v),
            Captured::Text(s) => slice_range(s.as_bytes()),
        }
    }

    fn check(&self, id: u64) {
        Captured::check(self, id);
    }
}

/// The classes [`Captured`] objects take their slots from, one per kind.
pub fn captured_classes() -> [SizeClass; CAPTURED_KINDS] {
    let [small, medium, large] = filled_classes();
    let of_bytes = |len: usize| {
        *size_classes()
            .iter()
            .find(|c| c.size as usize >= len)
            .expect("a class for the length")
    };
    [
        small,
        medium,
        large,
        of_bytes(BUFFER_LEN),
        of_bytes(TEXT_LEN),
    ]
}

/// Bytes of the spans that `slots` slots of each kind of [`Captured`]
/// object cover at most, plus `extra` spans per kind.
pub fn captured_span_bytes(slots: usize, extra: usize) -> u64 {
    let spans = |c: &SizeClass| (slots.div_ceil(c.slots as usize) + extra) * c.span_bytes();
    captured_classes().iter().map(spans).sum::<usize>() as u64
}

/// The statistics to compare a capture run's end with, once it is known
/// that `BatchAlloc` is installed (so that scopes serve).
pub fn before_capture() -> Stats {
    assert!(is_active());
    stats()
}

/// Panics unless scopes served at least `at_least` allocations between
/// `before` and `after`: a capture variant that captured nothing would
/// test the batch version again, or nothing.
pub fn assert_captured(before: &Stats, after: &Stats, at_least: u64) {
    let served = after.scoped_allocations - before.scoped_allocations;
    assert!(
        served >= at_least,
        "scopes served {served} allocations, expected at least {at_least}: {before:?} -> {after:?}"
    );
}
