//! A model-based property test of the allocator: random programs of
//! `alloc`, `alloc_zeroed`, `realloc` and `dealloc` through the global
//! allocator (this test binary's is `BatchAlloc<System>`), run by several
//! threads at once that hand blocks to each other and free or grow what
//! they are handed; mixed with boxes from batches and from open scopes
//! (`Batch`, `box_in_scope`), scopes opened and closed, `trim()`, threads
//! that exit with blocks still out (their spans abandoned), forks, and a
//! clock the test moves, so that the decay's delays pass inside a program;
//! half of the programs with the OS refusing to take memory back
//! (`os::refusals`, as it does for locked memory).
//!
//! Sizes run from a byte to past the largest large block, with the edges
//! where a size changes hands or a conversion could wrap: the classes'
//! end, whole frames, the largest large block, 2^32, 2^48 (2^32 frames),
//! 2^62 and the largest a `Layout` allows, with alignments up to 2^29.
//! A request no allocator can meet must fail exactly as the system
//! allocator fails it (both null), and a block `realloc` could not grow
//! stays as it was.
//!
//! The model is each thread's list of live blocks with the layout each was
//! made for and the fill pattern written into it, and one map of every
//! live block's range. After every step each block the step made or moved
//! must be aligned, apart from every other live block, all zeros when it
//! came from `alloc_zeroed`, and hold its pattern up to the size it kept
//! (a `realloc`'s old contents); every block's pattern is checked again
//! when it is freed, on whichever thread. (Blocks past 256 KiB are filled
//! and checked in pieces: their first and last 64 KiB and 64 bytes at
//! sixteen places between.)
//!
//! At a program's end every block is freed and every thread has exited:
//! the statistics must be back where they were (no slot live, no span
//! bytes held), the decay must have given back everything past the
//! resident pool at the first allocation a delay later, and `trim()` must
//! leave nothing cached. A forked child checks and frees what its thread
//! holds, allocates, and must find nothing cached after its own `trim()`.
//!
//! It runs in the unit tests, where the refusal can be injected, the clock
//! moved and the resident pool is small (`POOL_RESIDENT_FRAMES`). Cases: 4
//! under Miri (two threads, short programs, no fork, no request Miri could
//! not serve), 48 by default, `MODEL_CASES` to change it (CI runs 10,000
//! in release: `MODEL_CASES=10000 cargo test -p batch-alloc-rt --release
//! --lib alloc_model`).

use std::alloc::{alloc, alloc_zeroed, dealloc, realloc, GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Barrier, Mutex, OnceLock};

use proptest::prelude::*;

use crate::base::config::{
    EXTENT_DECAY_MILLIS, FRAME_DECAY_MILLIS, FRAME_SIZE, MAX_SMALL_SIZE, PAGE_SIZE,
    POOL_RESIDENT_FRAMES,
};
use crate::base::os::refusals::refuse_decommit_on_this_thread;
use crate::front::expansion::Guard;
use crate::front::scope::box_in_scope;
use crate::memory::large::LARGE_MAX;
use crate::memory::pool::test_clock;
use crate::memory::region::locate;
use crate::{stats, trim, Batch};

/// Threads that run a program at once.
const THREADS: usize = if cfg!(miri) { 2 } else { 3 };
/// The most steps one thread of a program takes.
const STEPS: usize = if cfg!(miri) { 12 } else { 60 };

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
    /// The live block at `index` handed to thread `to` (modulo the thread
    /// count), which takes it at its next step and may free it, grow it or
    /// hand it on.
    Send { index: usize, to: usize },
    /// `count` boxes of `kind`, from a `Batch` of `capacity` (dropped, with
    /// what it did not hand out, after them), or with `None` from the open
    /// scope as an annotated `Box::new` takes them (`box_in_scope`).
    Boxes {
        kind: Kind,
        count: usize,
        capacity: Option<usize>,
    },
    /// Opens this thread's scope if none is open, else closes it.
    Scope,
    /// `trim()`.
    Trim,
    /// Moves the decay's clock ahead, for every thread.
    Advance { millis: u32 },
    /// The thread exits, its scope closed and its blocks still out; the
    /// rest of its steps run on a new thread, with the same blocks.
    Exit,
    /// Forks: the child checks and frees this thread's blocks, allocates,
    /// trims and exits (no other thread exists in it).
    Fork,
}

