//! Large blocks: what a scope allocates past the largest size
//! class, served as whole frames of the region. Each is an ordinary
//! allocation (grown, shrunk, freed on any thread, after the scope); the
//! frames of a freed block are reused by the next one, and `trim` gives
//! their memory back.

use std::thread;

use batch_alloc_rt::testing::limits::{FRAME_SIZE, MAX_LARGE_SIZE, MAX_SMALL_SIZE};
use batch_alloc_rt::{stats, trim};

use crate::scope::{in_scope, inner_calls_in};
use workloads::testing::{on_fresh_thread, serially};

/// A byte vector of `len` bytes, each its index's low byte plus `salt`.
fn filled(len: usize, salt: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_add(salt)).collect()
}

fn intact(v: &[u8], salt: u8) -> bool {
    v.iter()
        .enumerate()
        .all(|(i, &b)| b == (i as u8).wrapping_add(salt))
}

#[test]
fn a_large_block_is_served_grown_shrunk_and_freed_on_another_thread() {
    serially(|| {
        on_fresh_thread(|| {
            // Five bytes short of two frames: the tail is small enough that
            // the block is served as whole frames.
            let len = 2 * FRAME_SIZE - 5;
            // The thread's first scope makes its heap, which may allocate.
            in_scope(|| ());
            let before = stats();
            let (mut v, inner) = inner_calls_in(|| in_scope(|| filled(len, 1)));
            assert_eq!(inner, 0, "a scope serves past the classes");
            assert!(intact(&v, 1));
            // Two frames out, counted as one live allocation.
            let out = stats();
            assert!(out.span_bytes - before.span_bytes >= 2 * FRAME_SIZE as u64);
            assert_eq!(out.live_slots - before.live_slots, 1);
            // Grown inside a scope: in place or moved, intact either way.
            in_scope(|| v.extend_from_slice(&filled(FRAME_SIZE / 2, 7)[..]));
            assert!(intact(&v[..len], 1));
            // Shrunk outside any scope: the block keeps its frames but the
            // ones the new length no longer needs.
            let span_before_shrink = stats().span_bytes;
            v.truncate(FRAME_SIZE / 2);
            v.shrink_to_fit();
            assert!(intact(&v, 1));
            assert!(stats().span_bytes < span_before_shrink);
            // Freed on a thread that never had a heap.
            thread::spawn(move || drop(v)).join().unwrap();
            let after = stats();
            assert_eq!(after.live_slots, before.live_slots);
            assert_eq!(after.span_bytes, before.span_bytes);
        });
    });
}

#[test]
fn a_freed_block_is_reused_zeroed_when_asked_and_trim_gives_its_memory_back() {
    serially(|| {
        on_fresh_thread(|| {
            let len = 2 * FRAME_SIZE;
            let first = in_scope(|| filled(len, 3));
            let address = first.as_ptr().addr();
            drop(first);
            assert!(
                stats().cached_bytes >= len as u64,
                "the frames wait for reuse"
            );
            // The same size again: the freed frames, best fit (the free
            // extent may have merged with a free frame just before them).
            let reuses = |p: *const u8| p.addr().abs_diff(address) < len;
            let second = in_scope(|| filled(len, 4));
            assert!(reuses(second.as_ptr()));
            drop(second);
            // Zeroed, though the frames hold the last block's bytes.
            let zeroed = in_scope(|| vec![0u8; len]);
            assert!(reuses(zeroed.as_ptr()));
            assert!(zeroed.iter().all(|&b| b == 0));
            drop(zeroed);
            let cached = stats().cached_bytes;
            trim();
            assert!(stats().cached_bytes + len as u64 <= cached);
            // After `trim`, reused frames read as zero and work as before.
            let again = in_scope(|| vec![0u8; len]);
            assert!(again.iter().all(|&b| b == 0));
        });
    });
}

