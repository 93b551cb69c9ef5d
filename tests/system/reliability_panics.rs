//! Panics and reallocation of batched boxes: a `Drop` that panics while a
//! batched loop's boxes are dropped, a panic in the middle of batched loops
//! (caught, or ending the thread), in loops that box from an explicit
//! [`Batch`], which gives its unused slots back as it unwinds, and in
//! `#[batch_alloc]` loops, whose scope closes, and a batched
//! `Box` turned into a `Vec` with `Vec::from_raw_parts` and grown or shrunk
//! (realloc of a slot: in place within its class, else moved out). In every
//! case each slot must be freed exactly once: `stats()` counts the slots
//! still out, so a leak leaves it above its baseline and a double free
//! below it (or aborts).
//!
//! Statistics are process-wide, so the tests run one at a time
//! ([`serially`]), each on a fresh thread whose heap is retired before the
//! final reading.

// Vectors of boxes are what batched loops make.
#![allow(clippy::vec_box)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::thread;

use batch_alloc::{batch_alloc, is_active, stats, Batch, Stats};
use batch_alloc_rt::testing::scope_on_this_thread;
use workloads::testing::{
    assert_back_at, assert_boxes_disjoint, assert_disjoint, box_range, check_words, class_of, fill,
    serially, silenced, slice_range,
};

/// Runs `f` on a fresh thread, one test at a time ([`serially`]), and
/// checks that every slot and span is back once the thread has exited.
/// Returns `f`'s result (`Err` if it panicked) and the statistics before.
fn leak_checked<R: Send + 'static>(
    f: impl FnOnce(Stats) -> R + Send + 'static,
) -> (thread::Result<R>, Stats) {
    serially(|| {
        assert!(is_active());
        let before = stats();
        let result = thread::spawn(move || f(before)).join();
        assert_back_at(&before, &stats());
        (result, before)
    })
}

/// Slots out and boxes batched since `before`.
fn since(before: Stats) -> (u64, u64) {
    let now = stats();
    (
        now.live_slots - before.live_slots,
        now.batched_boxes - before.batched_boxes,
    )
}

// ---- a Drop that panics ----

static BOMB_DROPS: AtomicU64 = AtomicU64::new(0);

/// 64 bytes, with a pattern checked on drop; the armed one panics there.
struct Bomb {
    id: u64,
    words: [u64; 6],
    armed: bool,
}

impl Bomb {
    fn new(id: u64, armed: bool) -> Bomb {
        Bomb {
            id,
            words: fill(id),
            armed,
        }
    }
}

impl Drop for Bomb {
    fn drop(&mut self) {
        check_words(&self.words, self.id);
        BOMB_DROPS.fetch_add(1, Relaxed);
        if self.armed {
            panic!("bomb {} went off", self.id);
        }
    }
}

fn bombs(n: u64, armed: u64) -> Vec<Box<Bomb>> {
    let mut batch = Batch::with_capacity(n as usize);
    let mut out = Vec::with_capacity(n as usize);
    for id in 0..n {
        out.push(batch.alloc(Bomb::new(id, id == armed)));
    }
    out
}

#[test]
fn a_drop_that_panics_while_batched_boxes_are_dropped() {
    let (result, _) = leak_checked(|before| {
        let all = bombs(1_000, 500);
        assert_eq!(since(before), (1_000, 1_000), "every box batched");
        for b in &all {
            check_words(&b.words, b.id);
        }
        assert_boxes_disjoint(&all);
        let drops = BOMB_DROPS.load(Relaxed);
        let dropped = catch_unwind(AssertUnwindSafe(move || drop(all)));
        assert!(dropped.is_err(), "the armed bomb panicked");
        // The vector went on dropping the other 999 after the panic, and
        // the panicking box's slot was freed too.
        assert_eq!(BOMB_DROPS.load(Relaxed) - drops, 1_000);
        assert_eq!(since(before).0, 0, "every slot freed");
    });
    result.unwrap();
}

