//! Types a batch does not serve take plain `Box::new` silently, even with
//! `BatchAlloc` installed.

use batch_alloc_rt::{is_active, stats, Batch};

use workloads::testing::serially;

#[repr(align(16384))]
struct PastAPage(u8);

#[test]
fn zero_sized_overaligned_and_oversized_types_are_plain_boxes() {
    serially(|| {
        assert!(is_active());
        let before = stats();
        let mut zst = Batch::new();
        let units: Vec<Box<()>> = (0..10).map(|_| zst.alloc(())).collect();
        let mut aligned = Batch::new();
        let page: Box<PastAPage> = aligned.alloc(PastAPage(3));
        assert_eq!(page.0, 3);
        assert_eq!(&*page as *const PastAPage as usize % 16384, 0);
        let mut big = Batch::new();
        let huge: Box<[u8; 8192]> = big.alloc([1; 8192]);
        drop((zst, aligned, big));
        let after = stats();
        assert_eq!(after.batched_boxes, before.batched_boxes);
        assert_eq!(after.reserve_calls, before.reserve_calls);
        drop((units, page, huge));
    });
}

#[test]
fn realloc_of_a_slot_keeps_it_or_moves_out() {
    serially(|| {
        let mut batch = Batch::new();
        let b: Box<[u8; 24]> = batch.alloc([5; 24]);
        drop(batch);
        // A box turned into a Vec and grown: the slot is realloc'd.
        let raw = Box::into_raw(b) as *mut u8;
        // SAFETY: the pointer came from a Box<[u8; 24]>: 24 initialised bytes of
        // capacity 24, allocated by the global allocator with that layout.
        let mut v = unsafe { Vec::from_raw_parts(raw, 24, 24) };
        v.extend_from_slice(&[6; 8]); // grows past the 24-byte slot or within its class
        v.extend_from_slice(&[7; 400]); // certainly past the slot: moves to the inner allocator
        assert_eq!(&v[..24], &[5; 24]);
        assert_eq!(&v[24..32], &[6; 8]);
        assert_eq!(v.len(), 432);
    });
}
