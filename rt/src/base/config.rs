//! Every tunable constant of the allocator, in one place.
//!
//! Page size, span size and the limits on cached memory are read by the
//! size-class generator and the region at compile time, so changing one of
//! them here re-derives everything else. Under Miri everything shrinks so that
//! the slow paths (refills, full spans, recycling) run within a few hundred
//! allocations.

/// log2 of the page size: 8 KiB pages, as the Go runtime uses (4 KiB in the
/// policy study's measurement build `RUSTFLAGS="--cfg batch_alloc_page_4k"`).
#[cfg(all(not(miri), not(batch_alloc_page_4k)))]
pub const PAGE_SHIFT: u32 = 13;
#[cfg(all(not(miri), batch_alloc_page_4k))]
pub const PAGE_SHIFT: u32 = 12;
#[cfg(miri)]
pub const PAGE_SHIFT: u32 = 9;

/// Bytes in a page.
pub const PAGE_SIZE: usize = 1 << PAGE_SHIFT;

/// log2 of the frame size. A frame is the unit the region is cut
/// into, the largest span, and the unit of memory returned to the OS; a span
/// starts at its frame's first byte.
#[cfg(not(miri))]
pub const FRAME_SHIFT: u32 = 16;
#[cfg(miri)]
pub const FRAME_SHIFT: u32 = 12;

/// Bytes in a frame (64 KiB; 4 KiB under Miri).
pub const FRAME_SIZE: usize = 1 << FRAME_SHIFT;

/// Pages in a frame.
pub const FRAME_PAGES: usize = FRAME_SIZE / PAGE_SIZE;

/// The fewest pages a span may have. The size-class generator starts here and
/// adds pages until the tail a span cannot use is at most an eighth of it.
/// By default every span fills its frame, so a refill can take a long
/// stretch of slots from one span; the policy study's measurement build
/// `RUSTFLAGS="--cfg batch_alloc_small_spans"` starts from one page, as Go
/// does.
#[cfg(not(batch_alloc_small_spans))]
pub const MIN_SPAN_PAGES: usize = FRAME_PAGES;
#[cfg(batch_alloc_small_spans)]
pub const MIN_SPAN_PAGES: usize = 1;

/// The largest slot: the largest size class's size. A larger allocation in a
/// scope is a large block or the inner allocator's, and a `Batch` of a
/// larger type is `Box::new`.
pub const MAX_SMALL_SIZE: usize = if FRAME_SIZE / 16 < 4096 {
    FRAME_SIZE / 16
} else {
    4096
};

/// Bytes of address space mapped for frames, at first use and all at once
/// (a process that cannot map it, for example under a small
/// `ulimit -v`, gets plain boxes). Only what spans touch becomes resident.
#[cfg(not(miri))]
pub const REGION_BYTES: usize = 32 << 30;
#[cfg(miri)]
pub const REGION_BYTES: usize = 1 << 20;

/// Frames made readable and writable at once as the region's high-water mark
/// grows (4 MiB). Commits extend one mapping, so the process's map count
/// stays constant.
pub const COMMIT_FRAMES: usize = 64;

/// Empty frames the shared pool keeps resident for good (32 MiB). Frames
/// released past this stay resident for [`FRAME_DECAY_MILLIS`] more, in
/// case the program reuses them (a loop that builds and drops a structure
/// of any size should not fault its pages in again every time), then go
/// back to the OS. The runtime's unit tests keep 8 (512 KiB; 32 KiB under
/// Miri), so that the model's programs reach the decay.
#[cfg(not(test))]
pub const POOL_RESIDENT_FRAMES: usize = 512;
#[cfg(test)]
pub const POOL_RESIDENT_FRAMES: usize = 8;

/// How long an empty frame past [`POOL_RESIDENT_FRAMES`] waits unused
/// before its memory may go back to the OS: a second, so that a loop whose
/// every iteration builds and drops a structure larger than the pool keeps
/// its frames, and their huge pages, across iterations (a parser's fifth
/// parse in a loop took 1,440 page faults when frames went back once they
/// had waited 100 ms, mid-parse: docs/runtime.md). It goes back at the
/// runtime's first event past the delay (a refill, a large block made or
/// freed, a frame given back); docs/runtime.md ("When memory goes back")
/// states the promise.
pub const FRAME_DECAY_MILLIS: u32 = 1000;

/// How long a free extent, the frames a large block gave back, waits
/// unused before its memory may go back to the OS, at the same events.
/// mimalloc's purge delay is 10 ms, jemalloc's dirty-page decay 10 s.
pub const EXTENT_DECAY_MILLIS: u32 = 100;

/// How long spans that other threads' frees emptied may wait in their
/// owner's mailbox, the owner making no refill to take them, before a
/// sweep on another thread takes them to the pool (`heap/sweep.rs`), at
/// the first refill or large block made or freed on any thread past it,
/// counted from the first such event after the free. From the pool they
/// go back as every empty frame does ([`FRAME_DECAY_MILLIS`]), so a
/// burst freed into an idle thread's spans goes back within about the
/// sum; docs/runtime.md ("When memory goes back") states the promise.
pub const SWEEP_DELAY_MILLIS: u32 = 100;

/// Slots asked for by the first refill of a run (a scope's, or a batch's
/// with no capacity), which later refills double.
pub const FIRST_REFILL: usize = 8;
