//! The address range spans live in, and the frames it is cut into.
//!
//! One range, mapped at first use, holds the span metadata array followed
//! by the frames. Ownership of a pointer is one addition (of the negated
//! base) and one comparison against a constant length, made before any
//! metadata is read.
//! Before the range is mapped the base is 2^63, an address no user-space
//! pointer reaches, so every pointer is rejected; if the full size cannot be
//! mapped the region stays that way and every allocation is the inner
//! allocator's. Frames are committed in
//! chunks as the high-water mark grows; empty ones are recycled through the
//! pool (`pool.rs`).

use core::ptr;
use core::sync::atomic::{AtomicPtr, AtomicU8, AtomicUsize};

use crate::base::config::{COMMIT_FRAMES, FRAME_SHIFT, FRAME_SIZE, REGION_BYTES};
use crate::base::frame::Frame;
use crate::base::locks;
use crate::base::os;
use crate::base::sync::Ordering;
use crate::memory::types::Span;

/// Where the frames start, twice: what `locate` reads, side by side so
/// that one address reaches both. Both are stored once, when the region
/// is mapped, before any pointer into it is handed out.
#[repr(C)]
struct FramesBase {
    /// The first frame's address, negated: a pointer's offset into the
    /// region is one addition to it, which keeps the pointer (`p - base`
    /// would first copy `p`, since x86's subtraction overwrites its
    /// destination). [`UNMAPPED`]'s negation, 2^63, until the region is
    /// ready.
    negated: AtomicUsize,
    /// First frame, with provenance over the whole range; the span metadata
    /// array ends [`META_BYTES`] before it. [`UNMAPPED`] until the region is
    /// ready.
    ptr: AtomicPtr<u8>,
}

static FRAMES_BASE: FramesBase = FramesBase {
    negated: AtomicUsize::new(UNMAPPED_ADDR.wrapping_neg()),
    ptr: AtomicPtr::new(UNMAPPED),
};

/// A base no pointer lies above: user-space addresses stay below 2^57 on
/// every 64-bit platform, and `p - 2^63` wraps past any region length.
const UNMAPPED: *mut u8 = ptr::without_provenance_mut(UNMAPPED_ADDR);
const UNMAPPED_ADDR: usize = 1 << (usize::BITS - 1);

/// Most frames a region may have.
const MAX_FRAMES: usize = REGION_BYTES / FRAME_SIZE;
// A frame's index fits a `u32` with room for the outbox's unused marker.
const _: () = assert!(MAX_FRAMES < crate::memory::types::Outgoing::UNUSED as usize);

/// Bytes of the metadata array in front of the frames, sized for the largest
/// region so that a span's metadata is a constant distance from the frames.
const META_BYTES: usize = (MAX_FRAMES * size_of::<Span>()).div_ceil(FRAME_SIZE) * FRAME_SIZE;

const UNINIT: u8 = 0;
const READY: u8 = 1;
const FAILED: u8 = 2;

/// Whether the region is mapped; changes once, under `locks::REGION_INIT`.
static STATE: AtomicU8 = AtomicU8::new(UNINIT);
/// Frames ever taken from the region (may run past `MAX_FRAMES` once
/// exhausted): spans, frames now in the pool, and heap-record frames.
static NEXT_FRAME: AtomicUsize = AtomicUsize::new(0);
/// Frames whose memory and metadata are readable and writable.
static COMMITTED: AtomicUsize = AtomicUsize::new(0);
/// Bytes of spans assigned to heaps or abandoned by exited threads.
static SPAN_BYTES: AtomicUsize = AtomicUsize::new(0);

/// A pointer found inside the region: the region's base, with provenance
/// over all of it, and the pointer's offset from it.
#[derive(Clone, Copy)]
pub(crate) struct Located {
    pub base: *mut u8,
    pub offset: usize,
}

impl Located {
    /// The frame the pointer is in.
    #[inline(always)]
    pub(crate) fn frame(self) -> Frame {
        Frame::new((self.offset >> FRAME_SHIFT) as u32)
    }

