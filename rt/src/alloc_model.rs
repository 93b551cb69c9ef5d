//! A model-based property test of the allocator: random programs of
//! `alloc`, `alloc_zeroed`, `realloc` and `dealloc` through the global
//! allocator (this test binary's is `BatchAlloc<System>`), of sizes from a
//! byte to a few frames (small classes, the medium blocks between, large
//! blocks and past them), inside and outside a batch scope, mixed with
//! `trim()` and frees on another thread, half of them with the OS refusing
//! to take memory back (`os::refusals`, as it does for locked memory).
//!
//! The model is the list of live blocks with the layout each was made for
//! and the fill pattern written into it. After every step each block the
//! step made or moved must be aligned, apart from every other live block,
//! all zeros when it came from `alloc_zeroed`, and hold its pattern up to
//! the size it kept (a `realloc`'s old contents); every block's pattern is
//! checked again when it is freed, here or on the other thread.
//!
//! It runs in the unit tests, where the refusal can be injected. Cases: 4
//! under Miri, 48 by default, `MODEL_CASES` to change it (CI runs 10,000 in
//! release: `MODEL_CASES=10000 cargo test -p batch-alloc-rt --release --lib
//! alloc_model`).

use std::alloc::{alloc, alloc_zeroed, dealloc, realloc, Layout};
use std::collections::BTreeMap;
use std::sync::mpsc;

use proptest::prelude::*;

use crate::config::{FRAME_SIZE, MAX_SMALL_SIZE, PAGE_SIZE};
use crate::expansion::Scope;
use crate::os::refusals::refuse_decommit_on_this_thread;
use crate::trim;

#[derive(Clone, Debug)]
enum Op {
    /// A block of `size` bytes aligned to `align`, zeroed if `zeroed`.
    Alloc {
        size: usize,
        align: usize,
        zeroed: bool,
    },
    /// The live block at `index` (modulo the live count) resized to `size`.
    Realloc { index: usize, size: usize },
    /// The live block at `index` freed here.
    Free { index: usize },
    /// The live block at `index` freed on the other thread.
    FreeRemote { index: usize },
    /// Opens this thread's scope if none is open, else closes it.
    Scope,
    /// `trim()`.
    Trim,
}

/// The largest block a program makes: five frames (320 KiB; 20 KiB under
/// Miri, past its largest large block).
const MAX_SIZE: usize = 5 * FRAME_SIZE;

/// Sizes from each range the allocator treats apart: slots of the small
/// classes, medium blocks (the inner allocator's), and large blocks of
/// whole frames (exact ones, which waste nothing, and others).
fn size() -> impl Strategy<Value = usize> {
    prop_oneof![
        3 => 1..=64usize,
        3 => 65..=MAX_SMALL_SIZE,
        1 => MAX_SMALL_SIZE + 1..FRAME_SIZE,
        2 => (1..=5usize).prop_map(|frames| frames * FRAME_SIZE),
        2 => FRAME_SIZE / 2..=MAX_SIZE,
    ]
}

fn align() -> impl Strategy<Value = usize> {
    prop_oneof![
        6 => prop::sample::select(vec![1usize, 2, 4, 8, 16]),
        1 => prop::sample::select(vec![64usize, 256, PAGE_SIZE, FRAME_SIZE, 2 * FRAME_SIZE]),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (size(), align(), any::<bool>())
            .prop_map(|(size, align, zeroed)| Op::Alloc { size, align, zeroed }),
        4 => (any::<usize>(), size()).prop_map(|(index, size)| Op::Realloc { index, size }),
        5 => any::<usize>().prop_map(|index| Op::Free { index }),
        2 => any::<usize>().prop_map(|index| Op::FreeRemote { index }),
        2 => Just(Op::Scope),
        2 => Just(Op::Trim),
    ]
}

/// Bytes of the fill patterns: block `seed`'s byte `i` is `PATTERN[seed +
/// i]`, never zero, so that a check is a `memcmp` (quick in debug builds
/// and under Miri too).
struct Patterns(Vec<u8>);

const SEEDS: usize = 251;

impl Patterns {
    fn new() -> Patterns {
        let mut x = 0x9E37_79B9_u32;
        let bytes = (0..MAX_SIZE + SEEDS)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                (x >> 24) as u8 | 1
            })
            .collect();
        Patterns(bytes)
    }

    fn of(&self, seed: usize, len: usize) -> &[u8] {
        &self.0[seed % SEEDS..][..len]
    }
}

/// A live block of the model.
struct Block {
    ptr: *mut u8,
    layout: Layout,
    seed: usize,
}

// SAFETY: a block is an allocation of the global allocator, which may be
// freed on any thread; only one thread holds it at a time.
unsafe impl Send for Block {}