/// The boxed types: smaller than a free-list link, and of three classes
/// with alignments 8, 1 and 2.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Bytes3,
    Words4,
    Bytes200,
    Halves1000,
}

/// Sizes from each range the allocator treats apart: slots of the small
/// classes, medium blocks (the inner allocator's), large blocks of whole
/// frames (exact ones, which waste nothing, and others), the largest large
/// block and one past it; and, outside Miri, requests at the edges where a
/// size could wrap or no allocator can serve it.
fn size() -> BoxedStrategy<usize> {
    let everyday = prop_oneof![
        30 => 1..=64usize,
        30 => 65..=MAX_SMALL_SIZE,
        10 => MAX_SMALL_SIZE + 1..FRAME_SIZE,
        20 => (1..=8usize).prop_map(|frames| frames * FRAME_SIZE),
        20 => FRAME_SIZE / 2..=8 * FRAME_SIZE,
    ];
    // Rare past everyday sizes: a block of 64 MiB, zeroed by hand where an
    // extent serves it, takes a fifth of a second.
    let largest = prop::sample::select(vec![LARGE_MAX, LARGE_MAX + 1, LARGE_MAX + FRAME_SIZE]);
    match cfg!(miri) {
        true => prop_oneof![100 => everyday, 1 => largest].boxed(),
        false => prop_oneof![
            400 => everyday,
            1 => largest,
            2 => prop::sample::select(EDGES.to_vec()),
        ]
        .boxed(),
    }
}

/// Sizes at the edges: around 2^32 (a 32-bit count of bytes), 2^48 (of
/// frames: 2^48 + 128 KiB reads as two frames once wrapped), 2^62, and the
/// largest a `Layout` of alignment 1 allows.
const EDGES: [usize; 9] = [
    (1 << 32) - 1,
    1 << 32,
    (1 << 32) + FRAME_SIZE,
    1 << 48,
    (1 << 48) + FRAME_SIZE,
    (1 << 48) + 2 * FRAME_SIZE,
    1 << 62,
    isize::MAX as usize - 7,
    isize::MAX as usize,
];

fn align() -> BoxedStrategy<usize> {
    let everyday = prop_oneof![
        6 => prop::sample::select(vec![1usize, 2, 4, 8, 16]),
        1 => prop::sample::select(vec![64usize, 256, PAGE_SIZE, FRAME_SIZE, 2 * FRAME_SIZE]),
    ];
    match cfg!(miri) {
        true => everyday.boxed(),
        false => {
            prop_oneof![70 => everyday, 1 => prop::sample::select(vec![1usize << 20, 1 << 29])]
                .boxed()
        }
    }
}

fn kind() -> impl Strategy<Value = Kind> {
    prop::sample::select(vec![
        Kind::Bytes3,
        Kind::Words4,
        Kind::Bytes200,
        Kind::Halves1000,
    ])
}

