//! How refills grow when a loop's trip count is unknown.

use crate::sync::Ordering;
use core::sync::atomic::AtomicU8;

/// How a batch sizes its next refill once its trip-count hint is used up
/// (`while`, `while let` and `loop`, or a `for` loop whose iterator's
/// `size_hint` lower bound was too low).
///
/// A refill never asks for more than one span holds, so growth only matters
/// below that; see the policy measurements in the repository for the
/// trade-off between refill calls and slots reserved but never used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Growth {
    /// Twice the previous refill.
    #[default]
    Double,
    /// Twice the previous refill up to 256 slots; past that, `1 + k/16` times
    /// it, with `k` falling from 16 by one per doubling of size down to 2
    /// (x1.125): the smooth decay proposed for Go's `growslice`.
    Smooth,
    /// The golden ratio (x1.618).
    Golden,
}

/// Refill size past which [`Growth::Smooth`] starts to slow down.
const SMOOTH_THRESHOLD: usize = 256;

impl Growth {
    /// The refill size that follows one of `previous` slots: larger, but
    /// at `usize::MAX`, where every policy stays (sizes saturate; no input
    /// overflows).
    pub fn next(self, previous: usize) -> usize {
        let previous = previous.max(1);
        let next = match self {
            Growth::Double => previous.saturating_mul(2),
            Growth::Golden => previous.saturating_add(fraction_of(previous, 618, 1000)),
            Growth::Smooth => {
                if previous < SMOOTH_THRESHOLD {
                    previous * 2
                } else {
                    let doublings = (previous / SMOOTH_THRESHOLD).ilog2() as usize;
                    let k = 16usize.saturating_sub(doublings).max(2);
                    previous.saturating_add(fraction_of(previous, k, 16))
                }
            }
        };
        next.max(previous.saturating_add(1))
    }

    pub(crate) fn to_u8(self) -> u8 {
        match self {
            Growth::Double => 1,
            Growth::Smooth => 2,
            Growth::Golden => 3,
        }
    }

    /// Decodes [`to_u8`](Growth::to_u8); anything else is the default.
    pub(crate) fn from_u8(n: u8) -> Growth {
        match n {
            2 => Growth::Smooth,
            3 => Growth::Golden,
            _ => Growth::Double,
        }
    }
}

/// `n * num / den` rounded down, for `num <= den`, without the product
/// (which overflows for large `n`): the same value, from `n`'s quotient and
/// remainder.
fn fraction_of(n: usize, num: usize, den: usize) -> usize {
    (n / den) * num + (n % den) * num / den
}

static DEFAULT_GROWTH: AtomicU8 = AtomicU8::new(1);

/// Sets the growth policy of batches made from now on without one of their
/// own (the macro's batches among them).
pub fn set_default_growth(growth: Growth) {
    DEFAULT_GROWTH.store(growth.to_u8(), Ordering::Relaxed);
}

/// The growth policy new batches get.
pub fn default_growth() -> Growth {
    Growth::from_u8(default_growth_code())
}

/// [`default_growth`], encoded: what a batch stores until it needs it.
#[inline]
pub(crate) fn default_growth_code() -> u8 {
    DEFAULT_GROWTH.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(growth: Growth, steps: usize) -> Vec<usize> {
        let mut out = vec![8];
        for _ in 0..steps {
            out.push(growth.next(*out.last().unwrap()));
        }
        out
    }

    #[test]
    fn double_doubles() {
        assert_eq!(sizes(Growth::Double, 4), [8, 16, 32, 64, 128]);
    }

    #[test]
    fn golden_grows_by_the_golden_ratio() {
        assert_eq!(sizes(Growth::Golden, 4), [8, 12, 19, 30, 48]);
        assert_eq!(Growth::Golden.next(1000), 1618);
    }

    #[test]
    fn smooth_doubles_then_decays_to_an_eighth() {
        assert_eq!(Growth::Smooth.next(128), 256);
        assert_eq!(Growth::Smooth.next(256), 512); // k = 16
        assert_eq!(Growth::Smooth.next(512), 512 + 512 * 15 / 16);
        assert_eq!(Growth::Smooth.next(1024), 1024 + 1024 * 14 / 16);
        let huge = 256 << 20;
        assert_eq!(Growth::Smooth.next(huge), huge + huge / 8);
        // Factors never rise as sizes grow.
        let mut previous_factor = f64::INFINITY;
        let mut size = 256;
        while size < 1 << 30 {
            let factor = Growth::Smooth.next(size) as f64 / size as f64;
            assert!(factor <= previous_factor + 1e-9, "{size}: {factor}");
            previous_factor = factor;
            size *= 2;
        }
    }

    /// What `next` computes, in 128 bits, where nothing overflows, then
    /// saturated.
    fn next_in_u128(growth: Growth, previous: usize) -> usize {
        let p = previous.max(1) as u128;
        let next = match growth {
            Growth::Double => 2 * p,
            Growth::Golden => p * 1618 / 1000,
            Growth::Smooth if p < SMOOTH_THRESHOLD as u128 => 2 * p,
            Growth::Smooth => {
                let doublings = (p / SMOOTH_THRESHOLD as u128).ilog2() as u128;
                p + p * 16u128.saturating_sub(doublings).max(2) / 16
            }
        };
        next.max(p + 1).min(usize::MAX as u128) as usize
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: if cfg!(miri) { 64 } else { 4096 },
            failure_persistence: None,
            ..Default::default()
        })]

        /// A public function must not panic on any input (issue 30): every
        /// policy, from any size, grows as its formula says, saturating at
        /// `usize::MAX`.
        #[test]
        fn every_policy_grows_without_overflow_from_any_size(
            previous in proptest::prop_oneof![proptest::prelude::any::<usize>(), 0..1usize << 24]
        ) {
            for growth in [Growth::Double, Growth::Smooth, Growth::Golden] {
                let next = growth.next(previous);
                proptest::prop_assert_eq!(next, next_in_u128(growth, previous), "{:?}", growth);
                proptest::prop_assert!(next > previous || next == usize::MAX);
            }
        }
    }

    #[test]
    fn the_largest_sizes_saturate() {
        for growth in [Growth::Double, Growth::Smooth, Growth::Golden] {
            for previous in [
                usize::MAX,
                usize::MAX - 1,
                usize::MAX / 2 + 1,
                usize::MAX / 16 + 1,
            ] {
                assert!(growth.next(previous) > previous || growth.next(previous) == usize::MAX);
            }
            assert_eq!(growth.next(usize::MAX), usize::MAX, "{growth:?}");
        }
    }

    #[test]
    fn every_policy_grows() {
        for growth in [Growth::Double, Growth::Smooth, Growth::Golden] {
            for n in [0, 1, 2, 3, 100, usize::MAX / 2] {
                assert!(growth.next(n) > n.min(usize::MAX - 1), "{growth:?} {n}");
            }
        }
    }
}
