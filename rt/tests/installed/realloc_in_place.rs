//! `realloc` of a batched box within its slot: a box smaller than its slot,
//! turned into a `Vec<u8>` and grown to the slot's size, stays where it is,
//! and the new bytes are written and read through the pointer `realloc`
//! returned. The box's own pointer may access only the box's bytes (under
//! Stacked and Tree Borrows), so a slot grown in place must come back as a
//! pointer that covers the whole slot. Grown past the slot, the contents
//! move to the inner allocator.
//!
//! Meant for Miri as much as for a normal run:
//! `MIRIFLAGS="-Zmiri-strict-provenance" cargo +nightly miri test -p batch-alloc-rt --test installed -- realloc_in_place`,
//! and again with `-Zmiri-tree-borrows` added.

use batch_alloc_rt::testing::size_classes;
use batch_alloc_rt::{stats, Batch};

use workloads::testing::{assert_slots_back_at, serially};

fn byte(i: usize) -> u8 {
    (i as u8).wrapping_mul(31) ^ 0x5A
}

/// Panics unless byte `i` of `bytes` is `byte(i)` for every `i`.
fn check(bytes: &[u8]) {
    for (i, &x) in bytes.iter().enumerate() {
        assert_eq!(x, byte(i), "byte {i} of {}", bytes.len());
    }
}

/// The size of the slots a batch of `[u8; n]` takes (byte arrays need no
/// alignment, so the smallest class that holds them).
fn slot_size(n: usize) -> usize {
    let class = size_classes().iter().find(|c| c.size as usize >= n);
    class.expect("a class for the box").size as usize
}

/// A batched `Box<[u8; N]>` (in a slot larger than `N` bytes) as a
/// `Vec<u8>`, grown in place to fill its slot, then past it.
fn grow<const N: usize>() {
    let slot = slot_size(N);
    assert!(slot > N, "{N} bytes fill their slot");
    let before = stats();
    let mut batch = Batch::with_capacity(8);
    let b: Box<[u8; N]> = batch.alloc(core::array::from_fn(byte));
    drop(batch);
    assert_eq!(
        stats().live_slots,
        before.live_slots + 1,
        "the box is a slot"
    );
    let mut v = Vec::from(b as Box<[u8]>);
    let at = v.as_ptr();
    assert_eq!(v.capacity(), N);

    v.reserve_exact(slot - N);
    assert_eq!((v.as_ptr(), v.capacity()), (at, slot), "grown in place");
    // The new bytes, written through the grown vector's pointer.
    v.extend((N..slot).map(byte));
    check(&v);
    assert_eq!(stats().live_slots, before.live_slots + 1, "still the slot");

    // One byte past the slot: the contents move out and the slot is freed.
    v.reserve_exact(1);
    assert_ne!(v.as_ptr(), at, "moved out of the slot");
    v.extend((slot..2 * slot).map(byte));
    check(&v);
    assert_eq!(stats().live_slots, before.live_slots, "the slot was freed");
    drop(v);
    assert_slots_back_at(&before, &stats());
}

/// `grow::<N>` for box sizes one past a multiple of 8 (class sizes are
/// multiples of 8, so a box one byte past the class below is smaller than
/// its slot), up to the largest class under Miri.
macro_rules! cases {
    ($($n:literal)*) => {
        [$(($n, grow::<$n> as fn()),)*]
    };
}

const CASES: [(usize, fn()); 32] = cases!(
    9 17 25 33 41 49 57 65 73 81 89 97 105 113 121 129
    137 145 153 161 169 177 185 193 201 209 217 225 233 241 249 257
);

#[test]
fn a_batched_box_grows_in_place_and_the_new_bytes_are_written() {
    serially(|| {
        assert!(batch_alloc_rt::is_active());
        // Sizes one past a class, where the next class is at least two bytes
        // larger: a box of that size has a slot larger than itself. The class
        // table depends on the build (Miri's is smaller), so it is read here.
        let wanted: Vec<usize> = size_classes()
            .windows(2)
            .filter(|pair| pair[1].size >= pair[0].size + 2)
            .map(|pair| pair[0].size as usize + 1)
            .collect();
        let mut ran = Vec::new();
        for (n, case) in CASES {
            if wanted.contains(&n) {
                case();
                ran.push(n);
            }
        }
        assert_eq!(ran.first(), wanted.first(), "the first such size is a case");
        println!("grown in place: boxes of {ran:?} bytes");
    });
}