fn op() -> BoxedStrategy<Op> {
    let steps = prop_oneof![
        24 => (size(), align(), any::<bool>())
            .prop_map(|(size, align, zeroed)| Op::Alloc { size, align, zeroed }),
        12 => (any::<usize>(), size()).prop_map(|(index, size)| Op::Realloc { index, size }),
        12 => any::<usize>().prop_map(|index| Op::Free { index }),
        9 => (any::<usize>(), any::<usize>()).prop_map(|(index, to)| Op::Send { index, to }),
        6 => (kind(), 1..40usize, prop::option::of(0..64usize))
            .prop_map(|(kind, count, capacity)| Op::Boxes { kind, count, capacity }),
        6 => Just(Op::Scope),
        3 => Just(Op::Trim),
        6 => prop_oneof![0..=2 * EXTENT_DECAY_MILLIS, FRAME_DECAY_MILLIS..=2 * FRAME_DECAY_MILLIS]
            .prop_map(|millis| Op::Advance { millis }),
        3 => Just(Op::Exit),
    ];
    match cfg!(miri) {
        true => steps.boxed(),
        // About one fork in five programs: each takes a few milliseconds.
        false => prop_oneof![400 => steps, 1 => Just(Op::Fork)].boxed(),
    }
}

/// The fill patterns: byte `i` of block `seed` is `PATTERN[seed % SEEDS +
/// i % PERIOD]`, never zero, so that a check is a few `memcmp`s (quick in
/// debug builds and under Miri too).
struct Patterns(Vec<u8>);

const SEEDS: usize = 251;
const PERIOD: usize = if cfg!(miri) { 1 << 15 } else { 1 << 20 };

/// Blocks past this are filled and checked in pieces.
const WHOLE: usize = 256 << 10;
/// The pieces' length at the ends, and between.
const END_PIECE: usize = 64 << 10;
const MID_PIECE: usize = 64;

impl Patterns {
    fn new() -> Patterns {
        let mut x = 0x9E37_79B9_u32;
        let bytes = (0..PERIOD + SEEDS)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                (x >> 24) as u8 | 1
            })
            .collect();
        Patterns(bytes)
    }

    /// Block `seed`'s pattern over `range`, in slices of the table.
    fn over(&self, seed: usize, range: Range<usize>) -> impl Iterator<Item = &[u8]> {
        let mut at = range.start;
        std::iter::from_fn(move || {
            if at >= range.end {
                return None;
            }
            let from = seed % SEEDS + at % PERIOD;
            let len = (PERIOD - at % PERIOD).min(range.end - at);
            at += len;
            Some(&self.0[from..from + len])
        })
    }
}

/// The parts of a block of `len` bytes that are filled and checked: all of
/// it up to [`WHOLE`], else its ends and sixteen short pieces between.
fn pieces(len: usize) -> Vec<Range<usize>> {
    if len <= WHOLE {
        return std::iter::once(0..len).collect();
    }
    let step = len / 17;
    let between = (1..17).map(|i| i * step..i * step + MID_PIECE);
    std::iter::once(0..END_PIECE)
        .chain(between)
        .chain(std::iter::once(len - END_PIECE..len))
        .collect()
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
    /// The block's bytes over `range`, which lies inside it.
    fn bytes(&self, range: Range<usize>) -> &[u8] {
        // SAFETY: the block is live and at least `range.end` bytes, and
        // every byte checked was written (a pattern or zeros) when it was
        // made or grown.
        unsafe { core::slice::from_raw_parts(self.ptr.add(range.start), range.len()) }
    }

    /// Whether the block holds its pattern over its first `len` bytes.
    fn intact(&self, patterns: &Patterns, len: usize) -> Result<(), String> {
        for piece in pieces(self.layout.size()) {
            let piece = piece.start.min(len)..piece.end.min(len);
            let mut at = piece.start;
            for expected in patterns.over(self.seed, piece.clone()) {
                if self.bytes(at..at + expected.len()) != expected {
                    return Err(format!(
                        "block {:p} ({:?}) lost its pattern in bytes {at}..{}",
                        self.ptr,
                        self.layout,
                        at + expected.len()
                    ));
                }
                at += expected.len();
            }
        }
        Ok(())
    }

    /// Writes the block's pattern from byte `from` to its end.
    fn fill_from(&mut self, patterns: &Patterns, from: usize) {
        for piece in pieces(self.layout.size()) {
            let piece = piece.start.max(from)..piece.end;
            let mut at = piece.start;
            for pattern in patterns.over(self.seed, piece.clone()) {
                // SAFETY: the block is live and holds these bytes; nothing
                // else refers to them.
                unsafe { self.ptr.add(at).copy_from(pattern.as_ptr(), pattern.len()) };
                at += pattern.len();
            }
        }
    }

    fn is_zeroed(&self) -> Result<(), String> {
        for piece in pieces(self.layout.size()) {
            if let Some(at) = self.bytes(piece.clone()).iter().position(|&b| b != 0) {
                return Err(format!(
                    "alloc_zeroed({:?}) returned {:p} with byte {} not zero",
                    self.layout,
                    self.ptr,
                    piece.start + at
                ));
            }
        }
        Ok(())
    }

    fn range(&self) -> (usize, usize) {
        (self.ptr.addr(), self.ptr.addr() + self.layout.size())
    }
}