/// Every platform's decommit promises that memory it gave back reads as
/// zero (Linux's `madvise`, a fresh mapping in place on macOS and the BSDs,
/// Windows' decommit and commit), so `alloc_zeroed` skips writing frames
/// that `trim` gave back: bytes left over from the block before would be
/// read as the zeroed block's. Runs on every target the tests run on.
#[test]
fn memory_trim_gave_back_reads_as_zero_in_the_next_zeroed_block() {
    serially(|| {
        on_fresh_thread(|| {
            let len = 4 * FRAME_SIZE;
            in_scope(|| ());
            let block = in_scope(|| filled(len, 0x5A));
            let address = block.as_ptr().addr();
            drop(block);
            let cached = stats().cached_bytes;
            trim();
            assert!(
                stats().cached_bytes + len as u64 <= cached,
                "trim gave the block's frames back"
            );
            let zeroed = in_scope(|| vec![0u8; len]);
            // The same frames, best fit (the free extent may have merged
            // with a free frame just before them).
            assert!(zeroed.as_ptr().addr().abs_diff(address) < len);
            let stale = zeroed.iter().filter(|&&b| b != 0).count();
            assert_eq!(stale, 0, "bytes of {len} not zero after trim");
        });
    });
}

#[test]
fn the_limits_of_large_blocks() {
    serially(|| {
        on_fresh_thread(|| {
            in_scope(|| ());
            in_scope(|| {
                // The largest class is a slot; one byte more is a medium
                // block, the inner allocator's, until rounding it up to
                // whole frames wastes at most an eighth of it; the largest
                // large block is a large block too, one byte more the inner
                // allocator's.
                for (len, expected_inner) in [
                    (MAX_SMALL_SIZE, 0),
                    (MAX_SMALL_SIZE + 1, 1),
                    (FRAME_SIZE / 2, 1),
                    (FRAME_SIZE * 8 / 9 - 1, 1),
                    (FRAME_SIZE * 8 / 9 + 1, 0),
                    (FRAME_SIZE, 0),
                    (FRAME_SIZE + 1, 1),
                    (2 * FRAME_SIZE * 8 / 9 + 1, 0),
                    (MAX_LARGE_SIZE, 0),
                    (MAX_LARGE_SIZE + 1, 1),
                ] {
                    let (v, inner) = inner_calls_in(|| Vec::<u8>::with_capacity(len));
                    assert_eq!(inner, expected_inner, "{len} bytes");
                    drop(v);
                }
            });
            // Outside any scope, nothing large is served.
            let (v, inner) = inner_calls_in(|| Vec::<u8>::with_capacity(2 * FRAME_SIZE));
            assert_eq!(inner, 1);
            drop(v);
        });
    });
}

/// Sizes a large block must never reach in place: past the largest large
/// block by far, where the block's frame count would not fit its 32-bit
/// field (2^48 bytes are 2^32 frames of 64 KiB, so 2^48 + 128 KiB would
/// read as two frames, the block's own size, and 2^48 + 64 KiB as one, a
/// shrink), and at the top of what a `Layout` allows.
const HUGE: [usize; 5] = [
    (1 << 48) + 2 * (64 << 10),
    (1 << 48) + (64 << 10),
    1 << 48,
    1 << 62,
    isize::MAX as usize - 7,
];

/// A huge `realloc` or `try_reserve` of a large block fails as the system
/// allocator's does, and leaves the block where it was, whole, with its
/// neighbour untouched: it never "succeeds" in place with frames the block
/// does not have.
#[test]
#[cfg_attr(
    miri,
    ignore = "Miri stops at an allocation it cannot serve rather than return null"
)]
fn a_large_block_asked_to_grow_past_any_limit_fails_as_the_system_allocator_does() {
    use std::alloc::{GlobalAlloc, Layout, System};
    serially(|| {
        on_fresh_thread(|| {
            let len = 2 * FRAME_SIZE;
            in_scope(|| ());
            let (mut v, neighbour) = in_scope(|| (filled(len, 1), filled(len, 2)));
            let before = stats();
            let at = v.as_ptr();
            let layout = Layout::array::<u8>(len).unwrap();
            for size in HUGE {
                // What the system allocator does with the same request.
                // SAFETY: a block of `layout`, reallocated (or not) and freed.
                let system = unsafe {
                    let block = System.alloc(layout);
                    let grown = System.realloc(block, layout, size);
                    System.dealloc(if grown.is_null() { block } else { grown }, layout);
                    !grown.is_null()
                };
                let reserved = in_scope(|| v.try_reserve_exact(size - v.len()));
                assert_eq!(
                    (reserved.is_ok(), v.capacity(), v.as_ptr()),
                    (system, len, at),
                    "try_reserve_exact to {size} bytes"
                );
                // SAFETY: the vector's block, of `layout`; on success the
                // vector would own the result, so a success is taken back.
                let moved = unsafe { std::alloc::realloc(v.as_mut_ptr(), layout, size) };
                assert!(moved.is_null(), "realloc to {size} bytes gave {moved:p}");
            }
            assert!(intact(&v, 1), "the block kept its bytes");
            assert!(intact(&neighbour, 2), "its neighbour kept its bytes");
            let after = stats();
            assert_eq!(
                (after.span_bytes, after.live_slots),
                (before.span_bytes, before.live_slots),
                "the block kept its frames"
            );
            // A block made after all that is apart from both.
            let next = in_scope(|| filled(FRAME_SIZE, 3));
            for other in [&v, &neighbour] {
                let (a, b) = (next.as_ptr_range(), other.as_ptr_range());
                assert!(a.end <= b.start || b.end <= a.start, "overlap");
            }
        });
    });
}

