//! Every allocation in a scope: while a scope is open on a thread, every
//! allocation there that the runtime has a size class for comes from the
//! thread's runs
//! (`alloc`, `alloc_zeroed`, `realloc`): strings, vectors as they grow,
//! `Rc` and `Arc`. Each stays an ordinary allocation, freed on any thread
//! at any time; zeroed ones are zero even in recycled slots; over-aligned
//! and large layouts are aligned as asked, served from a class that keeps
//! the alignment or passed through. `stats()` counts what scopes served and
//! is exact once everything is freed. Last, a property test over generated
//! programs of raw allocations.
//!
//! The inner allocator counts the blocks it serves on each thread, so each
//! test can tell an allocation a scope served from one it passed through.

use std::alloc::{alloc, alloc_zeroed, dealloc, realloc, Layout};
use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;
use std::sync::{mpsc, Arc, Mutex};
use std::thread;

use batch_alloc_rt::testing::limits::{FRAME_SIZE, MAX_LARGE_SIZE, MAX_SMALL_SIZE, PAGE_SIZE};
use batch_alloc_rt::testing::Guard;
use batch_alloc_rt::testing::{size_classes, SizeClass};
use batch_alloc_rt::{is_active, stats};
use proptest::prelude::*;

use crate::scope::{in_scope, inner_calls_in, live_since, scoped_since};
use workloads::testing::{assert_back_at, on_fresh_thread, seeded, serially, RngExt};

/// The class that serves `layout`: the smallest whose slots are at least
/// the layout's size and a multiple of its alignment (slots start at
/// multiples of their size from a frame's start), if the alignment is at
/// most a page.
fn class_for(layout: Layout) -> Option<&'static SizeClass> {
    let fits =
        |c: &&SizeClass| c.size as usize >= layout.size() && c.size as usize % layout.align() == 0;
    size_classes()
        .iter()
        .find(fits)
        .filter(|_| layout.align() <= PAGE_SIZE)
}

fn has_class(layout: Layout) -> bool {
    class_for(layout).is_some()
}

/// Whether a scope serves `layout`: a class does, or, past the
/// classes, a large block (up to its limit, aligned up to a frame).
fn served_in_scope(layout: Layout) -> bool {
    let size = layout.size();
    let large = MAX_SMALL_SIZE < size && size <= MAX_LARGE_SIZE;
    // Whole frames, unless that wastes more than an eighth of the block.
    let tail = size.next_multiple_of(FRAME_SIZE) - size;
    has_class(layout) || (large && layout.align() <= FRAME_SIZE && tail <= size / 8)
}

/// Byte `i` of the fill pattern of allocation `id`.
fn fill_byte(id: u64, i: usize) -> u8 {
    (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 24) as u8 ^ (i as u8).wrapping_mul(31)
}

/// A raw block of the global allocator, filled with its pattern.
struct Block {
    ptr: *mut u8,
    layout: Layout,
    id: u64,
}

// SAFETY: a block is a uniquely owned allocation, like a `Box<[u8]>`.
unsafe impl Send for Block {}