/// What every thread of a program shares.
struct Shared {
    patterns: &'static Patterns,
    /// Every live block's range, start to end.
    ranges: Mutex<BTreeMap<usize, usize>>,
    /// The threads' inboxes of blocks handed to them.
    inboxes: Vec<Sender<Block>>,
    /// Passed once every thread has run its steps: nothing is sent after.
    steps_done: Barrier,
    refuse: bool,
}

impl Shared {
    /// Checks that `block` is aligned and apart from every live block,
    /// then records it.
    fn place(&self, block: &Block) -> Result<(), String> {
        let (start, end) = block.range();
        if start % block.layout.align() != 0 {
            return Err(format!("{:?} misaligned at {:p}", block.layout, block.ptr));
        }
        let mut ranges = self.ranges.lock().unwrap();
        if let Some((&s, &e)) = ranges.range(..end).next_back() {
            if e > start {
                return Err(format!(
                    "overlap: [{s:#x},{e:#x}) and [{start:#x},{end:#x})"
                ));
            }
        }
        ranges.insert(start, end);
        Ok(())
    }

    fn unplace(&self, block: &Block) {
        self.ranges.lock().unwrap().remove(&block.ptr.addr());
    }
}

/// One thread's part of a program, carried from a thread that exits to
/// the next.
struct Thread {
    me: usize,
    live: Vec<Block>,
    inbox: Receiver<Block>,
}

/// The guard that holds a thread's scope while it is open.
type OpenScope = Option<Guard>;

/// Whether a request of `layout` can fail for want of memory: sizes no
/// allocator serves, which must then fail as the system allocator's do.
fn huge(size: usize) -> bool {
    size > LARGE_MAX + FRAME_SIZE
}

/// Whether the system allocator refuses `layout` too (its block, if it
/// made one, freed again).
fn system_refuses(layout: Layout) -> bool {
    // SAFETY: a non-zero size; a block made is freed with its layout.
    unsafe {
        let block = System.alloc(layout);
        if !block.is_null() {
            System.dealloc(block, layout);
        }
        block.is_null()
    }
}

/// A layout of `size` and `align`, the size cut to the largest `Layout`
/// of that alignment allows. A huge size takes an alignment of 16 at most:
/// the system allocator zeroes and moves more-aligned blocks by hand, and
/// a zeroed block of 4 GiB would take seconds (and all its memory).
fn layout_of(size: usize, align: usize) -> Layout {
    let align = match huge(size) {
        true => align.min(16),
        false => align,
    };
    largest_layout(size, align)
}

/// A layout of `size` and `align`, the size cut to the largest a `Layout`
/// of that alignment allows.
fn largest_layout(size: usize, align: usize) -> Layout {
    let size = size.min(isize::MAX as usize - (align - 1));
    Layout::from_size_align(size, align).unwrap()
}

impl Thread {
    /// Takes what other threads handed this one.
    fn take_inbox(&mut self) {
        self.live.extend(self.inbox.try_iter());
    }