    /// Offset of the pointer in its frame.
    #[inline(always)]
    pub(crate) fn offset_in_frame(self) -> u32 {
        (self.offset & (FRAME_SIZE - 1)) as u32
    }

    /// The metadata of the pointer's frame.
    #[inline(always)]
    pub(crate) fn span(self) -> &'static Span {
        span_in(self.base, self.offset >> FRAME_SHIFT)
    }

    /// The pointer itself, derived from the region's base: valid for the
    /// whole slot, and beyond, where a box's own pointer covers only the
    /// box's bytes.
    #[inline(always)]
    pub(crate) fn ptr(self) -> *mut u8 {
        self.base.wrapping_add(self.offset)
    }
}

/// Where `p` lies in the region, or `None` for any pointer the region does
/// not hold. Reads no metadata: a range check first.
#[inline(always)]
pub(crate) fn locate(p: *const u8) -> Option<Located> {
    // Relaxed: a pointer inside the region was handed out by the runtime, and
    // whatever handed it to this thread (a channel, a join, a lock) ordered
    // the base's publication before; a pointer outside it is rejected
    // whichever base this load sees.
    let offset = p
        .addr()
        .wrapping_add(FRAMES_BASE.negated.load(Ordering::Relaxed));
    if offset < REGION_BYTES {
        // Both fields hold the same base: each is stored once, before any
        // pointer inside the region can reach this thread.
        let base = FRAMES_BASE.ptr.load(Ordering::Relaxed);
        Some(Located { base, offset })
    } else {
        None
    }
}

#[inline(always)]
fn span_in(frames_base: *mut u8, frame: usize) -> &'static Span {
    #[cfg(loom)]
    if let Some(span) = model::span(frame) {
        return span;
    }
    let spans = frames_base.wrapping_sub(META_BYTES).cast::<Span>();
    // SAFETY: only frames below the committed mark are ever named (they come
    // from `acquire_frame` or from a pointer inside the region, which only
    // such frames hand out); their metadata is committed memory inside the
    // range that is never unmapped, and an all-zero `Span` is valid.
    unsafe { &*spans.wrapping_add(frame) }
}

/// The metadata of frame `frame`.
#[inline(always)]
pub(crate) fn span(frame: Frame) -> &'static Span {
    span_in(FRAMES_BASE.ptr.load(Ordering::Relaxed), frame.as_usize())
}

/// The first byte of frame `frame`, with provenance over the region, so that
/// slot pointers derived from it are valid for any slot (a `Box`'s own
/// pointer only covers its slot).
#[inline(always)]
pub(crate) fn frame_base(frame: Frame) -> *mut u8 {
    #[cfg(loom)]
    if let Some(base) = model::frame_base(frame.as_usize()) {
        return base;
    }
    FRAMES_BASE
        .ptr
        .load(Ordering::Relaxed)
        .wrapping_add(frame.as_usize() << FRAME_SHIFT)
}

/// The loom models' region (`loom_model.rs`): one frame, its span and its
/// memory the model's own, which [`span`], [`frame_base`] and
/// [`Located::span`] find on the model's thread while it is installed, so
/// that the models run the owner's real functions (a refill, a free, a
/// drain), which find spans and slots through the region. Per thread:
/// loom runs a model's threads on the thread that runs the model, and the
/// test harness runs models side by side on threads of their own.
#[cfg(loom)]
pub(crate) mod model {
    use core::cell::Cell;
    use core::ptr;

    use crate::memory::types::Span;

    std::thread_local! {
        /// The frame's memory and its span, or nulls for none.
        static FRAME: Cell<(*mut u8, *const Span)> =
            const { Cell::new((ptr::null_mut(), ptr::null())) };
    }

    /// Makes frame 0 the one at `memory` with metadata `span`, on this
    /// thread, until [`uninstall`].
    ///
    /// # Safety
    /// - `span` and `memory` stay where they are, and alive, until
    ///   [`uninstall`] is called on this thread.
    pub(crate) unsafe fn install(memory: *mut u8, span: &Span) {
        FRAME.with(|frame| frame.set((memory, span)));
    }