impl Block {
    /// Allocates `layout` (zeroed if asked, checking that it is), checks
    /// its alignment and fills it with the pattern of `id`.
    fn new(layout: Layout, id: u64, zeroed: bool) -> Block {
        // SAFETY: every layout the tests make has a non-zero size.
        let ptr = unsafe {
            match zeroed {
                true => alloc_zeroed(layout),
                false => alloc(layout),
            }
        };
        assert!(!ptr.is_null(), "{layout:?} failed");
        assert_eq!(
            ptr.addr() % layout.align(),
            0,
            "{layout:?} misaligned at {ptr:p}"
        );
        let block = Block { ptr, layout, id };
        if zeroed {
            assert!(
                block.bytes().iter().all(|&b| b == 0),
                "{layout:?} not zeroed at {ptr:p}"
            );
        }
        block.fill_from(0);
        block
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: the block is `layout.size()` bytes, initialised by the
        // allocation's zeroing or by `fill_from`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }

    /// Writes the pattern from byte `from` to the end.
    fn fill_from(&self, from: usize) {
        for i in from..self.layout.size() {
            // SAFETY: `i` is inside the block, which this owns.
            unsafe { self.ptr.add(i).write(fill_byte(self.id, i)) };
        }
    }

    /// Panics unless the pattern is intact.
    fn check(&self) {
        for (i, &b) in self.bytes().iter().enumerate() {
            assert_eq!(
                b,
                fill_byte(self.id, i),
                "block {} corrupted at byte {i}",
                self.id
            );
        }
    }

    fn range(&self) -> (usize, usize) {
        (self.ptr.addr(), self.ptr.addr() + self.layout.size())
    }

    /// Reallocates to `new_size`, checking that the kept bytes are intact
    /// and the alignment kept, and fills the rest.
    fn resize(&mut self, new_size: usize) {
        // SAFETY: allocated with `layout`, not freed; `new_size` is
        // non-zero and far from `isize::MAX`.
        let ptr = unsafe { realloc(self.ptr, self.layout, new_size) };
        assert!(!ptr.is_null(), "realloc to {new_size} failed");
        let kept = self.layout.size().min(new_size);
        self.ptr = ptr;
        self.layout = Layout::from_size_align(new_size, self.layout.align()).unwrap();
        assert_eq!(
            ptr.addr() % self.layout.align(),
            0,
            "realloc lost the alignment"
        );
        for i in 0..kept {
            // SAFETY: inside the block.
            let b = unsafe { ptr.add(i).read() };
            assert_eq!(
                b,
                fill_byte(self.id, i),
                "realloc lost byte {i} of block {}",
                self.id
            );
        }
        self.fill_from(kept);
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        self.check();
        // SAFETY: allocated with `layout` and not freed.
        unsafe { dealloc(self.ptr, self.layout) };
    }
}

// ---- strings, vectors, Rc and Arc ----

#[test]
fn strings_are_captured_as_they_are_made_and_grown() {
    serially(|| {
        assert!(is_active());
        on_fresh_thread(|| {
            let before = stats();
            let mut kept = Vec::with_capacity(64);
            let ((), inner) = inner_calls_in(|| {
                in_scope(|| {
                    kept.push(String::from("a literal"));
                    kept.push("to_owned".to_owned());
                    kept.push(format!("{}-{}", 12, "formatted"));
                    // Grown a byte at a time, its capacity doubling through the
                    // classes up to the largest.
                    let mut grown = String::new();
                    while grown.len() < MAX_SMALL_SIZE {
                        grown.push(char::from(b'a' + (grown.len() % 26) as u8));
                    }
                    assert_eq!(grown.capacity(), MAX_SMALL_SIZE);
                    kept.push(grown);
                })
            });
            assert_eq!(inner, 0, "a string was not captured");
            assert_eq!(kept[..3], ["a literal", "to_owned", "12-formatted"]);
            assert!(kept[3]
                .bytes()
                .enumerate()
                .all(|(i, b)| b == b'a' + (i % 26) as u8));
            assert!(scoped_since(&before) >= 4);
            drop(kept);
            assert_eq!(live_since(&before), 0);
        });
    });
}

#[test]
fn a_vector_grows_through_the_classes_into_a_large_block() {
    serially(|| {
        on_fresh_thread(|| {
            let before = stats();
            let words = MAX_SMALL_SIZE / 8;
            in_scope(|| {
                let mut v: Vec<u64> = Vec::new();
                let mut buffers = Vec::new();
                // Push by push up to the largest class: every growth moves the
                // vector to a slot of a larger class, never to the inner
                // allocator.
                let ((), inner) = inner_calls_in(|| {
                    for i in 0..words as u64 {
                        v.push(i);
                        if buffers.last() != Some(&v.as_ptr().addr()) {
                            buffers.push(v.as_ptr().addr());
                        }
                    }
                });
                assert_eq!(inner, 0, "growth inside the classes left the scope");
                assert!(
                    buffers.len() >= 4,
                    "the vector moved {} times",
                    buffers.len()
                );
                assert!(v.iter().copied().eq(0..words as u64));
                // Past the classes: medium blocks of the inner allocator up
                // to a frame, then a large block of the region, which grows
                // in place while it can.
                let frame_words = FRAME_SIZE / 8;
                for i in words as u64..frame_words as u64 {
                    v.push(i);
                }
                assert_eq!(v.capacity(), frame_words);
                let ((), inner) = inner_calls_in(|| {
                    for i in frame_words as u64..2 * frame_words as u64 {
                        v.push(i);
                    }
                });
                assert_eq!(inner, 0, "past a frame a large block serves");
                assert!(v.iter().copied().eq(0..2 * frame_words as u64));
                drop(buffers);
            });
            assert_eq!(live_since(&before), 0);
        });
    });
}

#[test]
fn a_vector_shrunk_or_grown_back_into_the_classes_returns_to_a_slot() {
    serially(|| {
        on_fresh_thread(|| {
            in_scope(|| {
                // Past the largest class: a large block.
                let mut v: Vec<u8> = vec![7; MAX_SMALL_SIZE + 1];
                v.truncate(100);
                let ((), inner) = inner_calls_in(|| v.shrink_to_fit());
                assert_eq!(inner, 0, "shrink_to_fit in a scope: not back in a slot");
                assert_eq!(v, [7; 100]);
            });
            // A small vector made outside any scope, grown inside one.
            let mut w: Vec<u8> = Vec::with_capacity(8);
            w.extend_from_slice(&[1; 8]);
            in_scope(|| {
                let ((), inner) = inner_calls_in(|| w.reserve(100));
                assert_eq!(inner, 0, "reserve in a scope: not moved into a slot");
                assert_eq!(w, [1; 8]);
            });
        });
    });
}

#[test]
fn rc_and_arc_are_captured_and_arcs_die_on_other_threads() {
    serially(|| {
        on_fresh_thread(|| {
            let before = stats();
            let (shared, inner) = inner_calls_in(|| {
                in_scope(|| {
                    let rc = Rc::new(vec![1u64, 2, 3]);
                    let weak = Rc::downgrade(&rc);
                    let arc = Arc::new(Mutex::new(String::from("arc")));
                    let arcs: Vec<Arc<[u64; 6]>> = (0..8).map(|i| Arc::new([i; 6])).collect();
                    assert_eq!(weak.upgrade().as_deref(), Some(&vec![1, 2, 3]));
                    (rc, weak, arc, arcs)
                })
            });
            assert_eq!(inner, 0, "an Rc or Arc was not captured");
            let (rc, weak, arc, arcs) = shared;
            // The scope is closed: the last references go on other threads.
            let (arc2, arcs2) = (arc.clone(), arcs.clone());
            let there = thread::spawn(move || {
                arc2.lock()
                    .unwrap()
                    .push_str(" grown past its slot on another thread");
                for (i, a) in arcs2.iter().enumerate() {
                    assert_eq!(**a, [i as u64; 6]);
                }
                drop(arcs2);
            });
            drop(arcs);
            there.join().unwrap();
            assert_eq!(
                *arc.lock().unwrap(),
                "arc grown past its slot on another thread"
            );
            thread::spawn(move || drop(arc)).join().unwrap();
            drop(rc);
            assert!(weak.upgrade().is_none());
            drop(weak);
            assert!(scoped_since(&before) >= 12);
            assert_eq!(live_since(&before), 0);
        });
    });
}

// ---- zeroed allocations ----

#[test]
fn zeroed_allocations_are_zero_even_in_recycled_slots() {
    serially(|| {
        on_fresh_thread(|| {
            let sizes: &[usize] = match cfg!(miri) {
                true => &[24, MAX_SMALL_SIZE],
                false => &[8, 24, 48, 200, MAX_SMALL_SIZE / 2 + 8, MAX_SMALL_SIZE],
            };
            in_scope(|| {
                for &size in sizes {
                    for align in [8, 64] {
                        let layout = Layout::from_size_align(size, align).unwrap();
                        // Spans' worth, dirtied and freed, then twice as many
                        // zeroed: the runs' refills must take slots (or whole
                        // frames) that held the pattern.
                        let spans = if cfg!(miri) { 1 } else { 2 };
                        let n = spans * class_for(layout).expect("a class").slots as u64;
                        let dirty: Vec<Block> =
                            (0..n).map(|i| Block::new(layout, i, false)).collect();
                        let dirty_at: HashSet<usize> = dirty.iter().map(|b| b.ptr.addr()).collect();
                        drop(dirty);
                        let clean: Vec<Block> =
                            (0..2 * n).map(|i| Block::new(layout, i, true)).collect();
                        let reused = clean
                            .iter()
                            .filter(|b| dirty_at.contains(&b.ptr.addr()))
                            .count();
                        assert!(
                            reused > 0,
                            "{layout:?}: no slot was reused, the test proves nothing"
                        );
                    }
                }
                // The standard library's zeroed allocations.
                let (zeroed, inner) = inner_calls_in(|| {
                    (
                        vec![0u8; 100],
                        vec![0u64; 20],
                        Box::<[u64]>::new_zeroed_slice(12),
                    )
                });
                assert_eq!(inner, 0);
                assert!(zeroed.0.iter().all(|&b| b == 0) && zeroed.1.iter().all(|&w| w == 0));
                // SAFETY: zeroed memory is a valid `[u64]`.
                let slice = unsafe { zeroed.2.assume_init() };
                assert!(slice.iter().all(|&w| w == 0));
            });
        });
    });
}

// ---- alignment and size ----

#[test]
fn every_layout_is_aligned_and_served_by_a_class_or_passed_through() {
    serially(|| {
        on_fresh_thread(|| {
            let before = stats();
            let mut expected_scoped = 0;
            let mut blocks = Vec::new();
            in_scope(|| {
                let mut id = 0;
                let largest = MAX_SMALL_SIZE;
                let (aligns, sizes): (&[usize], &[usize]) = match cfg!(miri) {
                    true => (&[1, 8, 64, 4096, 8192], &[1, 8, 100, largest, largest + 1]),
                    false => (
                        &[1, 2, 4, 8, 16, 32, 64, 4096, 8192],
                        &[
                            1,
                            7,
                            8,
                            24,
                            100,
                            255,
                            largest - 1,
                            largest,
                            largest + 1,
                            2 * largest + 500,
                        ],
                    ),
                };
                for &align in aligns {
                    for &size in sizes {
                        let layout = Layout::from_size_align(size, align).unwrap();
                        for zeroed in [false, true] {
                            id += 1;
                            let (block, inner) = inner_calls_in(|| Block::new(layout, id, zeroed));
                            let captured = served_in_scope(layout);
                            assert_eq!(inner == 0, captured, "{layout:?} zeroed {zeroed}");
                            expected_scoped += u64::from(captured);
                            blocks.push(block);
                        }
                    }
                }
                // Grown and shrunk, each keeps its alignment and contents.
                for block in blocks.iter_mut().step_by(3) {
                    let size = block.layout.size();
                    block.resize(size * 3);
                    block.resize(size.div_ceil(2));
                }
            });
            assert!(scoped_since(&before) >= expected_scoped);
            assert!(expected_scoped > 0);
            drop(blocks);
            assert_eq!(live_since(&before), 0);
        });
    });
}

// ---- frees elsewhere, later ----

#[test]
fn captured_allocations_are_freed_on_other_threads_after_the_scope_closed() {
    serially(|| {
        let n: u64 = if cfg!(miri) { 30 } else { 3_000 };
        let before = stats();
        type Made = Vec<(String, Vec<u32>, Box<[u64; 3]>)>;
        let (to_freer, inbox) = mpsc::channel::<Made>();
        let freer = thread::spawn(move || {
            for made in inbox {
                for (s, v, b) in made {
                    assert_eq!(s, format!("item {}", b[0]));
                    assert!(v.into_iter().eq(0..(b[0] % 7) as u32));
                    assert_eq!(*b, [b[0], !b[0], 5]);
                }
            }
        });
        // Two threads: one frees what it sent while it lives on, the other
        // has exited before the frees.
        for exits_first in [false, true] {
            let to_freer_there = to_freer.clone();
            let sent = on_fresh_thread(move || {
                let mut made: Made = Vec::with_capacity(n as usize);
                in_scope(|| {
                    for i in 0..n {
                        let v = (0..(i % 7) as u32).collect();
                        made.push((format!("item {i}"), v, Box::new([i, !i, 5])));
                    }
                });
                // Half go now, while this thread lives.
                let later = made.split_off(made.len() / 2);
                to_freer_there.send(made).unwrap();
                if exits_first {
                    later
                } else {
                    to_freer_there.send(later).unwrap();
                    Vec::new()
                }
            });
            to_freer.send(sent).unwrap();
        }
        drop(to_freer);
        freer.join().unwrap();
        assert!(scoped_since(&before) >= 2 * n);
        assert_back_at(&before, &stats());
    });
}

// ---- statistics ----

#[test]
fn statistics_count_scoped_allocations_exactly_and_leave_run_leftovers_out() {
    serially(|| {
        let before = stats();
        let kept = on_fresh_thread(move || {
            // Room made outside the scope: inside it only the blocks allocate.
            let mut kept = Vec::with_capacity(16);
            in_scope(|| {
                for (i, size) in [8, 16, 16, 40, 100, 100, 100, 256].into_iter().enumerate() {
                    let layout = Layout::from_size_align(size.min(MAX_SMALL_SIZE), 8).unwrap();
                    kept.push(Block::new(layout, i as u64, i % 2 == 0));
                }
            });
            // Exact while this thread's runs still hold their leftovers.
            assert_eq!(scoped_since(&before), 8);
            assert_eq!(live_since(&before), 8);
            kept.truncate(3);
            assert_eq!(live_since(&before), 3);
            kept
        });
        // And after the thread has gone and its runs gave back what was left.
        assert_eq!(scoped_since(&before), 8);
        assert_eq!(live_since(&before), 3);
        drop(kept);
        assert_back_at(&before, &stats());
    });
}

// ---- generated programs ----

#[derive(Clone, Debug)]
enum Op {
    /// Enter a new guard, nested in the ones open (up to three).
    Open,
    /// Drop the innermost guard.
    Close,
    Alloc {
        size: usize,
        align_shift: u32,
        zeroed: bool,
    },
    /// Reallocate the live block at `index` (modulo the live count).
    Realloc { index: usize, size: usize },
    /// Free it here.
    Free { index: usize },
    /// Free it on the other thread.
    FreeRemote { index: usize },
    /// Check every live block's pattern.
    Check,
}

/// Largest size the generated programs ask for: past the largest class, so
/// that realloc crosses out of the region and back.
const MAX_SIZE: usize = if cfg!(miri) {
    2 * MAX_SMALL_SIZE
} else {
    5_000
};

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => Just(Op::Open),
        1 => Just(Op::Close),
        8 => (1..=MAX_SIZE, 0..=6u32, any::<bool>())
            .prop_map(|(size, align_shift, zeroed)| Op::Alloc { size, align_shift, zeroed }),
        3 => (any::<usize>(), 1..=MAX_SIZE).prop_map(|(index, size)| Op::Realloc { index, size }),
        3 => any::<usize>().prop_map(|index| Op::Free { index }),
        2 => any::<usize>().prop_map(|index| Op::FreeRemote { index }),
        1 => Just(Op::Check),
    ]
}

