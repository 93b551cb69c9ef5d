// The limit: a warm arena as the global allocator (bench code, not
// batch-alloc). Included by the generated alloc.rs of the `limit` builds,
// inside `mod limit`, after its switches `BY_CLASS`, `HUGE_PAGES` and
// `REUSE` (the last two study builds' only).
//
// Why it is a limit. Allocation is a bump of one pointer and a compare;
// a free does nothing but count (so that the reset below is known to be
// safe); nothing is looked up, linked or written beside the objects, so
// they sit next to each other in the order they were made; and every
// parse after the first runs through the same addresses, which the first
// parse already faulted in, on huge pages (the region is advised for
// them, as mimalloc's and batch-alloc's memory is; `HUGE_PAGES = false`
// is a study build). An allocator of individually freeable objects
// has to do at least this much per object, and more (record each free
// somewhere a later allocation can find it), so none can cost less on a
// program that builds a value and drops it. A bump allocator that is never
// reset is not a limit: it pays a first-touch fault on every page of every
// parse.
//
// Protocol (driven by common.rs's `measure`): `begin` reserves the region
// and starts serving this thread; a warm-up parse and its drop; then the
// mark; after each later parse is dropped, a reset to the mark. The mark is
// where the warm-up parse started when nothing it made outlived it (the
// usual case: then its pages are the ones the next parse runs through);
// when something did (a lazily built table, a thread-local's buffer), the
// mark is the top, past the survivors, and the next as many bytes as the
// warm-up used are faulted in by hand. A reset happens only when every
// allocation made since the mark has been freed; otherwise the mark moves
// up to the top instead (counted in `refused`), so a reset never hands out
// live memory.
//
// Only the thread that called `begin` is served from the region, and only
// after it did; everything else (other threads, allocations made before)
// goes to the system allocator, and so do requests that do not fit in
// what is left of the region. A free of a region pointer on another thread
// does nothing, which leaves the count above zero: resets are refused from
// then on, never wrong.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Reserved address space (not memory: pages are faulted in as touched):
/// the first of 64 GiB, 32, 16, ... that the kernel (or valgrind, which
/// has less room) grants.
const REGION_MAX: usize = 64 << 30;
const REGION_MIN: usize = 1 << 30;
/// With `BY_CLASS`: one sub-region per 16-byte class up to 1 KiB, and one
/// for everything larger.
const SMALL_CLASSES: usize = 64;
const CLASSES: usize = if BY_CLASS { SMALL_CLASSES + 1 } else { 1 };
/// Each class's share of the region, a power of two, so that a pointer's
/// class is a shift of its offset.
const CLASS_SLOTS: usize = if BY_CLASS { 128 } else { 1 };
const PAGE: usize = 4096;
/// With `REUSE`: a free list per 16-byte class up to 1 KiB.
const REUSE_CLASSES: usize = if REUSE { 64 } else { 0 };

/// The region's start (0 until `begin`), its size, and log2 of each
/// class's share.
static BASE: AtomicUsize = AtomicUsize::new(0);
static REGION_BYTES: AtomicUsize = AtomicUsize::new(0);
static CLASS_SHIFT: AtomicUsize = AtomicUsize::new(0);

struct Arena {
    /// Next free byte of each class's sub-region (null until `begin`).
    top: [Cell<*mut u8>; CLASSES],
    /// Where each class's sub-region ends (0 until `begin`: nothing fits).
    end: [Cell<usize>; CLASSES],
    /// Where a reset sends `top` back to.
    mark: [Cell<*mut u8>; CLASSES],
    /// With `REUSE`: the last freed block of each class (its first word
    /// links the one freed before), handed out again first.
    free: [Cell<*mut u8>; REUSE_CLASSES],
    /// Allocations at or above the mark not freed yet.
    live: Cell<usize>,
    /// Warm-up done: the mark is set.
    marked: Cell<bool>,
    resets: Cell<u64>,
    refused: Cell<u64>,
    /// Bytes bumped through by the last parse (all classes).
    last_bytes: Cell<u64>,
}

thread_local! {
    static ARENA: Arena = const {
        Arena {
            top: [const { Cell::new(std::ptr::null_mut()) }; CLASSES],
            end: [const { Cell::new(0) }; CLASSES],
            mark: [const { Cell::new(std::ptr::null_mut()) }; CLASSES],
            free: [const { Cell::new(std::ptr::null_mut()) }; REUSE_CLASSES],
            live: Cell::new(0),
            marked: Cell::new(false),
            resets: Cell::new(0),
            refused: Cell::new(0),
            last_bytes: Cell::new(0),
        }
    };
}

