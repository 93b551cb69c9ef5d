//! Cursors: how slots reserved from one span are handed out, one at a time.
//!
//! A refill (see `reserve.rs`) hands over a [`Reservation`]: a list of
//! recycled slots and a stretch of fresh ones, all in one span. A run of
//! one size class (`Run`, in `types.rs`: a scope's, or a `Batch`'s) walks
//! it with a [`Cursor`]: the fresh stretch first, by a pointer bump, then
//! the list; what it did not hand out turns back into a reservation when
//! the run ends.
//!
//! The link format of the recycled list belongs to `link.rs`, above this
//! module: whoever pops the list says how to follow a link (`follow`).
//! A slot taken leaves the runtime as a `Box<T>` through [`box_in_slot`].

use core::ptr::{self, NonNull};
use core::sync::atomic::Ordering::Relaxed;
use core::sync::atomic::{AtomicPtr, AtomicU32};

use crate::base::frame::Frame;

/// Slots reserved from one span: a list of recycled slots followed by a
/// contiguous stretch of fresh ones. Offsets are bytes from the frame's start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reservation {
    pub frame: Frame,
    /// First recycled slot (valid when `list_len > 0`); each links the next.
    pub list_head: u32,
    pub list_len: u32,
    /// The stretch of fresh slots `[bump_start, bump_end)`.
    pub bump_start: u32,
    pub bump_end: u32,
    /// Slots in all: the list's and the stretch's.
    pub len: u32,
}

/// Where a walk through one [`Reservation`] stands: the fresh stretch
/// `[cur, end)`, then the `list_count` recycled slots from `list`, all in
/// the span of `frame`. Empty (both ends null, no list) between
/// reservations.
///
/// Walked by its owner alone, but `stats()` counts the slots a thread's
/// runs hold from any thread, so the words are relaxed atomics: on the
/// targets we build for, plain loads and stores all the same.
pub(crate) struct Cursor {
    cur: AtomicPtr<u8>,
    end: AtomicPtr<u8>,
    /// The next recycled slot; each links the next by its offset in the
    /// frame.
    list: AtomicPtr<u8>,
    list_count: AtomicU32,
    frame: AtomicU32,
}

impl Cursor {
    pub(crate) const fn empty() -> Cursor {
        Cursor {
            cur: AtomicPtr::new(ptr::null_mut()),
            end: AtomicPtr::new(ptr::null_mut()),
            list: AtomicPtr::new(ptr::null_mut()),
            list_count: AtomicU32::new(0),
            frame: AtomicU32::new(Frame::FIRST.index()),
        }
    }

    /// The frame of the current reservation (meaningless while empty).
    #[inline(always)]
    pub(crate) fn frame(&self) -> Frame {
        Frame::new(self.frame.load(Relaxed))
    }

    /// The next slot, `stride` bytes apart in the fresh stretch: fresh while
    /// the stretch lasts, then recycled, `follow` giving the slot a recycled
    /// one links to; `None` when both are used up. Calls nothing on the
    /// bump, so that the caller's fast path needs no stack frame.
    ///
    /// The stretch's ends are read as plain memory, which lets the compiler
    /// fold the end into the comparison (one instruction less per slot
    /// than two relaxed loads); only other threads' reads can race with
    /// them, and a read racing a read is no data race.
    ///
    /// # Safety
    /// - The caller is the cursor's owner: the one thread that writes it.
    #[inline(always)]
    pub(crate) unsafe fn take(
        &self,
        stride: usize,
        follow: impl FnOnce(*mut u8) -> *mut u8,
    ) -> Option<NonNull<u8>> {
        // SAFETY: the owner is the only writer (the caller's contract), so
        // these reads race with no write.
        let (cur, end) = unsafe { (*self.cur.as_ptr(), *self.end.as_ptr()) };
        if cur != end {
            self.cur.store(cur.wrapping_add(stride), Relaxed);
            // SAFETY: a stretch with slots left starts at a slot, never null
            // (an empty cursor has both ends null).
            return Some(unsafe { NonNull::new_unchecked(cur) });
        }
        let left = self.list_count.load(Relaxed);
        if left == 0 {
            return None;
        }
        let slot = self.list.load(Relaxed);
        self.list.store(follow(slot), Relaxed);
        self.list_count.store(left - 1, Relaxed);
        NonNull::new(slot)
    }

    /// Starts walking `reservation`, whose frame begins at `base`. The
    /// cursor must be empty (or its slots accounted for elsewhere).
    #[inline(always)]
    pub(crate) fn install(&self, base: *mut u8, reservation: &Reservation) {
        self.frame.store(reservation.frame.index(), Relaxed);
        self.cur
            .store(base.wrapping_add(reservation.bump_start as usize), Relaxed);
        self.end
            .store(base.wrapping_add(reservation.bump_end as usize), Relaxed);
        self.list
            .store(base.wrapping_add(reservation.list_head as usize), Relaxed);
        self.list_count.store(reservation.list_len, Relaxed);
    }

    /// Whether every slot of the reservation has been handed out (or the
    /// cursor never held one).
    #[inline(always)]
    pub(crate) fn is_used_up(&self) -> bool {
        self.cur.load(Relaxed) == self.end.load(Relaxed) && self.list_count.load(Relaxed) == 0
    }