/// Live blocks by address, checked pairwise disjoint as they are made.
#[derive(Default)]
struct Live {
    blocks: Vec<Block>,
    ranges: BTreeMap<usize, usize>,
}

impl Live {
    fn insert(&mut self, block: Block) {
        let (start, end) = block.range();
        if let Some((&s, &e)) = self.ranges.range(..end).next_back() {
            assert!(
                e <= start || s >= end,
                "overlap: {s:#x}..{e:#x} and {start:#x}..{end:#x}"
            );
        }
        if let Some((&s, _)) = self.ranges.range(start..).next() {
            assert!(s >= end, "overlap: {start:#x}..{end:#x} and one at {s:#x}");
        }
        self.ranges.insert(start, end);
        self.blocks.push(block);
    }

    fn take(&mut self, index: usize) -> Option<Block> {
        if self.blocks.is_empty() {
            return None;
        }
        let block = self.blocks.swap_remove(index % self.blocks.len());
        self.ranges.remove(&block.range().0);
        Some(block)
    }
}

/// Runs one program on this thread (a fresh one), with a second thread for
/// remote frees. Returns how many allocations the scope should have
/// served, by the rule that it serves exactly the layouts with a class or
/// within the large blocks' limits.
fn run(program: Vec<Op>) -> u64 {
    let (to_remote, inbox) = mpsc::channel::<Block>();
    let remote = thread::spawn(move || inbox.into_iter().for_each(drop));
    let mut guards: Vec<Guard> = Vec::new();
    let mut live = Live::default();
    let mut served = 0;
    for (id, op) in program.into_iter().enumerate() {
        match op {
            Op::Open if guards.len() < 3 => {
                let guard = Guard::new();
                guard.enter();
                guards.push(guard);
            }
            Op::Close => drop(guards.pop()),
            Op::Alloc {
                size,
                align_shift,
                zeroed,
            } => {
                let layout = Layout::from_size_align(size, 1 << align_shift).unwrap();
                let (block, inner) = inner_calls_in(|| Block::new(layout, id as u64, zeroed));
                let captured = !guards.is_empty() && served_in_scope(layout);
                assert_eq!(inner == 0, captured, "{layout:?}, {} guards", guards.len());
                served += u64::from(captured);
                live.insert(block);
            }
            Op::Realloc { index, size } => {
                if let Some(mut block) = live.take(index) {
                    block.resize(size);
                    live.insert(block);
                }
            }
            Op::Free { index } => drop(live.take(index)),
            Op::FreeRemote { index } => {
                if let Some(block) = live.take(index) {
                    to_remote.send(block).unwrap();
                }
            }
            Op::Check | Op::Open => live.blocks.iter().for_each(Block::check),
        }
    }
    drop(guards);
    drop(live);
    drop(to_remote);
    remote.join().unwrap();
    served
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 3 } else { 32 },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn generated_programs_keep_blocks_disjoint_aligned_intact_and_leak_nothing(
        program in prop::collection::vec(op(), 1..if cfg!(miri) { 40 } else { 400 })
    ) {
        let (before, served, after) = serially(move || {
            let before = stats();
            let served = on_fresh_thread(move || run(program));
            (before, served, stats())
        });
        prop_assert!(after.scoped_allocations - before.scoped_allocations >= served);
        assert_back_at(&before, &after);
    }
}