#[inline(always)]
fn class_of(size: usize) -> usize {
    if BY_CLASS {
        if size <= SMALL_CLASSES * 16 {
            (size - 1) / 16
        } else {
            SMALL_CLASSES
        }
    } else {
        0
    }
}

/// The class whose sub-region holds `p` (a region pointer).
#[inline(always)]
fn class_at(p: *mut u8) -> usize {
    if BY_CLASS {
        (p.addr() - BASE.load(Ordering::Relaxed)) >> CLASS_SHIFT.load(Ordering::Relaxed)
    } else {
        0
    }
}

pub struct Limit;

#[inline(always)]
fn in_region(p: *mut u8) -> bool {
    let base = BASE.load(Ordering::Relaxed);
    base != 0 && p.addr().wrapping_sub(base) < REGION_BYTES.load(Ordering::Relaxed)
}

#[inline(always)]
fn round16(size: usize) -> usize {
    size.wrapping_add(15) & !15
}

/// A block's length in the region: with `REUSE`, whole 16-byte units.
#[inline(always)]
fn block(size: usize) -> usize {
    if REUSE {
        round16(size)
    } else {
        size
    }
}

/// With `REUSE`, the free list of a request, if it has one.
#[inline(always)]
fn reuse_class(layout: Layout) -> Option<usize> {
    (REUSE && layout.size() <= REUSE_CLASSES * 16 && layout.align() <= 16)
        .then(|| (layout.size().max(1) - 1) / 16)
}

impl Limit {
    #[inline(always)]
    fn bump(a: &Arena, layout: Layout) -> *mut u8 {
        let mut layout = layout;
        if let Some(r) = reuse_class(layout) {
            let head = a.free[r].get();
            if !head.is_null() {
                // SAFETY: a freed block of this class: its first word is
                // the link `dealloc` wrote.
                a.free[r].set(unsafe { head.cast::<*mut u8>().read() });
                a.live.set(a.live.get() + 1);
                return head;
            }
            // Whole 16-byte classes, so that a block fits any request of
            // its class when it comes back.
            layout = Layout::from_size_align((r + 1) * 16, 16).unwrap_or(layout);
        } else if REUSE {
            // Every block a whole number of 16-byte units, so that a block
            // grown in place at the top never overlaps the next.
            layout = Layout::from_size_align(round16(layout.size()), layout.align().max(16)).unwrap_or(layout);
        }
        let c = class_of(layout.size());
        let top = a.top[c].get();
        let start = top.wrapping_add(top.addr().wrapping_neg() & (layout.align() - 1));
        // `end` is 0 before `begin` and on other threads: nothing fits.
        let room = a.end[c].get().wrapping_sub(start.addr());
        if start.addr() >= top.addr() && layout.size() <= room && a.end[c].get() != 0 {
            a.top[c].set(start.wrapping_add(layout.size()));
            a.live.set(a.live.get() + 1);
            return start;
        }
        std::ptr::null_mut()
    }
}

// SAFETY: region memory is handed out once between resets, aligned as
// asked, and a reset happens only when everything handed out since the
// mark has been freed; everything else is the system allocator's.
unsafe impl GlobalAlloc for Limit {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = ARENA.with(|a| Limit::bump(a, layout));
        if !p.is_null() {
            return p;
        }
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if in_region(ptr) {
            ARENA.with(|a| {
                let c = class_at(ptr);
                if a.end[c].get() == 0 {
                    return;
                }
                if ptr.addr() >= a.mark[c].get().addr() {
                    a.live.set(a.live.get().wrapping_sub(1));
                }
                if let Some(r) = reuse_class(layout) {
                    // SAFETY: the block is freed and holds at least 16
                    // bytes, aligned to 16 (it was made for its class).
                    unsafe { ptr.cast::<*mut u8>().write(a.free[r].get()) };
                    a.free[r].set(ptr);
                }
            });
            return;
        }
        // SAFETY: not a region pointer, so the system allocator's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !in_region(ptr) {
            // SAFETY: not a region pointer, so the system allocator's.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        let grown = ARENA.with(|a| {
            let c = class_at(ptr);
            if a.end[c].get() == 0 {
                return false;
            }
            if new_size <= layout.size() {
                // Shrinking: the top comes back if this was the last one.
                if ptr.wrapping_add(block(layout.size())) == a.top[c].get() {
                    a.top[c].set(ptr.wrapping_add(block(new_size)));
                }
                return true;
            }
            // Growing in place: only the last allocation of its class, and
            // only within the class's sub-region.
            if ptr.wrapping_add(block(layout.size())) == a.top[c].get()
                && block(new_size) <= a.end[c].get() - ptr.addr()
            {
                a.top[c].set(ptr.wrapping_add(block(new_size)));
                return true;
            }
            false
        });
        if grown {
            return ptr;
        }
        // SAFETY: `new_size` is nonzero and does not overflow when rounded
        // to the alignment (the caller's contract).
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a nonzero size.
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both are valid for the smaller size and distinct (the
            // old block is still allocated).
            unsafe { std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size)) };
            // SAFETY: the old block, with its layout.
            unsafe { self.dealloc(ptr, layout) };
        }
        new
    }
}

