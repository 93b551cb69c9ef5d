//! Size classes: the object sizes spans are cut into.
//!
//! The table is generated at compile time from [`crate::base::config`] by the rule
//! of the Go size-class change: each candidate size gets the fewest pages (at
//! least [`MIN_SPAN_PAGES`]) whose unusable tail is at most an eighth of the
//! span; then its object size grows to the largest multiple of its alignment
//! step that still fits the same number of objects in the same pages, so no
//! span keeps a tail it could have used. Candidates that growth has made
//! redundant are dropped.

use crate::base::config::{FRAME_PAGES, MAX_SMALL_SIZE, MIN_SPAN_PAGES, PAGE_SIZE};
use crate::base::fatal::fatal;

/// One size class: what every slot of a span of this class looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeClass {
    /// Bytes per slot; also the distance between consecutive slots.
    pub size: u32,
    /// Pages in a span of this class.
    pub pages: u32,
    /// Slots in a span of this class: `pages * PAGE_SIZE / size`.
    pub slots: u32,
}

impl SizeClass {
    const EMPTY: SizeClass = SizeClass {
        size: 0,
        pages: 0,
        slots: 0,
    };

    /// Bytes in a span of this class.
    pub const fn span_bytes(&self) -> usize {
        self.pages as usize * PAGE_SIZE
    }

    /// Bytes at the end of a span that no slot covers.
    pub const fn tail_waste(&self) -> usize {
        self.span_bytes() - self.slots as usize * self.size as usize
    }
}

/// The sizes Go's generator picks up to 4 KiB: steps of 8 and 16 at first,
/// then about an eighth of the size, and every power of two, so that any
/// alignment up to the largest class has a class that keeps it.
const CANDIDATES: [u32; 44] = [
    8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352,
    384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048,
    2304, 2688, 3072, 3200, 3456, 4096,
];

/// The step a class grows by: the alignment its size already has (its
/// lowest set bit), at most 16. Growth keeps every alignment a class served,
/// and 16 covers every type of up to 16-byte alignment.
const fn growth_step(size: u32) -> u32 {
    let lowest_bit = size & size.wrapping_neg();
    if lowest_bit < 16 {
        lowest_bit
    } else {
        16
    }
}

/// The fewest pages, from [`MIN_SPAN_PAGES`] up to a frame, whose tail waste
/// for `size` is at most an eighth of the span.
const fn span_pages(size: u32) -> u32 {
    let mut pages = MIN_SPAN_PAGES;
    while pages < FRAME_PAGES {
        let bytes = pages * PAGE_SIZE;
        if (bytes % size as usize) * 8 <= bytes {
            break;
        }
        pages += 1;
    }
    pages as u32
}

/// A class table as the generator builds it, in fixed-size arrays: the
/// classes, the candidate size each was made from (before the growth rule;
/// for the tests and the policy study, not part of [`SizeClass`]), and how
/// many entries are used.
pub(crate) struct Table {
    pub classes: [SizeClass; CANDIDATES.len()],
    #[cfg_attr(not(any(test, batch_alloc_policy_study)), allow(dead_code))]
    pub candidates: [u32; CANDIDATES.len()],
    pub len: usize,
}

/// Builds the class table, with (`grow`) or without the growth rule.
pub(crate) const fn build_table(grow: bool) -> Table {
    let mut table = Table {
        classes: [SizeClass::EMPTY; CANDIDATES.len()],
        candidates: [0; CANDIDATES.len()],
        len: 0,
    };
    let mut i = 0;
    while i < CANDIDATES.len() && CANDIDATES[i] as usize <= MAX_SMALL_SIZE {
        let candidate = CANDIDATES[i];
        let mut size = candidate;
        let pages = span_pages(size);
        let span = pages * PAGE_SIZE as u32;
        let slots = span / size;
        if grow {
            let step = growth_step(size);
            let grown = (span / slots) & !(step - 1);
            if grown > size {
                size = grown;
            }
        }
        i += 1;
        let len = table.len;
        if len > 0 && size <= table.classes[len - 1].size {
            continue;
        }
        table.classes[len] = SizeClass { size, pages, slots };
        table.candidates[len] = candidate;
        table.len = len + 1;
    }
    table
}

const BUILT: Table = build_table(true);

/// Number of size classes.
pub const NUM_CLASSES: usize = BUILT.len;

const fn truncate<T: Copy, const N: usize>(table: &[T; CANDIDATES.len()], fill: T) -> [T; N] {
    let mut out = [fill; N];
    let mut i = 0;
    while i < N {
        out[i] = table[i];
        i += 1;
    }
    out
}

/// The size classes in increasing size.
pub const CLASSES: [SizeClass; NUM_CLASSES] = truncate(&BUILT.classes, SizeClass::EMPTY);

/// The candidate size each class of [`CLASSES`] was made from, before the
/// growth rule.
#[cfg(any(test, batch_alloc_policy_study))]
pub(crate) const CANDIDATE_OF: [u32; NUM_CLASSES] = truncate(&BUILT.candidates, 0);