    fn step(
        &mut self,
        shared: &Shared,
        scope: &mut OpenScope,
        seed: usize,
        op: &Op,
    ) -> Result<(), String> {
        let patterns = shared.patterns;
        self.take_inbox();
        match *op {
            Op::Alloc {
                size,
                align,
                zeroed,
            } => {
                let layout = layout_of(size, align);
                // SAFETY: the layout's size is not zero.
                let ptr = unsafe {
                    match zeroed {
                        true => alloc_zeroed(layout),
                        false => alloc(layout),
                    }
                };
                if ptr.is_null() {
                    return match huge(layout.size()) && system_refuses(layout) {
                        true => Ok(()),
                        false => Err(format!("no memory for {layout:?}")),
                    };
                }
                let mut block = Block { ptr, layout, seed };
                if huge(layout.size()) && locate(ptr).is_some() {
                    return Err(format!("{layout:?} served from the region"));
                }
                shared.place(&block)?;
                if zeroed {
                    block.is_zeroed()?;
                }
                block.fill_from(patterns, 0);
                self.live.push(block);
            }
            Op::Realloc { index, size } if !self.live.is_empty() => {
                let at = index % self.live.len();
                let mut block = self.live.swap_remove(at);
                block.intact(patterns, block.layout.size())?;
                let old = block.layout;
                // A huge block shrinks (or is freed) rather than grows: the
                // system allocator may move it by copying.
                let size = match huge(old.size()) && huge(size) {
                    true => FRAME_SIZE,
                    false => size,
                };
                // `realloc` keeps the block's alignment, so the size is cut
                // for that alignment, not `layout_of`'s smaller one for huge
                // sizes (rounded up, it would pass isize::MAX: the caller's
                // fault, which the runtime's debug checks abort on).
                let new_layout = largest_layout(size, old.align());
                shared.unplace(&block);
                // SAFETY: a live block of this layout; the new size is not
                // zero and, rounded to the alignment, at most isize::MAX.
                let moved = unsafe { realloc(block.ptr, old, new_layout.size()) };
                if moved.is_null() {
                    // Refused: the block stays as it was.
                    shared.place(&block)?;
                    block.intact(patterns, old.size())?;
                    self.live.push(block);
                    return match huge(new_layout.size()) && system_refuses(new_layout) {
                        true => Ok(()),
                        false => Err(format!("no memory to grow {old:?} to {new_layout:?}")),
                    };
                }
                if huge(new_layout.size()) && locate(moved).is_some() {
                    return Err(format!("{new_layout:?} served from the region"));
                }
                // What it kept of the old pattern (written in the old size's
                // pieces), then the new size's pattern over it all.
                block.ptr = moved;
                block.intact(patterns, old.size().min(new_layout.size()))?;
                block.layout = new_layout;
                shared.place(&block)?;
                block.fill_from(patterns, 0);
                self.live.push(block);
            }
            Op::Free { index } if !self.live.is_empty() => {
                let block = self.live.swap_remove(index % self.live.len());
                free(shared, block)?;
            }
            Op::Send { index, to } if !self.live.is_empty() => {
                let block = self.live.swap_remove(index % self.live.len());
                let to = to % shared.inboxes.len();
                match to == self.me {
                    true => self.live.push(block),
                    false => shared.inboxes[to].send(block).unwrap(),
                }
            }
            Op::Realloc { .. } | Op::Free { .. } | Op::Send { .. } => {}
            Op::Boxes {
                kind,
                count,
                capacity,
            } => {
                let boxes = match kind {
                    Kind::Bytes3 => boxes([0u8; 3], count, capacity),
                    Kind::Words4 => boxes([0u64; 4], count, capacity),
                    Kind::Bytes200 => boxes([0u8; 200], count, capacity),
                    Kind::Halves1000 => boxes([0u16; 1000], count, capacity),
                };
                for (i, (ptr, layout)) in boxes.into_iter().enumerate() {
                    let mut block = Block {
                        ptr,
                        layout,
                        seed: seed + i,
                    };
                    shared.place(&block)?;
                    block.fill_from(patterns, 0);
                    self.live.push(block);
                }
            }
            Op::Scope => {
                *scope = match scope.take() {
                    Some(open) => {
                        drop(open);
                        None
                    }
                    None => {
                        let guard = Guard::new();
                        guard.enter();
                        Some(guard)
                    }
                }
            }
            Op::Trim => trim(),
            Op::Advance { millis } => test_clock::advance(millis),
            Op::Exit => unreachable!("a program's steps are cut at each exit"),
            Op::Fork => self.fork(patterns)?,
        }
        Ok(())
    }

