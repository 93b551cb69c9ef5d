//! Large blocks: what a scope allocates past the largest size class (a
//! vector or a string that grew past 4 KiB, a buffer), served as an
//! *extent*, contiguous whole frames of the region, up to [`LARGE_MAX`].
//!
//! Without them, such a block goes to the inner allocator, and a program
//! whose every small allocation comes from spans leaves that allocator
//! nothing else to do: what it frees, it keeps (mimalloc purges lazily, on
//! its own calls, which a scope no longer makes), and peak memory is the sum
//! of the spans and the inner allocator's leftovers. As extents, a block the
//! scope frees goes back to the region, where the next large block or span
//! reuses it. A block grows in place over a free extent just after it, or,
//! at the region's high-water mark when no free extent could take it, over
//! fresh frames, as glibc's `mremap` grows one (when a free extent could,
//! the block moves there: a copy into memory already touched costs less
//! than faulting in new memory); a block that shrinks gives back its tail.
//!
//! A block's first frame carries its metadata: `slot_size` is the extent's
//! length in bytes (past every class's size, which is how `dealloc` and
//! `realloc` tell a large block from a slot), `used` is 1 and `owner` is
//! null. Its other frames stay unassigned. Any thread may free it, with no
//! heap: its frames go back whole to the pool's free extents (see
//! `pool.rs`), reused best-fit by the next large block, and by spans when
//! no single frame is left.

use core::ptr::NonNull;

use crate::base::config::{FRAME_SHIFT, FRAME_SIZE, MAX_SMALL_SIZE, REGION_BYTES};
use crate::base::fatal::fatal;
use crate::base::frame::Frame;
use crate::base::sync::Ordering;
use crate::memory::pool;
use crate::memory::region::{self, frame_base, Located};

/// The largest block served as an extent; larger ones go to the inner
/// allocator (whose `realloc` of them may remap rather than copy). Miri's
/// small region still takes blocks of a few frames.
pub(crate) const LARGE_MAX: usize = if REGION_BYTES / 512 > 4 * FRAME_SIZE {
    REGION_BYTES / 512
} else {
    4 * FRAME_SIZE
};

/// Whether a block of `size` bytes and `align` is served as an extent:
/// past the classes, and large enough that rounding it up to whole frames
/// wastes at most an eighth of it (a vector of 5 KiB would otherwise take
/// a 64 KiB frame, all of it resident under transparent huge pages). The
/// medium blocks between go to the inner allocator, which has classes for
/// them.
#[inline]
pub(crate) fn serves(size: usize, align: usize) -> bool {
    size > MAX_SMALL_SIZE
        && size <= LARGE_MAX
        && align <= FRAME_SIZE
        && frame_tail(size) <= size / 8
}

/// Bytes of the last frame a block of `size` bytes leaves unused.
#[inline]
fn frame_tail(size: usize) -> usize {
    size.wrapping_neg() & (FRAME_SIZE - 1)
}

/// Frames a block of `size` bytes takes (at least one), or `None` past
/// [`LARGE_MAX`]: the check comes with the conversion, since a larger
/// size's count may not fit a block's 32-bit field, and a wrapped count
/// would make a huge block look like a small one (2^48 bytes are 2^32
/// frames).
fn frames_for(size: usize) -> Option<u32> {
    if size > LARGE_MAX {
        return None;
    }
    // At most LARGE_MAX / FRAME_SIZE: it fits.
    Some((size.div_ceil(FRAME_SIZE) as u32).max(1))
}

/// Whether the frame metadata at `at` is a large block's: its slot size is
/// past every class.
#[inline]
pub(crate) fn is_large(at: Located) -> bool {
    at.span().slot_size.load(Ordering::Relaxed) as usize > MAX_SMALL_SIZE
}

/// A block of `size` bytes (which [`serves`]), zeroed if `zeroed`: `None`
/// when the region has no room. Zeroing is skipped only for frames that
/// read as zero: fresh ones, and a free extent whose memory the OS said it
/// took back (`pool.rs`).
pub(crate) fn alloc(size: usize, zeroed: bool) -> Option<NonNull<u8>> {
    let frames = frames_for(size)?;
    let (first, zero) = match pool::take_extent(frames) {
        Some(taken) => taken,
        // Past the high-water mark: committed memory no one has written.
        None => (region::fresh_frames(frames)?, true),
    };
    let block = frame_base(first);
    if zeroed && !zero {
        // SAFETY: the extent's frames are committed and this caller's alone.
        unsafe { block.write_bytes(0, size) };
    }
    assign(first, frames);
    NonNull::new(block)
}

/// Marks `frames` frames from `first` as one large block, handed out.
fn assign(first: Frame, frames: u32) {
    let span = region::span(first);
    span.used.store(1, Ordering::Relaxed);
    span.slot_size
        .store(frames << FRAME_SHIFT, Ordering::Relaxed);
    region::note_assigned((frames as usize) << FRAME_SHIFT);
}