/// Boxes bombs in a loop, keeping one in ten and dropping the others as it
/// goes; the armed bomb's drop panics in the middle of the loop.
fn drop_as_you_go(n: u64, armed: u64, kept: &mut Vec<Box<Bomb>>) {
    let mut batch = Batch::with_capacity(n as usize);
    for id in 0..n {
        let b = batch.alloc(Bomb::new(id, id == armed));
        if id % 10 == 0 {
            kept.push(b);
        } else {
            drop(b);
        }
    }
}

#[test]
fn a_drop_that_panics_inside_a_batched_loop() {
    let (result, _) = leak_checked(|before| {
        let mut kept = Vec::new();
        let run = catch_unwind(AssertUnwindSafe(|| drop_as_you_go(1_000, 733, &mut kept)));
        assert!(run.is_err());
        // Boxes 0..=733 were made; the loop's batch gave its other 266
        // slots back while unwinding, so only the kept ones are out.
        assert_eq!(kept.len(), 74);
        assert_eq!(since(before), (74, 734));
        for b in &kept {
            check_words(&b.words, b.id);
        }
        assert_boxes_disjoint(&kept);
        drop(kept);
        assert_eq!(since(before).0, 0);
    });
    result.unwrap();
}

// ---- a panic in the middle of a batched loop ----

/// Boxes one filled record per item and panics at the first `u64::MAX`.
fn parse_until_bad(items: &[u64], out: &mut Vec<Box<[u64; 8]>>) {
    let mut batch = Batch::with_capacity(items.len());
    for &item in items {
        if item == u64::MAX {
            panic!("malformed item after {} good ones", out.len());
        }
        out.push(batch.alloc(fill(item)));
    }
}

/// Rows of cells, boxed in nested loops; a bad cell panics in the inner
/// loop, whose batch lives outside the outer one, so that it serves every
/// row and holds unused slots when the panic comes.
fn parse_rows(rows: &[Vec<u64>], cells: &mut Vec<Box<[u64; 4]>>, heads: &mut Vec<Box<[u64; 2]>>) {
    let mut head_batch = Batch::with_capacity(rows.len());
    let mut cell_batch = Batch::new();
    for row in rows {
        heads.push(head_batch.alloc(fill(row[0])));
        for &cell in &row[1..] {
            if cell == u64::MAX {
                panic!("bad cell");
            }
            cells.push(cell_batch.alloc(fill(cell)));
        }
    }
}

#[test]
fn a_panic_in_the_middle_of_a_batched_loop_gives_the_slots_back() {
    let (result, _) = leak_checked(|before| {
        let mut items: Vec<u64> = (0..1_000).collect();
        items[617] = u64::MAX;
        let mut out = Vec::new();
        let run = catch_unwind(AssertUnwindSafe(|| parse_until_bad(&items, &mut out)));
        assert!(run.is_err());
        assert_eq!(out.len(), 617);
        // The batch reserved 1,000 slots (its capacity) and gave back the
        // 383 it never handed out while unwinding.
        assert_eq!(since(before), (617, 617));
        for (id, b) in out.iter().enumerate() {
            check_words(&b[..], id as u64);
        }
        assert_boxes_disjoint(&out);
        drop(out);

        let before = stats();
        let rows: Vec<Vec<u64>> = (0..50u64)
            .map(|r| (0..40).map(|c| r * 1_000 + c).collect())
            .collect();
        let mut bad = rows.clone();
        bad[37][20] = u64::MAX;
        let (mut cells, mut heads) = (Vec::new(), Vec::new());
        let run = catch_unwind(AssertUnwindSafe(|| {
            parse_rows(&bad, &mut cells, &mut heads)
        }));
        assert!(run.is_err());
        assert_eq!((heads.len(), cells.len()), (38, 37 * 39 + 19));
        let (live, batched) = since(before);
        assert_eq!(live, batched, "no slot stranded in an unwound batch");
        // Every box is a slot: the cells' batch has no capacity, so its
        // first two boxes are lone slots and the rest come from its refills.
        assert_eq!(batched, (heads.len() + cells.len()) as u64);
        for (i, b) in heads.iter().enumerate() {
            check_words(&b[..], i as u64 * 1_000);
        }
        for (i, b) in cells.iter().enumerate() {
            let (row, col) = (i / 39, i % 39 + 1);
            check_words(&b[..], (row * 1_000 + col) as u64);
        }
        let mut ranges: Vec<_> = heads.iter().map(box_range).collect();
        ranges.extend(cells.iter().map(box_range));
        assert_disjoint(&mut ranges);
    });
    result.unwrap();
}