    /// Forks; the child checks and frees this thread's blocks (the other
    /// threads' do not exist in it), allocates in a scope and out, trims,
    /// and must then find nothing cached: no frame lost to a thread that
    /// vanished at the fork, no count off.
    #[cfg(all(unix, not(miri)))]
    fn fork(&self, patterns: &Patterns) -> Result<(), String> {
        use workloads::testing::{fork_and_wait, Forked};
        let child = fork_and_wait(std::time::Duration::from_secs(20), || {
            refuse_decommit_on_this_thread(false);
            let mut failed = 0;
            for block in &self.live {
                failed += i32::from(block.intact(patterns, block.layout.size()).is_err());
                // SAFETY: a live block of this layout, given up (the parent
                // keeps its own).
                unsafe { dealloc(block.ptr, block.layout) };
            }
            let scope = Guard::new();
            scope.enter();
            let made: Vec<Vec<u8>> = (0..64).map(|i| vec![i as u8; 8 << (i % 15)]).collect();
            drop(scope);
            failed += i32::from(
                made.iter()
                    .enumerate()
                    .any(|(i, v)| v.iter().any(|&b| b != i as u8)),
            );
            drop(made);
            trim();
            failed += 2 * i32::from(stats().cached_bytes != 0);
            failed
        });
        match child {
            Forked::Exited(0) => Ok(()),
            other => Err(format!(
                "a forked child: {other:?} (1: a block lost its pattern, 2: memory cached after \
                 trim)"
            )),
        }
    }

    #[cfg(not(all(unix, not(miri))))]
    fn fork(&self, _patterns: &Patterns) -> Result<(), String> {
        Ok(())
    }
}

/// `count` boxes of `value`'s type, from a batch of `capacity` or from the
/// open scope, as raw blocks.
fn boxes<T: Copy>(value: T, count: usize, capacity: Option<usize>) -> Vec<(*mut u8, Layout)> {
    let layout = Layout::new::<T>();
    let raw = |b: Box<T>| (Box::into_raw(b).cast::<u8>(), layout);
    match capacity {
        Some(capacity) => {
            let mut batch = Batch::with_capacity(capacity);
            (0..count).map(|_| raw(batch.alloc(value))).collect()
        }
        None => (0..count).map(|_| raw(box_in_scope(value))).collect(),
    }
}

/// Checks `block` and frees it.
fn free(shared: &Shared, block: Block) -> Result<(), String> {
    block.intact(shared.patterns, block.layout.size())?;
    shared.unplace(&block);
    // SAFETY: a live block of this layout, given up.
    unsafe { dealloc(block.ptr, block.layout) };
    Ok(())
}