/// Frees the large block at `at`, on whichever thread this is.
///
/// # Safety
/// - `at` locates the start of a large block that is out, and the caller
///   gives it up.
pub(crate) unsafe fn free(at: Located) {
    if at.offset_in_frame() != 0 {
        fatal("batch-alloc: free of a pointer inside a large block");
    }
    let span = at.span();
    if span.used.swap(0, Ordering::Relaxed) != 1 {
        fatal("batch-alloc: a large block freed twice");
    }
    let frames = span.slot_size.load(Ordering::Relaxed) >> FRAME_SHIFT;
    span.slot_size.store(0, Ordering::Relaxed);
    region::note_released((frames as usize) << FRAME_SHIFT);
    pool::give_extent(at.frame(), frames);
}

/// The large block at `at` of `size` bytes, grown or shrunk to `new_size`
/// in place if it can be: within its extent, over a free extent or the
/// high-water mark just after it, or giving back the frames a smaller size
/// no longer needs. `None` if it must move: always past [`LARGE_MAX`],
/// where the block moves to the inner allocator (which refuses what no
/// allocator could give, as `System` does 2^48 bytes).
///
/// # Safety
/// - As for [`free`], but the caller keeps the block.
pub(crate) unsafe fn resize_in_place(at: Located, new_size: usize) -> Option<*mut u8> {
    let wanted = frames_for(new_size)?;
    let span = at.span();
    let frames = span.slot_size.load(Ordering::Relaxed) >> FRAME_SHIFT;
    if wanted < frames {
        span.slot_size
            .store(wanted << FRAME_SHIFT, Ordering::Relaxed);
        let spare = frames.wrapping_sub(wanted);
        region::note_released((spare as usize) << FRAME_SHIFT);
        pool::give_extent(at.frame().plus(wanted), spare);
        return Some(at.ptr());
    }
    if wanted == frames {
        return Some(at.ptr());
    }
    // Frame indices and counts stay far below u32::MAX (the region has
    // fewer than 2^19 frames): no arithmetic here wraps.
    let end = at.frame().plus(frames);
    let more = wanted.wrapping_sub(frames);
    // Past the high-water mark only if no free extent could take the block:
    // a copy into memory already touched costs less than fresh memory.
    let grown = pool::take_extent_at(end, more)
        || (!pool::has_extent(wanted) && region::extend_at_high_water(end, more));
    if !grown {
        return None;
    }
    span.slot_size
        .store(wanted << FRAME_SHIFT, Ordering::Relaxed);
    region::note_assigned((more as usize) << FRAME_SHIFT);
    Some(at.ptr())
}

// Not under loom, whose builds lack the tests' helpers (`workloads`).
#[cfg(all(test, not(loom)))]
mod tests {
    use crate::base::config::{EXTENT_DECAY_MILLIS, FRAME_SIZE};
    use crate::base::os::refusals::refuse_decommit_on_this_thread;
    use crate::memory::pool::test_clock;
    use crate::{scope, trim};

    /// Two frames: 128 KiB, the size of the first reproducer.
    const LEN: usize = 2 * FRAME_SIZE;

    /// Lets the free extent of a block just freed decay: moves the decay's
    /// clock past the delay, then frees `trigger`, another large block,
    /// whose give-back runs the decay. (`spacer`, between them, keeps the
    /// two extents apart until the caller is done: merged, they would make
    /// one extent that was not given back.)
    fn decay(trigger: Vec<u8>) {
        test_clock::advance(EXTENT_DECAY_MILLIS * 3 / 2);
        drop(trigger);
    }

    /// The memory of a freed block given back while the OS
    /// refuses to take it (as it does for locked memory: `mlockall`), by
    /// `trim` or by the decay, then a zeroed block of the same size, which
    /// the same frames serve: every byte must be zero, every `None` `None`.
    /// Returns the stale bytes and the stale `Some`s.
    #[test]
    fn zeroed_blocks_are_zero_when_the_os_refuses_to_take_memory_back() {
        let stale = workloads::testing::serially(|| {
            refuse_decommit_on_this_thread(true);
            scope(|| ());
            let mut stale = Vec::new();
            for by_decay in [false, true] {
                for options in [false, true] {
                    let block = scope(|| vec![0xAAu8; LEN]);
                    let (spacer, trigger) =
                        scope(|| (vec![1u8; FRAME_SIZE], vec![2u8; FRAME_SIZE]));
                    drop(block);
                    match by_decay {
                        true => decay(trigger),
                        false => {
                            drop(trigger);
                            trim();
                        }
                    }
                    stale.push(if options {
                        let nones = scope(|| vec![None::<Box<u64>>; LEN / 8]);
                        let some = nones.iter().filter(|b| b.is_some()).count();
                        if some != 0 {
                            // Stale bytes are not boxes to drop.
                            std::mem::forget(nones);
                        }
                        some
                    } else {
                        let zeroed = scope(|| vec![0u8; LEN]);
                        zeroed.iter().filter(|&&b| b != 0).count()
                    });
                    drop(spacer);
                }
            }
            stale
        });
        assert!(
            stale.iter().all(|&n| n == 0),
            "stale bytes, stale Somes after trim, then after the decay: {stale:?}"
        );
    }
}