/// A seeded mix of the same operations, longer than the generated ones, on
/// four threads at once.
#[test]
fn threads_run_scoped_programs_at_once() {
    serially(|| {
        let before = stats();
        let len = if cfg!(miri) { 30 } else { 1_500 };
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let mut rng = seeded(0x5C0FE ^ t);
                let program: Vec<Op> = (0..len)
                    .map(|_| match rng.random_range(0..40) {
                        0 => Op::Open,
                        1 => Op::Close,
                        2..=19 => Op::Alloc {
                            size: 1 + rng.random_range(0..MAX_SIZE),
                            align_shift: rng.random_range(0..7) as u32,
                            zeroed: rng.random_ratio(1, 3),
                        },
                        20..=26 => Op::Realloc {
                            index: rng.random_range(0..1 << 20),
                            size: 1 + rng.random_range(0..MAX_SIZE),
                        },
                        27..=34 => Op::Free {
                            index: rng.random_range(0..1 << 20),
                        },
                        35..=38 => Op::FreeRemote {
                            index: rng.random_range(0..1 << 20),
                        },
                        _ => Op::Check,
                    })
                    .collect();
                thread::spawn(move || run(program))
            })
            .collect();
        let served: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
        assert!(served > 0);
        assert!(scoped_since(&before) >= served);
        assert_back_at(&before, &stats());
    });
}