fn share_until_bad(items: &[u64], shared: &Mutex<Vec<Box<[u64; 8]>>>) {
    let mut batch = Batch::with_capacity(items.len());
    for &item in items {
        if item == u64::MAX {
            panic!("the thread dies");
        }
        let b = batch.alloc(fill(item));
        shared.lock().unwrap().push(b);
    }
}

#[test]
fn a_thread_killed_by_a_panic_mid_loop_leaves_its_boxes_valid() {
    serially(|| {
        let before = stats();
        let shared = Arc::new(Mutex::new(Vec::new()));
        let in_thread = shared.clone();
        let result = thread::spawn(move || {
            let mut items: Vec<u64> = (0..800).collect();
            items[555] = u64::MAX;
            share_until_bad(&items, &in_thread);
        })
        .join();
        assert!(result.is_err(), "the thread panicked");
        let boxes = std::mem::take(&mut *shared.lock().unwrap_or_else(|e| e.into_inner()));
        assert_eq!(boxes.len(), 555);
        // The dead thread's batch gave its unused slots back while unwinding;
        // its span is abandoned with the boxes in it. They are freed here, and
        // the last free reclaims the span.
        assert_eq!(since(before), (555, 555));
        for (id, b) in boxes.iter().enumerate() {
            check_words(&b[..], id as u64);
        }
        assert_boxes_disjoint(&boxes);
        drop(boxes);
        // The last free reclaimed the abandoned span.
        assert_back_at(&before, &stats());
    });
}

// ---- the same panics under batch scopes ----

/// The loops above under `#[batch_alloc]`: their allocations come from
/// the thread's scope, which must close however the loop ends.
mod scoped {
    use super::*;

    #[batch_alloc]
    pub fn drop_as_you_go(n: u64, armed: u64, kept: &mut Vec<Box<Bomb>>) {
        for id in 0..n {
            let b = Box::new(Bomb::new(id, id == armed));
            if id % 10 == 0 {
                kept.push(b);
            } else {
                drop(b);
            }
        }
    }

    #[batch_alloc]
    pub fn parse_rows(
        rows: &[Vec<u64>],
        cells: &mut Vec<Box<[u64; 4]>>,
        heads: &mut Vec<Box<[u64; 2]>>,
    ) {
        for row in rows {
            heads.push(Box::new(fill(row[0])));
            for &cell in &row[1..] {
                if cell == u64::MAX {
                    panic!("bad cell");
                }
                cells.push(Box::new(fill(cell)));
            }
        }
    }

    #[batch_alloc]
    pub fn share_until_bad(items: &[u64], shared: &Mutex<Vec<Box<[u64; 8]>>>) {
        for &item in items {
            if item == u64::MAX {
                panic!("the thread dies");
            }
            let b = Box::new(fill(item));
            shared.lock().unwrap().push(b);
        }
    }
}

/// Allocations served by a scope since `before`.
fn scoped_since(before: Stats) -> u64 {
    stats().scoped_allocations - before.scoped_allocations
}