impl Block {
    fn bytes(&self) -> &[u8] {
        // SAFETY: the block is live, at least `size` bytes, and every byte
        // was written (a pattern or zeros) when it was made or grown.
        unsafe { core::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }

    /// Panics unless the block holds its pattern up to `len` bytes.
    fn check(&self, patterns: &Patterns, len: usize, what: &str) {
        let (bytes, expected) = (&self.bytes()[..len], patterns.of(self.seed, len));
        if bytes != expected {
            let at = bytes.iter().zip(expected).position(|(a, b)| a != b);
            panic!(
                "{what}: block {:p} ({:?}) lost its pattern at byte {at:?} of {len}",
                self.ptr, self.layout
            );
        }
    }

    /// Writes the block's pattern from byte `from` to its end.
    fn fill_from(&mut self, patterns: &Patterns, from: usize) {
        let size = self.layout.size();
        let pattern = &patterns.of(self.seed, size)[from..];
        // SAFETY: the block is live and `size` bytes long; nothing else
        // refers to it.
        let bytes = unsafe { core::slice::from_raw_parts_mut(self.ptr, size) };
        bytes[from..].copy_from_slice(pattern);
    }

    fn range(&self) -> (usize, usize) {
        (self.ptr.addr(), self.ptr.addr() + self.layout.size())
    }
}

/// Panics unless `block` is aligned and apart from every live block in
/// `ranges` (start to end), then records it there.
fn place(ranges: &mut BTreeMap<usize, usize>, block: &Block) {
    let (start, end) = block.range();
    assert!(!block.ptr.is_null(), "no memory for {:?}", block.layout);
    assert_eq!(
        start % block.layout.align(),
        0,
        "{:?} misaligned",
        block.layout
    );
    if let Some((&s, &e)) = ranges.range(..end).next_back() {
        assert!(
            e <= start,
            "overlap: [{s:#x},{e:#x}) and [{start:#x},{end:#x})"
        );
    }
    ranges.insert(start, end);
}

fn assert_zeroed(block: &Block) {
    const ZEROS: [u8; 4096] = [0; 4096];
    let stale = block
        .bytes()
        .chunks(ZEROS.len())
        .position(|chunk| chunk != &ZEROS[..chunk.len()]);
    if let Some(chunk) = stale {
        let nonzero = block.bytes().iter().filter(|&&b| b != 0).count();
        panic!(
            "alloc_zeroed({:?}) returned {nonzero} bytes that are not zero, the first in \
             bytes {}..",
            block.layout,
            chunk * ZEROS.len()
        );
    }
}

/// Runs one program on this thread, with a second for remote frees; `refuse`
/// makes the OS refuse to take memory back on both.
fn run(program: Vec<Op>, refuse: bool) {
    let patterns = std::sync::Arc::new(Patterns::new());
    let (to_remote, inbox) = mpsc::channel::<Block>();
    let (acks, acked) = mpsc::channel::<()>();
    let remote = {
        let patterns = patterns.clone();
        std::thread::spawn(move || {
            refuse_decommit_on_this_thread(refuse);
            for block in inbox {
                block.check(&patterns, block.layout.size(), "freed on another thread");
                // SAFETY: made by the global allocator with this layout,
                // and given up by the thread that sent it.
                unsafe { dealloc(block.ptr, block.layout) };
                acks.send(()).unwrap();
            }
        })
    };
    refuse_decommit_on_this_thread(refuse);
    let mut live: Vec<Block> = Vec::new();
    let mut ranges = BTreeMap::new();
    let mut scope: Option<core::pin::Pin<Box<Scope>>> = None;
    for (seed, op) in program.into_iter().enumerate() {
        match op {
            Op::Alloc {
                size,
                align,
                zeroed,
            } => {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: the layout's size is not zero.
                let ptr = unsafe {
                    match zeroed {
                        true => alloc_zeroed(layout),
                        false => alloc(layout),
                    }
                };
                let mut block = Block { ptr, layout, seed };
                place(&mut ranges, &block);
                if zeroed {
                    assert_zeroed(&block);
                }
                block.fill_from(&patterns, 0);
                live.push(block);
            }
            Op::Realloc { index, size } if !live.is_empty() => {
                let at = index % live.len();
                let mut block = live.swap_remove(at);
                block.check(&patterns, block.layout.size(), "before realloc");
                ranges.remove(&block.ptr.addr());
                let old = block.layout.size();
                // SAFETY: a live block of this layout; the size is not
                // zero and, rounded to the alignment, far below isize::MAX.
                block.ptr = unsafe { realloc(block.ptr, block.layout, size) };
                block.layout = Layout::from_size_align(size, block.layout.align()).unwrap();
                place(&mut ranges, &block);
                block.check(&patterns, old.min(size), "after realloc");
                block.fill_from(&patterns, old.min(size));
                live.push(block);
            }
            Op::Free { index } | Op::FreeRemote { index } if !live.is_empty() => {
                let block = live.swap_remove(index % live.len());
                ranges.remove(&block.ptr.addr());
                if matches!(op, Op::Free { .. }) {
                    block.check(&patterns, block.layout.size(), "freed");
                    // SAFETY: a live block of this layout, given up.
                    unsafe { dealloc(block.ptr, block.layout) };
                } else {
                    to_remote.send(block).unwrap();
                    acked.recv().unwrap();
                }
            }
            Op::Realloc { .. } | Op::Free { .. } | Op::FreeRemote { .. } => {}
            Op::Scope => {
                scope = match scope.take() {
                    Some(open) => {
                        drop(open);
                        None
                    }
                    None => {
                        // Pinned in a box: a guard stays where it entered.
                        let guard = Box::pin(Scope::new());
                        guard.as_ref().enter();
                        Some(guard)
                    }
                }
            }
            Op::Trim => trim(),
        }
    }
    drop(scope);
    for block in live.drain(..) {
        block.check(&patterns, block.layout.size(), "at the end");
        // SAFETY: a live block of this layout, given up.
        unsafe { dealloc(block.ptr, block.layout) };
    }
    drop(to_remote);
    remote.join().unwrap();
}

fn config() -> ProptestConfig {
    let cases = std::env::var("MODEL_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(if cfg!(miri) { 4 } else { 48 });
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_allocator_keeps_blocks_aligned_apart_intact_and_zeroed(
        program in prop::collection::vec(op(), 1..if cfg!(miri) { 40 } else { 200 }),
        refuse in any::<bool>(),
    ) {
        let outcome = std::thread::spawn(move || run(program, refuse)).join();
        if let Err(panic) = outcome {
            std::panic::resume_unwind(panic);
        }
    }
}