/// The reproducer: a 128 KiB block filled, freed, its memory given
/// back by `trim`, then `vec![0; ..]` of the same size, which the freed
/// extent serves. Returns the number of bytes that are not zero, and of
/// `None`s that are not `None` in the same scenario with a vector of
/// optional boxes (which `vec!` also takes from `alloc_zeroed`). Checks
/// on the way that the memory `trim` gave back still counts as cached: the
/// kernel refused to take it.
#[cfg(target_os = "linux")]
fn stale_after_trim_under_mlockall() -> (usize, usize) {
    const LEN: usize = 128 * 1024;
    in_scope(|| ());
    let mut stale = [0; 2];
    for (round, stale) in stale.iter_mut().enumerate() {
        drop(in_scope(|| vec![0xAAu8; LEN]));
        trim();
        let cached = stats().cached_bytes;
        assert!(
            cached >= LEN as u64,
            "trim refused, yet {cached} bytes cached"
        );
        *stale = if round == 0 {
            let zeroed = in_scope(|| vec![0u8; LEN]);
            zeroed.iter().filter(|&&b| b != 0).count()
        } else {
            let nones = in_scope(|| vec![None::<Box<u64>>; LEN / 8]);
            let some = nones.iter().filter(|b| b.is_some()).count();
            if some != 0 {
                // Dropping "boxes" made of stale bytes would free them.
                std::mem::forget(nones);
            }
            some
        };
    }
    (stale[0], stale[1])
}

/// Under `mlockall(MCL_CURRENT | MCL_FUTURE)` the kernel refuses
/// `MADV_DONTNEED` (locked pages cannot be dropped), so memory `trim` or the
/// decay gives back keeps its bytes: a zeroed block the extent serves next
/// must still be all zeros. In a child process (this test binary again),
/// since the lock holds for the whole process; skipped, with a message,
/// where `RLIMIT_MEMLOCK` forbids it.
#[test]
#[cfg(target_os = "linux")]
#[cfg_attr(miri, ignore = "Miri cannot spawn processes or lock memory")]
fn zeroed_blocks_are_zero_under_mlockall() {
    let child = workloads::in_child!(zeroed_blocks_are_zero_under_mlockall, |_| {}, || {
        // SAFETY: no preconditions; locks every page of the process.
        if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
            let why = std::io::Error::last_os_error();
            println!("mlockall-skipped: mlockall refused ({why}): RLIMIT_MEMLOCK too low?");
            return;
        }
        let (bytes, boxes) = serially(|| on_fresh_thread(stale_after_trim_under_mlockall));
        assert_eq!(
            (bytes, boxes),
            (0, 0),
            "stale bytes in vec![0u8; 128 KiB], stale Somes in vec![None::<Box<u64>>; 16,384]"
        );
    });
    assert!(child.status.success(), "{child}");
    if child.output.contains("mlockall-skipped") {
        println!("zeroed_blocks_are_zero_under_mlockall: skipped: mlockall(MCL_CURRENT | MCL_FUTURE) was refused");
    }
}