#[test]
fn a_drop_that_panics_inside_a_scoped_loop_closes_the_scope() {
    let (result, _) = leak_checked(|before| {
        let mut kept = Vec::new();
        let run = silenced(|| {
            catch_unwind(AssertUnwindSafe(|| {
                scoped::drop_as_you_go(1_000, 733, &mut kept)
            }))
        });
        assert!(run.is_err());
        assert_eq!(
            scope_on_this_thread(),
            None,
            "the scope closed while unwinding"
        );
        assert_eq!(kept.len(), 74);
        assert!(scoped_since(before) >= 734, "every box came from the scope");
        for b in &kept {
            check_words(&b.words, b.id);
        }
        assert_boxes_disjoint(&kept);
        // Outside the scope again: a box is the inner allocator's.
        let served = stats().scoped_allocations;
        let outside = Box::new(Bomb::new(1, false));
        assert_eq!(stats().scoped_allocations, served);
        drop(outside);
        drop(kept);
        // The panic's payload (its message) was made in the scope too.
        drop(run);
        assert_eq!(since(before).0, 0, "every slot freed");
    });
    result.unwrap();
}

#[test]
fn a_panic_in_a_nested_scoped_loop_closes_the_scope() {
    let (result, _) = leak_checked(|before| {
        let rows: Vec<Vec<u64>> = (0..50u64)
            .map(|r| (0..40).map(|c| r * 1_000 + c).collect())
            .collect();
        let mut bad = rows.clone();
        bad[37][20] = u64::MAX;
        let (mut cells, mut heads) = (Vec::new(), Vec::new());
        let run = silenced(|| {
            catch_unwind(AssertUnwindSafe(|| {
                scoped::parse_rows(&bad, &mut cells, &mut heads)
            }))
        });
        assert!(run.is_err());
        assert_eq!(
            scope_on_this_thread(),
            None,
            "the scope closed while unwinding"
        );
        assert_eq!((heads.len(), cells.len()), (38, 37 * 39 + 19));
        assert!(scoped_since(before) >= (heads.len() + cells.len()) as u64);
        for (i, b) in heads.iter().enumerate() {
            check_words(&b[..], i as u64 * 1_000);
        }
        for (i, b) in cells.iter().enumerate() {
            let (row, col) = (i / 39, i % 39 + 1);
            check_words(&b[..], (row * 1_000 + col) as u64);
        }
        let mut ranges: Vec<_> = heads.iter().map(box_range).collect();
        ranges.extend(cells.iter().map(box_range));
        assert_disjoint(&mut ranges);
        // The same loop runs again on the thread, from a fresh scope.
        let (mut cells2, mut heads2) = (Vec::new(), Vec::new());
        scoped::parse_rows(&rows, &mut cells2, &mut heads2);
        assert_eq!((heads2.len(), cells2.len()), (50, 50 * 39));
    });
    result.unwrap();
}

#[test]
fn a_thread_killed_mid_scoped_loop_leaves_its_allocations_valid() {
    serially(|| {
        let before = stats();
        let shared = Arc::new(Mutex::new(Vec::new()));
        let in_thread = shared.clone();
        let result = silenced(|| {
            thread::spawn(move || {
                let mut items: Vec<u64> = (0..800).collect();
                items[555] = u64::MAX;
                scoped::share_until_bad(&items, &in_thread);
            })
            .join()
        });
        // The payload (the panic's message) was made in the scope too.
        assert!(result.is_err(), "the thread panicked");
        drop(result);
        let boxes = std::mem::take(&mut *shared.lock().unwrap_or_else(|e| e.into_inner()));
        assert_eq!(boxes.len(), 555);
        assert!(scoped_since(before) >= 555);
        for (id, b) in boxes.iter().enumerate() {
            check_words(&b[..], id as u64);
        }
        assert_boxes_disjoint(&boxes);
        // The dead thread's runs went back at its exit; its spans are
        // abandoned with these boxes in them, and the last free reclaims them.
        drop(boxes);
        assert_back_at(&before, &stats());
    });
}

// ---- realloc of a slot through Vec::from_raw_parts ----

/// A batched box (a slot, not a plain box: checked through the count of
/// live slots).
fn batched<T>(value: T, before: Stats) -> Box<T> {
    let live = since(before).0;
    let mut batch = Batch::with_capacity(8);
    let b = batch.alloc(value);
    drop(batch);
    assert_eq!(since(before).0, live + 1, "the box is a slot");
    b
}