unsafe extern "C" {
    fn mmap(addr: *mut u8, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut u8;
    fn madvise(addr: *mut u8, len: usize, advice: i32) -> i32;
}

/// Reserves the region and serves this thread from it from now on.
pub fn begin() {
    const PROT_READ_WRITE: i32 = 0x1 | 0x2;
    const MAP_PRIVATE_ANONYMOUS_NORESERVE: i32 = 0x02 | 0x20 | 0x4000;
    const MADV_HUGEPAGE: i32 = 14;
    const HUGE: usize = 2 << 20;
    let mut region = REGION_MAX;
    let p = loop {
        // SAFETY: a fresh anonymous mapping; nothing else is at the address
        // the kernel picks.
        let p = unsafe {
            mmap(
                std::ptr::null_mut(),
                region + HUGE,
                PROT_READ_WRITE,
                MAP_PRIVATE_ANONYMOUS_NORESERVE,
                -1,
                0,
            )
        };
        if p.addr() != usize::MAX {
            break p;
        }
        assert!(region > REGION_MIN, "limit: mmap of the region failed");
        region /= 2;
    };
    // Start on a 2 MiB boundary, so that with HUGE_PAGES whole huge pages
    // back it.
    let base = p.wrapping_add(p.addr().wrapping_neg() & (HUGE - 1));
    if HUGE_PAGES {
        // SAFETY: inside the mapping just made.
        unsafe { madvise(base, region, MADV_HUGEPAGE) };
    }
    let class_bytes = region / CLASS_SLOTS;
    REGION_BYTES.store(region, Ordering::Relaxed);
    CLASS_SHIFT.store(class_bytes.trailing_zeros() as usize, Ordering::Relaxed);
    BASE.store(base.addr(), Ordering::Relaxed);
    ARENA.with(|a| {
        for c in 0..CLASSES {
            let start = base.wrapping_add(c * class_bytes);
            a.top[c].set(start);
            a.mark[c].set(start);
            a.end[c].set(start.addr() + class_bytes);
        }
        a.live.set(0);
    });
}

/// After each parse's value is dropped: the first time, sets the mark (the
/// warm-up is over); then resets to it, or, if something made since the
/// mark is still alive, moves the mark up instead.
pub fn settle() {
    ARENA.with(|a| {
        if a.end[0].get() == 0 {
            return;
        }
        let used: usize = (0..CLASSES)
            .map(|c| a.top[c].get().addr() - a.mark[c].get().addr())
            .sum();
        a.last_bytes.set(used as u64);
        let first = !a.marked.replace(true);
        // Freed blocks are above the mark, or below one that moves up:
        // either way not to be handed out again after this.
        for r in 0..REUSE_CLASSES {
            a.free[r].set(std::ptr::null_mut());
        }
        if a.live.get() == 0 {
            for c in 0..CLASSES {
                a.top[c].set(a.mark[c].get());
            }
            if !first {
                a.resets.set(a.resets.get() + 1);
            }
            return;
        }
        // Survivors: the mark moves past them.
        a.refused.set(a.refused.get() + u64::from(!first));
        for c in 0..CLASSES {
            let top = a.top[c].get();
            if first {
                // Fault in as much again as the warm-up used, so the next
                // parse still runs through memory already touched.
                let want = (top.addr() - a.mark[c].get().addr()).min(a.end[c].get() - top.addr());
                let mut off = 0;
                while off < want {
                    // SAFETY: inside this class's sub-region, above the
                    // top: memory nobody holds.
                    unsafe { top.wrapping_add(off).write_volatile(0) };
                    off += PAGE;
                }
            }
            a.mark[c].set(top);
        }
        a.live.set(0);
    });
}

/// `{"resets":..,"refused":..,"bytes":..}` for the workload's JSON line.
pub fn report() -> String {
    ARENA.with(|a| {
        format!(
            "{{\"resets\":{},\"refused\":{},\"bytes\":{},\"region\":{},\"by_class\":{},\"huge_pages\":{}}}",
            a.resets.get(),
            a.refused.get(),
            a.last_bytes.get(),
            REGION_BYTES.load(Ordering::Relaxed),
            BY_CLASS,
            HUGE_PAGES
        )
    })
}