    /// Ends what [`install`] started.
    pub(crate) fn uninstall() {
        FRAME.with(|frame| frame.set((ptr::null_mut(), ptr::null())));
    }

    /// The installed span, if `frame` is the model's.
    pub(super) fn span(frame: usize) -> Option<&'static Span> {
        let (_, span) = FRAME.with(Cell::get);
        if span.is_null() {
            return None;
        }
        assert_eq!(frame, 0, "the models have one frame");
        // SAFETY: alive and in place while installed (`install`'s contract).
        Some(unsafe { &*span })
    }

    /// The installed memory, if `frame` is the model's.
    pub(super) fn frame_base(frame: usize) -> Option<*mut u8> {
        let (memory, _) = FRAME.with(Cell::get);
        if memory.is_null() {
            return None;
        }
        assert_eq!(frame, 0, "the models have one frame");
        Some(memory)
    }
}

/// Maps the region on first use. False if the OS refused (the address
/// space, or the fork handlers that keep the runtime's locks sound across
/// a fork): every allocation then goes to the inner allocator.
pub(crate) fn ensure_ready() -> bool {
    // Acquire: a thread that sees READY sees the base and the fork hooks.
    match STATE.load(Ordering::Acquire) {
        READY => true,
        FAILED => false,
        _ => init_slow(),
    }
}

/// Whether the region is mapped (without trying to map it).
pub(crate) fn is_ready() -> bool {
    STATE.load(Ordering::Acquire) == READY
}

#[cold]
fn init_slow() -> bool {
    // Before any lock is first taken, so that a fork while this thread
    // maps the region cannot leave one held in the child. Without the
    // handlers no lock may ever be taken: no region.
    if !locks::register_fork_handlers() {
        return false;
    }
    locks::REGION_INIT.lock();
    if STATE.load(Ordering::Relaxed) == UNINIT {
        let page = os::page_size();
        let ready = if serves_page_size(page) {
            map_address_space()
        } else {
            // Once: the state is FAILED from now on.
            os::write_stderr(PageSizeWarning::new(page).text());
            false
        };
        STATE.store(if ready { READY } else { FAILED }, Ordering::Release);
    }
    let ready = STATE.load(Ordering::Relaxed) == READY;
    locks::REGION_INIT.unlock();
    ready
}

/// Whether the region serves a system whose memory pages are `page` bytes
/// (read at run time, never assumed): every range it makes usable or gives
/// back is whole frames, frame-aligned, so any power of two up to a frame
/// (64 KiB) does. Linux on Arm runs with 4, 16 or 64 KiB pages, Apple
/// silicon with 16 KiB, x86-64 and Windows with 4 KiB.
fn serves_page_size(page: usize) -> bool {
    page.is_power_of_two() && page <= FRAME_SIZE
}

/// The one warning of a process whose pages the region does not serve,
/// made without allocating (it is written from the allocator's path).
struct PageSizeWarning {
    bytes: [u8; 200],
    len: usize,
}

impl PageSizeWarning {
    fn new(page: usize) -> Self {
        let mut warning = PageSizeWarning {
            bytes: [0; 200],
            len: 0,
        };
        warning.push(b"batch-alloc: this system's memory pages are ");
        warning.push_decimal(page);
        warning.push(b" bytes, which batch-alloc's frames of ");
        warning.push_decimal(FRAME_SIZE);
        warning.push(b" bytes cannot hold whole, so every allocation is the inner allocator's\n");
        warning
    }

    fn text(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }

    /// Appends `text`, cut short if the buffer is full.
    fn push(&mut self, text: &[u8]) {
        for &byte in text {
            if let Some(slot) = self.bytes.get_mut(self.len) {
                *slot = byte;
                self.len = self.len.wrapping_add(1);
            }
        }
    }