/// Runs thread `me`'s part: each stretch of steps between exits on a
/// thread of its own, the blocks carried over; then, once every thread is
/// done, frees what it holds. The first failure ends the steps (the blocks
/// are then leaked, not freed).
fn run_thread(
    shared: Arc<Shared>,
    me: usize,
    steps: Vec<Op>,
    inbox: Receiver<Block>,
) -> Result<(), String> {
    let stretches: Vec<Vec<(usize, Op)>> = {
        let mut stretches = vec![Vec::new()];
        for (i, op) in steps.into_iter().enumerate() {
            match op {
                Op::Exit => stretches.push(Vec::new()),
                op => stretches.last_mut().unwrap().push((me << 16 | i, op)),
            }
        }
        stretches
    };
    let last = stretches.len() - 1;
    let mut thread = Thread {
        me,
        live: Vec::new(),
        inbox,
    };
    let mut outcome = Ok(());
    for (n, stretch) in stretches.into_iter().enumerate() {
        let shared = shared.clone();
        let (carried, result) = std::thread::spawn(move || {
            refuse_decommit_on_this_thread(shared.refuse);
            let mut scope = None;
            let mut result = Ok(());
            for (seed, op) in &stretch {
                result = thread.step(&shared, &mut scope, *seed, op);
                if result.is_err() {
                    break;
                }
            }
            drop(scope);
            if n == last || result.is_err() {
                shared.steps_done.wait();
                thread.take_inbox();
                if result.is_ok() {
                    for block in thread.live.drain(..) {
                        result = result.and(free(&shared, block));
                    }
                }
            }
            (thread, result)
        })
        .join()
        .unwrap();
        thread = carried;
        outcome = result;
        if outcome.is_err() {
            break;
        }
    }
    if outcome.is_err() {
        // Leaked: the allocator may be broken.
        std::mem::forget(thread.live);
    }
    outcome
}

/// Runs one program and checks what it left.
fn run(program: Vec<Vec<Op>>, refuse: bool) -> Result<(), String> {
    let before = stats();
    let (inboxes, receivers): (Vec<_>, Vec<_>) = program.iter().map(|_| channel()).unzip();
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    let shared = Arc::new(Shared {
        patterns: PATTERNS.get_or_init(Patterns::new),
        ranges: Mutex::new(BTreeMap::new()),
        inboxes,
        steps_done: Barrier::new(program.len()),
        refuse,
    });
    let threads: Vec<_> = program
        .into_iter()
        .zip(receivers)
        .enumerate()
        .map(|(me, (steps, inbox))| {
            let shared = shared.clone();
            std::thread::spawn(move || run_thread(shared, me, steps, inbox))
        })
        .collect();
    for thread in threads {
        thread.join().unwrap()?;
    }
    // What the threads shared, allocated in their scopes too (the map's
    // nodes, the inboxes' blocks), goes with it.
    drop(shared);
    // Every block freed, every thread exited: nothing is out, no span held.
    let after = stats();
    if (after.live_slots, after.span_bytes) != (before.live_slots, before.span_bytes) {
        return Err(format!(
            "not back: live slots {} -> {}, span bytes {} -> {}",
            before.live_slots, after.live_slots, before.span_bytes, after.span_bytes
        ));
    }
    // A delay later, one allocation gives back everything past the
    // resident pool.
    test_clock::advance(FRAME_DECAY_MILLIS + EXTENT_DECAY_MILLIS);
    let cached = std::thread::spawn(|| {
        let one = Batch::new().alloc(1u64);
        let cached = stats().cached_bytes;
        drop(one);
        cached
    })
    .join()
    .unwrap();
    if cached > (POOL_RESIDENT_FRAMES * FRAME_SIZE) as u64 {
        return Err(format!(
            "{cached} bytes cached after a delay and an allocation, past the resident pool's {}",
            POOL_RESIDENT_FRAMES * FRAME_SIZE
        ));
    }
    trim();
    match stats().cached_bytes {
        0 => Ok(()),
        cached => Err(format!("{cached} bytes cached after trim")),
    }
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
    fn the_allocator_keeps_blocks_aligned_apart_intact_and_zeroed_and_gives_memory_back(
        program in prop::collection::vec(prop::collection::vec(op(), 1..STEPS), THREADS),
        refuse in any::<bool>(),
    ) {
        // Alone: the statistics and the pool are the process's.
        let outcome = workloads::testing::serially(|| run(program, refuse));
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }
}