/// The shape of class `class`, which a span or a batch recorded. An index
/// out of the table means the runtime's metadata is corrupted: abort, in
/// the allocator path, rather than panic.
#[inline(always)]
pub(crate) fn shape(class: u8) -> SizeClass {
    match CLASSES.get(class as usize) {
        Some(shape) => *shape,
        None => fatal("batch-alloc: corrupted size class"),
    }
}

/// The class index meaning "no class serves it".
pub const NO_CLASS: u8 = u8::MAX;

const _: () = assert!(NUM_CLASSES < NO_CLASS as usize);

/// The smallest class whose slots fit `size` bytes at alignment `align`, or
/// [`NO_CLASS`] for what no class serves: zero-sized types, alignment
/// past a page, sizes past the largest class. Spans start at frame
/// boundaries, so a slot keeps `align` exactly when the class size is a
/// multiple of it.
pub const fn class_for(size: usize, align: usize) -> u8 {
    if size == 0 || align > PAGE_SIZE {
        return NO_CLASS;
    }
    let mut i = 0;
    while i < NUM_CLASSES {
        let class_size = CLASSES[i].size as usize;
        if class_size >= size && class_size % align == 0 {
            return i as u8;
        }
        i += 1;
    }
    NO_CLASS
}

/// The class that serves `T`, or [`NO_CLASS`].
pub const fn class_of<T>() -> u8 {
    class_for(core::mem::size_of::<T>(), core::mem::align_of::<T>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::config::FRAME_SIZE;

    #[test]
    fn table_is_monotonic_and_aligned() {
        for pair in CLASSES.windows(2) {
            assert!(pair[0].size < pair[1].size, "{pair:?}");
            if pair[0].pages == pair[1].pages {
                assert!(pair[0].slots >= pair[1].slots, "{pair:?}");
            }
        }
        for class in CLASSES {
            assert_eq!(class.size % 8, 0, "{class:?}");
            assert!(class.span_bytes() <= FRAME_SIZE, "{class:?}");
            assert!(class.pages as usize >= MIN_SPAN_PAGES, "{class:?}");
            assert_eq!(
                class.slots as usize,
                class.span_bytes() / class.size as usize
            );
            // The tail-waste rule, unless even a whole frame cannot meet it.
            assert!(
                class.tail_waste() * 8 <= class.span_bytes() || class.pages as usize == FRAME_PAGES,
                "{class:?}"
            );
        }
    }

    #[test]
    fn growth_keeps_objects_per_span_and_fills_the_span() {
        let plain = build_table(false);
        let plain = &plain.classes[..plain.len];
        for (class, candidate) in CLASSES.into_iter().zip(CANDIDATE_OF) {
            let before = plain
                .iter()
                .find(|c| c.size == candidate)
                .expect("every class comes from a candidate");
            assert_eq!(before.slots, class.slots, "{before:?} grew into {class:?}");
            assert_eq!(before.pages, class.pages);
            assert!(class.size >= before.size);
            assert_eq!(class.size % growth_step(before.size), 0, "alignment lost");
            // One more step would lose a slot: the class is as large as it can be.
            let next = class.size + growth_step(before.size);
            assert!(
                (class.span_bytes() as u32) / next < class.slots,
                "{class:?} could still grow"
            );
        }
        let waste = |table: &[SizeClass]| table.iter().map(SizeClass::tail_waste).sum::<usize>();
        assert!(waste(&CLASSES) <= waste(plain));
    }

    #[test]
    fn lookup_picks_the_smallest_fitting_aligned_class() {
        assert_eq!(class_for(0, 1), NO_CLASS);
        assert_eq!(class_for(1, 1), 0);
        assert_eq!(CLASSES[class_for(8, 8) as usize].size, 8);
        assert_eq!(CLASSES[class_for(64, 8) as usize].size, 64);
        assert!(CLASSES[class_for(17, 1) as usize].size >= 17);
        assert_eq!(class_for(MAX_SMALL_SIZE + 1, 1), NO_CLASS);
        assert_eq!(class_for(8, PAGE_SIZE * 2), NO_CLASS);
        for size in 1..=MAX_SMALL_SIZE {
            for align in [1, 2, 4, 8, 16, 32, 64, 128] {
                let class = class_for(size, align);
                if class == NO_CLASS {
                    continue;
                }
                let c = CLASSES[class as usize];
                assert!(c.size as usize >= size && c.size as usize % align == 0);
                if class > 0 {
                    let smaller = CLASSES[class as usize - 1].size as usize;
                    assert!(smaller < size || smaller % align != 0);
                }
            }
        }
        // Power-of-two alignments up to the largest class always have a class.
        let mut align = 1;
        while align <= MAX_SMALL_SIZE {
            assert_ne!(class_for(align, align), NO_CLASS, "align {align}");
            align *= 2;
        }
    }

    #[test]
    fn print_table() {
        println!("class  candidate  size  pages  slots  tail waste");
        for (i, c) in CLASSES.iter().enumerate() {
            println!(
                "{i:>5} {:>10} {:>5} {:>6} {:>6} {:>11}",
                CANDIDATE_OF[i],
                c.size,
                c.pages,
                c.slots,
                c.tail_waste()
            );
        }
    }
}