    /// Slots not handed out yet. Exact on the owner's thread; from another
    /// thread a snapshot, never more than the stretch and list can hold.
    #[inline]
    pub(crate) fn unused(&self, stride: usize) -> u32 {
        let (cur, end) = (self.cur.load(Relaxed), self.end.load(Relaxed));
        let fresh = end.addr().saturating_sub(cur.addr()) / stride.max(1);
        (fresh as u32).saturating_add(self.list_count.load(Relaxed))
    }

    /// Empties the cursor and returns what it held unhanded as the
    /// reservation it is the rest of (`None` if it held nothing). `base` is
    /// the first byte of the cursor's frame.
    pub(crate) fn take_unused(&self, base: *mut u8, stride: usize) -> Option<Reservation> {
        if self.is_used_up() {
            return None;
        }
        let (cur, end) = (self.cur.load(Relaxed), self.end.load(Relaxed));
        let list_len = self.list_count.load(Relaxed);
        let offset = |p: *mut u8| p.addr().wrapping_sub(base.addr()) as u32;
        let list_head = match list_len {
            0 => 0,
            _ => offset(self.list.load(Relaxed)),
        };
        let fresh = (end.addr().wrapping_sub(cur.addr()) / stride.max(1)) as u32;
        self.cur.store(ptr::null_mut(), Relaxed);
        self.end.store(ptr::null_mut(), Relaxed);
        self.list.store(ptr::null_mut(), Relaxed);
        self.list_count.store(0, Relaxed);
        Some(Reservation {
            frame: self.frame(),
            list_head,
            list_len,
            bump_start: offset(cur),
            bump_end: offset(end),
            len: list_len.wrapping_add(fresh),
        })
    }
}

/// Moves `value` into `slot` and boxes it: how every slot leaves the
/// runtime as a `Box<T>`.
///
/// # Safety
/// - Either `slot` is a slot of `T`'s class (large and aligned enough for
///   `T`), reserved to the caller, never handed out before, its freed mark
///   cleared (`link::on_handout`), and `BatchAlloc` is the global
///   allocator, so that the box's drop frees the slot into its span;
/// - or `slot` is a block the global allocator made for
///   `Layout::new::<T>()`, the caller's alone.
#[cfg_attr(debug_assertions, inline)]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn box_in_slot<T>(slot: core::ptr::NonNull<u8>, value: T) -> Box<T> {
    let slot = slot.cast::<T>().as_ptr();
    // SAFETY: the slot fits and aligns `T` and nobody else uses it.
    unsafe { slot.write(value) };
    // SAFETY: the slot now holds a `T`, and the global allocator frees it
    // (the caller's contract).
    unsafe { Box::from_raw(slot) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame-like buffer of eight 16-byte slots: slots 0..4 fresh, then
    /// a list of 6 -> 5 (each slot's first word: the next one's offset).
    fn frame() -> Vec<u64> {
        let mut words = vec![0u64; 16];
        words[12] = 5 * 16; // slot 6 links slot 5
        words
    }

    fn walk(cursor: &Cursor) {
        let mut buffer = frame();
        let base = buffer.as_mut_ptr().cast::<u8>();
        cursor.install(
            base,
            &Reservation {
                frame: Frame::new(3),
                list_head: 6 * 16,
                list_len: 2,
                bump_start: 0,
                bump_end: 4 * 16,
                len: 6,
            },
        );
        assert_eq!(cursor.unused(16), 6);
        let follow = |slot: *mut u8| {
            // SAFETY: slots of the test's buffer, aligned for u64.
            let next = unsafe { slot.cast::<u64>().read() };
            base.wrapping_add(next as usize)
        };
        let take = || {
            // SAFETY: the test's thread is the cursor's only one.
            unsafe { cursor.take(16, follow) }
        };
        let first = take().unwrap();
        assert_eq!(first.as_ptr(), base);
        let second = take().unwrap();
        assert_eq!(second.as_ptr(), base.wrapping_add(16));
        let rest = cursor.take_unused(base, 16).unwrap();
        assert_eq!(
            rest,
            Reservation {
                frame: Frame::new(3),
                list_head: 6 * 16,
                list_len: 2,
                bump_start: 2 * 16,
                bump_end: 4 * 16,
                len: 4,
            }
        );
        assert_eq!(cursor.unused(16), 0);
        assert!(take().is_none());
        assert!(cursor.take_unused(base, 16).is_none());

        // The list after the stretch, in link order.
        cursor.install(base, &rest);
        let order: Vec<usize> = core::iter::from_fn(take)
            .map(|slot| (slot.as_ptr().addr() - base.addr()) / 16)
            .collect();
        assert_eq!(order, [2, 3, 6, 5]);
        assert_eq!(cursor.frame(), Frame::new(3));
        assert!(cursor.is_used_up());
        assert_eq!(cursor.unused(16), 0);
    }

    #[test]
    fn a_cursor_hands_out_the_stretch_then_the_list_and_gives_back_the_rest() {
        walk(&Cursor::empty());
    }
}
