//! The `hardened` feature: a double free, a free of a pointer that is not a
//! slot start, and a free-list link overwritten after its slot was freed
//! each abort the process with a message, instead of corrupting the heap.
//!
//! Each case runs in a child process (this test binary again, running the
//! case's test), since the expected outcome is an abort: `cargo test -p
//! batch-alloc-rt --features hardened --test installed -- hardened::` runs
//! them alone.

#![cfg(feature = "hardened")]
// Vectors of boxes are what the allocator is for.
#![allow(clippy::vec_box)]

use std::alloc::Layout;

use batch_alloc_rt::Batch;
use workloads::testing::{serially, ChildOutcome};

type T = [u64; 4];

/// Checks that the child was killed by an abort, and returns what it wrote.
fn aborted(child: ChildOutcome) -> String {
    assert!(child.aborted(), "not an abort\n{child}");
    child.output
}

fn boxes(n: usize) -> Vec<Box<T>> {
    let mut batch = Batch::with_capacity(n);
    (0..n as u64).map(|i| batch.alloc([i; 4])).collect()
}

#[test]
fn a_double_free_aborts() {
    serially(|| {
        let output = aborted(workloads::in_child!(a_double_free_aborts, |_| {}, || {
            let p = Box::into_raw(boxes(4).pop().unwrap()).cast::<u8>();
            // SAFETY: deliberately violated: the second call frees a freed slot,
            // which the hardened allocator must refuse.
            unsafe {
                std::alloc::dealloc(p, Layout::new::<T>());
                std::alloc::dealloc(p, Layout::new::<T>());
            }
        }));
        assert!(output.contains("batch-alloc: double free"), "{output}");
    });
}

/// A live object whose bytes 4..8 equal the freed mark (as random-looking
/// data does once in 2^32 frees) is freed, not taken for a double free: its
/// first word does not decode to a link.
#[test]
fn a_live_object_that_carries_the_freed_mark_is_freed() {
    serially(|| {
        let mut pair = boxes(2);
        let live = Box::into_raw(pair.pop().unwrap()).cast::<u32>();
        let freed = Box::into_raw(pair.pop().unwrap()).cast::<u32>();
        // SAFETY: `freed` is a live box of `T` until the dealloc; the reads
        // after it are of memory the runtime keeps mapped (the span holds
        // `live`), read as plain integers.
        let (link, mark) = unsafe {
            std::alloc::dealloc(freed.cast(), Layout::new::<T>());
            (freed.read_volatile(), freed.add(1).read_volatile())
        };
        // A free slot's link is NIL or an offset under a frame; flipping the
        // top bit makes it neither.
        // SAFETY: `live` is a live box of `T`, owned here.
        unsafe {
            live.write(link ^ 0x8000_0000);
            live.add(1).write(mark);
            drop(Box::from_raw(live.cast::<T>()));
        }
    });
}

#[test]
fn a_free_inside_a_slot_aborts() {
    serially(|| {
        let output = aborted(workloads::in_child!(
            a_free_inside_a_slot_aborts,
            |_| {},
            || {
                let p = Box::into_raw(boxes(4).pop().unwrap()).cast::<u8>();
                // SAFETY: deliberately violated: the pointer is inside a slot.
                unsafe { std::alloc::dealloc(p.wrapping_add(8), Layout::new::<u64>()) };
            }
        ));
        assert!(output.contains("not the start of a slot"), "{output}");
    });
}

#[test]
fn a_forged_free_list_link_aborts() {
    serially(|| {
        let output = aborted(workloads::in_child!(
            a_forged_free_list_link_aborts,
            |_| {},
            || {
                let mut kept = boxes(8);
                // Four freed slots, each given a planted link (a use after free). A
                // planted value passes the check only if it decodes to an offset in
                // the frame, a chance of 1 in 65536 with a random key: with four in
                // the walk the test cannot miss in practice.
                for planted in [64u32, 128, 192, 256] {
                    let victim = Box::into_raw(kept.pop().unwrap()).cast::<u32>();
                    // SAFETY: deliberately violated: the slot is freed, then written.
                    unsafe {
                        std::alloc::dealloc(victim.cast(), Layout::new::<T>());
                        victim.write(planted);
                    }
                }
                // The next refill walks the free list through the forged link.
                let again = boxes(8);
                drop((kept, again));
            }
        ));
        assert!(output.contains("corrupted free list"), "{output}");
    });
}

#[test]
fn a_double_free_waiting_in_an_outbox_aborts() {
    serially(|| {
        let output = aborted(workloads::in_child!(
            a_double_free_waiting_in_an_outbox_aborts,
            |_| {},
            || {
                // Freed on another thread, the slot waits in that thread's outbox
                // (its owner is this thread): the second free must still be caught.
                let p = Box::into_raw(boxes(4).pop().unwrap()) as usize;
                std::thread::spawn(move || {
                    // A heap of its own, so that the frees go to its outbox.
                    drop(boxes(4));
                    let p = p as *mut u8;
                    // SAFETY: deliberately violated: the second call frees a freed
                    // slot.
                    unsafe {
                        std::alloc::dealloc(p, Layout::new::<T>());
                        std::alloc::dealloc(p, Layout::new::<T>());
                    }
                })
                .join()
                .unwrap();
            }
        ));
        assert!(output.contains("batch-alloc: double free"), "{output}");
    });
}
