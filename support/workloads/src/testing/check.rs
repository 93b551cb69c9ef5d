//! Checks on live objects (pairwise disjoint, intact) and on the statistics
//! (back at a baseline once everything is freed).

use batch_alloc::Stats;
use batch_alloc_rt::testing::limits::REGION_BYTES;

/// The address range `[start, end)` of the object a box owns (not of its
/// slot, which may be larger).
// A `&Box<T>`, not a `&T`: a reference to the box itself would silently
// give the range of the pointer.
#[allow(clippy::borrowed_box)]
pub fn box_range<T: ?Sized>(b: &Box<T>) -> (usize, usize) {
    let start = (&raw const **b).cast::<u8>().addr();
    (start, start + size_of_val::<T>(&**b))
}

/// The address range of the elements of a slice (of a `Vec`'s buffer, say).
pub fn slice_range<T>(elements: &[T]) -> (usize, usize) {
    let start = elements.as_ptr().addr();
    (start, start + size_of_val(elements))
}

/// The first two of the address ranges `[start, end)` that overlap, once
/// sorted (for callers that must not panic, such as a forked child).
pub fn overlap(ranges: &mut [(usize, usize)]) -> Option<[(usize, usize); 2]> {
    ranges.sort_unstable();
    let pair = ranges.windows(2).find(|pair| pair[0].1 > pair[1].0)?;
    Some([pair[0], pair[1]])
}

/// Panics if any two of the address ranges `[start, end)` overlap: two live
/// objects sharing memory.
pub fn assert_disjoint(ranges: &mut [(usize, usize)]) {
    if let Some([a, b]) = overlap(ranges) {
        panic!(
            "live objects overlap: {:#x}..{:#x} and {:#x}..{:#x}",
            a.0, a.1, b.0, b.1
        );
    }
}

/// Panics if any two of `boxes` overlap.
pub fn assert_boxes_disjoint<'a, T: ?Sized + 'a>(boxes: impl IntoIterator<Item = &'a Box<T>>) {
    assert_disjoint(&mut boxes.into_iter().map(box_range).collect::<Vec<_>>());
}

/// A live object that carries a fill pattern derived from an id.
pub trait Patterned {
    /// The object's address range, as [`box_range`] gives it.
    fn range(&self) -> (usize, usize);
    /// Panics unless the pattern of `id` is intact.
    fn check(&self, id: u64);
}

/// Panics unless every object of `live` keeps its pattern and no two of
/// them overlap. Returns how many there were.
pub fn assert_live<'a, T: Patterned + 'a>(live: impl IntoIterator<Item = &'a (T, u64)>) -> usize {
    let mut ranges: Vec<_> = live
        .into_iter()
        .map(|(object, id)| {
            object.check(*id);
            object.range()
        })
        .collect();
    assert_disjoint(&mut ranges);
    ranges.len()
}

/// Panics unless span memory is below the size of the reserved region: a
/// span released twice makes the counter wrap.
pub fn assert_span_bytes_sane(stats: &Stats) {
    assert!(
        stats.span_bytes <= REGION_BYTES as u64,
        "span bytes {} exceed the region ({REGION_BYTES} bytes): a span was released twice",
        stats.span_bytes,
    );
}

/// The checks a test makes once everything it made is freed, while the
/// thread that made it lives on (its heap may keep an empty span of each
/// class it used): no slot left out or freed twice, and the span counter
/// sane.
pub fn assert_slots_back_at(before: &Stats, after: &Stats) {
    assert_span_bytes_sane(after);
    assert_eq!(
        after.live_slots, before.live_slots,
        "slots leaked or freed twice: {before:?} -> {after:?}"
    );
}

/// The checks a test makes once everything is freed and the threads that
/// made it have exited: no slot left out, every span back, and the span
/// counter sane.
pub fn assert_back_at(before: &Stats, after: &Stats) {
    assert_slots_back_at(before, after);
    assert_eq!(
        after.span_bytes, before.span_bytes,
        "spans not reclaimed: {before:?} -> {after:?}"
    );
}