    fn push_decimal(&mut self, mut n: usize) {
        let mut digits = [0u8; 20];
        let mut first = digits.len();
        for slot in digits.iter_mut().rev() {
            *slot = b'0'.wrapping_add((n % 10) as u8);
            n /= 10;
            first = first.wrapping_sub(1);
            if n == 0 {
                break;
            }
        }
        self.push(digits.get(first..).unwrap_or_default());
    }
}

/// What the region's range is aligned to: a transparent huge page (2 MiB on
/// x86-64 and most of aarch64), so that the frames, which start a whole
/// number of huge pages in, can be backed by huge pages; a frame under Miri.
#[cfg(not(miri))]
const REGION_ALIGN: usize = if FRAME_SIZE > HUGE_PAGE {
    FRAME_SIZE
} else {
    HUGE_PAGE
};
#[cfg(miri)]
const REGION_ALIGN: usize = FRAME_SIZE;
#[cfg(not(miri))]
const HUGE_PAGE: usize = 2 << 20;
const _: () = assert!(META_BYTES % REGION_ALIGN == 0 && REGION_ALIGN % FRAME_SIZE == 0);

/// Maps the region's address space, the metadata array and the frames in
/// one range aligned to a huge page (`os::map_address_space`), and
/// asks for huge pages over all of it, as mimalloc does for
/// its arenas: memory a program touches for the first time then faults in
/// a huge page at a time rather than a page at a time (docs/runtime.md has
/// the figures). All or nothing: the ownership check compares against the
/// full length.
fn map_address_space() -> bool {
    let Some(start) = os::map_address_space(META_BYTES + REGION_BYTES + REGION_ALIGN) else {
        return false;
    };
    let start = start.as_ptr();
    let misalign = start.addr() & (REGION_ALIGN - 1);
    let aligned = start.wrapping_add((REGION_ALIGN - misalign) & (REGION_ALIGN - 1));
    // SAFETY: the range lies inside the one just mapped.
    unsafe { os::advise_huge_pages(aligned, META_BYTES + REGION_BYTES) };
    // Release: publishes the range to every thread that reads the base
    // with acquire (`ensure_ready`'s state load orders it too).
    let base = aligned.wrapping_add(META_BYTES);
    FRAMES_BASE.ptr.store(base, Ordering::Release);
    FRAMES_BASE
        .negated
        .store(base.addr().wrapping_neg(), Ordering::Release);
    true
}

/// Frames ever taken from the region and committed: every frame whose
/// metadata may be read, for walks over all spans. Spans, pooled frames and
/// heap-record frames alike.
pub(crate) fn frames_touched() -> impl Iterator<Item = Frame> {
    let handed = NEXT_FRAME.load(Ordering::Acquire);
    (0..handed.min(COMMITTED.load(Ordering::Acquire)) as u32).map(Frame::new)
}

/// Commits frames (and their metadata) in chunks until `frame` is covered.
#[cold]
fn commit_through(frame: usize) -> bool {
    locks::COMMIT.lock();
    let mut ok = true;
    while ok && COMMITTED.load(Ordering::Relaxed) <= frame {
        let from = COMMITTED.load(Ordering::Relaxed);
        // Frame counts stay far below usize::MAX: no arithmetic here wraps.
        let to = from.wrapping_add(COMMIT_FRAMES).min(MAX_FRAMES);
        ok = commit_frames(from, to);
        if ok {
            COMMITTED.store(to, Ordering::Release);
        }
    }
    locks::COMMIT.unlock();
    ok
}

fn commit_frames(from: usize, to: usize) -> bool {
    let spans = frame_base(Frame::FIRST).wrapping_sub(META_BYTES);
    // The metadata's range is widened to whole frames, a multiple of every
    // page size the region serves: the system's pages may be larger than
    // the runtime's own (16 KiB on Apple silicon, 64 KiB on some Arm
    // Linux). Making a committed page writable again changes nothing.
    // Frame counts are below MAX_FRAMES: these products stay far from
    // overflowing.
    let meta_from = from.wrapping_mul(size_of::<Span>()) / FRAME_SIZE * FRAME_SIZE;
    let meta_to = to
        .wrapping_mul(size_of::<Span>())
        .div_ceil(FRAME_SIZE)
        .wrapping_mul(FRAME_SIZE);
    let frames = frame_base(Frame::new(from as u32));
    // SAFETY: both ranges are frame-aligned, so page-aligned, and inside the
    // region's range: the metadata area is a whole number of frames, and `to`
    // is at most the frame count.
    unsafe {
        os::commit(
            spans.wrapping_add(meta_from),
            meta_to.wrapping_sub(meta_from),
        ) && os::commit(frames, to.wrapping_sub(from) << FRAME_SHIFT)
    }
}