/// The words of a batched `Box<[u64; N]>` as a `Vec<u64>` of that capacity.
fn into_vec<const N: usize>(b: Box<[u64; N]>) -> Vec<u64> {
    let raw = Box::into_raw(b).cast::<u64>();
    // SAFETY: the pointer comes from a `Box<[u64; N]>` allocated by the
    // global allocator: N initialised u64s, and the layout of a
    // `Vec<u64>` of capacity N (size 8 N, align 8).
    unsafe { Vec::from_raw_parts(raw, N, N) }
}

#[test]
fn a_batched_box_grown_as_a_vec_stays_in_its_slot_then_moves_out() {
    // 40 bytes in a 48-byte class: one more word fits in place.
    assert_eq!(class_of::<[u64; 5]>().size, 48);
    let (result, _) = leak_checked(|before| {
        let mut v = into_vec(batched(fill::<5>(1), before));
        let at = v.as_ptr();
        v.reserve_exact(1);
        assert_eq!((v.as_ptr(), v.capacity()), (at, 6), "grown in place");
        v.push(pattern_of(1, 5));
        assert_eq!(since(before).0, 1, "still the slot");
        // Past the class: the contents move to the inner allocator and the
        // slot is freed, once.
        v.extend((6..100).map(|i| pattern_of(1, i)));
        assert_ne!(v.as_ptr(), at);
        assert_eq!(since(before).0, 0, "slot freed when the vector moved out");
        check_words(&v, 1);
        drop(v);
        assert_eq!(since(before).0, 0);
    });
    result.unwrap();
}

fn pattern_of(id: u64, i: usize) -> u64 {
    workloads::testing::pattern(id, i)
}

#[test]
fn a_batched_box_shrunk_as_a_vec_stays_in_its_slot() {
    let (result, _) = leak_checked(|before| {
        let mut v = into_vec(batched(fill::<32>(2), before));
        let at = v.as_ptr();
        v.truncate(3);
        v.shrink_to_fit();
        assert_eq!((v.as_ptr(), v.capacity()), (at, 3), "shrunk in place");
        assert_eq!(since(before).0, 1);
        check_words(&v, 2);
        // Freed with the smaller layout: still the slot's start.
        drop(v);
        assert_eq!(since(before).0, 0);
        // A byte buffer, grown to fill its 112-byte class, then past it.
        let b: Box<[u8; 100]> = batched([7u8; 100], before);
        let raw = Box::into_raw(b).cast::<u8>();
        // SAFETY: from a `Box<[u8; 100]>` of the global allocator: 100
        // initialised bytes, the layout of a `Vec<u8>` of capacity 100.
        let mut bytes = unsafe { Vec::from_raw_parts(raw, 100, 100) };
        bytes.reserve_exact(12);
        assert_eq!(bytes.as_ptr(), raw, "grown in place to the class size");
        bytes.extend_from_slice(&[8; 12]);
        bytes.extend_from_slice(&[9; 500]);
        assert_eq!(since(before).0, 0);
        assert!(bytes[..100].iter().all(|&x| x == 7));
        assert!(bytes[100..112].iter().all(|&x| x == 8));
        assert!(bytes[112..].iter().all(|&x| x == 9));
    });
    result.unwrap();
}

#[test]
fn a_batched_box_grown_as_a_vec_on_another_thread() {
    let (result, _) = leak_checked(|before| {
        let grown = into_vec(batched(fill::<8>(3), before));
        let shrunk = into_vec(batched(fill::<8>(4), before));
        assert_eq!(since(before).0, 2);
        assert_disjoint(&mut [slice_range(&grown), slice_range(&shrunk)]);
        // Moving out of the slot frees it remotely; the shrunk one is freed
        // remotely when dropped.
        thread::spawn(move || {
            let mut grown = grown;
            grown.extend((8..64).map(|i| pattern_of(3, i)));
            check_words(&grown, 3);
            let mut shrunk = shrunk;
            shrunk.truncate(2);
            shrunk.shrink_to_fit();
            check_words(&shrunk, 4);
        })
        .join()
        .unwrap();
        assert_eq!(since(before).0, 0);
    });
    result.unwrap();
}