/// Counts a span of `bytes` as assigned to a heap, or a large block's
/// frames as handed out.
pub(crate) fn note_assigned(bytes: usize) {
    SPAN_BYTES.fetch_add(bytes, Ordering::Relaxed);
}

/// Uncounts a large block's frames, given back.
pub(crate) fn note_released(bytes: usize) {
    SPAN_BYTES.fetch_sub(bytes, Ordering::Relaxed);
}

/// `frames` contiguous frames past the high-water mark, committed: the
/// first one's index. Nothing has written to them. `None` when the region
/// is not ready, exhausted, or cannot commit.
pub(crate) fn fresh_frames(frames: u32) -> Option<Frame> {
    if !ensure_ready() || frames == 0 {
        return None;
    }
    let frames = frames as usize;
    let first = NEXT_FRAME.fetch_add(frames, Ordering::Relaxed);
    // Frame counts stay far below usize::MAX: no arithmetic here wraps.
    let last = first.wrapping_add(frames - 1);
    if last >= MAX_FRAMES {
        return None;
    }
    if last >= COMMITTED.load(Ordering::Acquire) && !commit_through(last) {
        return None;
    }
    Some(Frame::new(first as u32))
}

/// Takes the `frames` frames from `end` on, if `end` is the high-water
/// mark: an extent that ends there grows in place. False otherwise.
pub(crate) fn extend_at_high_water(end: Frame, frames: u32) -> bool {
    let (end, frames) = (end.as_usize(), frames as usize);
    let new_end = end.wrapping_add(frames);
    if new_end > MAX_FRAMES
        || NEXT_FRAME
            .compare_exchange(end, new_end, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
    {
        return false;
    }
    // Taken: past a failed commit they stay unused, as frames past the
    // region's end do.
    new_end <= COMMITTED.load(Ordering::Acquire) || commit_through(new_end.wrapping_sub(1))
}

/// Bytes of spans assigned to heaps or abandoned, and of large blocks.
pub(crate) fn span_bytes() -> usize {
    SPAN_BYTES.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check the region makes of the system's page size before it
    /// maps anything, with the sizes of the kernels a build meets:
    /// qemu-user and the test machines cannot choose their page size, so
    /// the 16 and 64 KiB kernels are checked here, through the same logic.
    #[test]
    fn the_region_serves_pages_up_to_a_frame_and_warns_past_it() {
        for served in [4 << 10, 16 << 10, 64 << 10] {
            assert_eq!(serves_page_size(served), served <= FRAME_SIZE, "{served}");
        }
        if cfg!(not(miri)) {
            assert!(serves_page_size(16 << 10) && serves_page_size(64 << 10));
        }
        for refused in [0, 3 << 12, 2 * FRAME_SIZE, 256 << 10, 1 << 30] {
            assert!(!serves_page_size(refused), "{refused}");
        }
        assert!(serves_page_size(os::page_size()), "this machine's pages");
        let warning = PageSizeWarning::new(256 << 10);
        let text = core::str::from_utf8(warning.text()).unwrap();
        assert_eq!(
            text,
            format!(
                "batch-alloc: this system's memory pages are 262144 bytes, which \
                 batch-alloc's frames of {FRAME_SIZE} bytes cannot hold whole, so every \
                 allocation is the inner allocator's\n"
            )
        );
        assert!(PageSizeWarning::new(usize::MAX).text().ends_with(b"\n"));
    }
}
