//! Cursors: how slots reserved from one span are handed out, one at a time.
//!
//! A refill (see `reserve.rs`) hands over a [`Reservation`]: a list of
//! recycled slots and a stretch of fresh ones, all in one span. Two things
//! walk one: a loop's [`ErasedBatch`](crate::batch) and a scope's run of one
//! size class (`Run`, in `types.rs`). Both hand out the fresh stretch first,
//! by a pointer bump, then pop the list; both turn what they did not hand
//! out back into a reservation when they end. [`Cursor`] is that walk,
//! written once.
//!
//! The two differ only in who may read the words. A batch is one loop's
//! and nobody else looks, so its words are plain ([`LocalCursor`]). A run
//! is its thread's, but `stats()` counts the slots it holds from any
//! thread, so its words are relaxed atomics ([`SharedCursor`]): on the
//! targets we build for, plain loads and stores all the same.
//!
//! The link format of the recycled list belongs to `link.rs`, above this
//! module: whoever pops the list says how to follow a link (`follow`).
//! A slot taken leaves the runtime as a `Box<T>` through [`box_in_slot`].

use core::cell::Cell;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicI32, AtomicPtr, AtomicU32, Ordering};

use crate::frame::Frame;

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

/// One word of a cursor, read and written by its owner alone: a `Cell` for
/// a cursor nobody else reads, a relaxed atomic for one that `stats()`
/// reads from other threads.
pub(crate) trait Word<T: Copy> {
    fn get(&self) -> T;
    fn set(&self, value: T);
}

impl<T: Copy> Word<T> for Cell<T> {
    #[inline(always)]
    fn get(&self) -> T {
        Cell::get(self)
    }

    #[inline(always)]
    fn set(&self, value: T) {
        Cell::set(self, value);
    }
}

impl Word<*mut u8> for AtomicPtr<u8> {
    #[inline(always)]
    fn get(&self) -> *mut u8 {
        self.load(Ordering::Relaxed)
    }

    #[inline(always)]
    fn set(&self, value: *mut u8) {
        self.store(value, Ordering::Relaxed);
    }
}

/// A shared cursor's frame, packed as its index.
impl Word<Frame> for AtomicU32 {
    #[inline(always)]
    fn get(&self) -> Frame {
        Frame::new(self.load(Ordering::Relaxed))
    }

    #[inline(always)]
    fn set(&self, frame: Frame) {
        self.store(frame.index(), Ordering::Relaxed);
    }
}

impl Word<i32> for AtomicI32 {
    #[inline(always)]
    fn get(&self) -> i32 {
        self.load(Ordering::Relaxed)
    }

    #[inline(always)]
    fn set(&self, value: i32) {
        self.store(value, Ordering::Relaxed);
    }
}

/// Where a walk through one [`Reservation`] stands: the fresh stretch
/// `[cur, end)`, then the recycled slots from `list`, all in the span of
/// `frame`. Empty (both ends null, no list) between reservations.
///
/// The count comes first: an owner that starts it at a value of its own
/// puts its other non-zero fields just before it, and the rest of a new
/// cursor, with the owner's fields after it, is one run of zeros.
#[repr(C)]
pub(crate) struct Cursor<P, C, N> {
    /// While positive, the recycled slots left on `list`. Zero or below,
    /// the list is empty, and the negatives are the owner's to count with
    /// (see [`Cursor::list_count`]): a batch keeps there the allocations
    /// due before it reserves, so that one test on the way out of the
    /// cursor finds them.
    list_count: N,
    frame: C,
    cur: P,
    end: P,
    /// The next recycled slot; each links the next by its offset in the
    /// frame.
    list: P,
}

/// A cursor only its owner reads: a loop's batch.
pub(crate) type LocalCursor = Cursor<Cell<*mut u8>, Cell<Frame>, Cell<i32>>;

/// A cursor its owner walks and other threads may count: a scope's run.
pub(crate) type SharedCursor = Cursor<AtomicPtr<u8>, AtomicU32, AtomicI32>;

impl LocalCursor {
    pub(crate) const fn empty() -> LocalCursor {
        Cursor {
            list_count: Cell::new(0),
            frame: Cell::new(Frame::FIRST),
            cur: Cell::new(ptr::null_mut()),
            end: Cell::new(ptr::null_mut()),
            list: Cell::new(ptr::null_mut()),
        }
    }
}

impl SharedCursor {
    pub(crate) const fn empty() -> SharedCursor {
        Cursor {
            list_count: AtomicI32::new(0),
            frame: AtomicU32::new(Frame::FIRST.index()),
            cur: AtomicPtr::new(ptr::null_mut()),
            end: AtomicPtr::new(ptr::null_mut()),
            list: AtomicPtr::new(ptr::null_mut()),
        }
    }
}

impl<P: Word<*mut u8>, C: Word<Frame>, N: Word<i32>> Cursor<P, C, N> {
    /// The frame of the current reservation (meaningless while empty).
    #[inline(always)]
    pub(crate) fn frame(&self) -> Frame {
        self.frame.get()
    }

    /// The next slot, `stride` bytes apart in the fresh stretch: fresh while
    /// the stretch lasts, then recycled, `follow` giving the slot a recycled
    /// one links to; `None` when both are used up. Calls nothing on the
    /// bump, so that the caller's fast path needs no stack frame.
    #[inline(always)]
    pub(crate) fn take(
        &self,
        stride: usize,
        follow: impl FnOnce(*mut u8) -> *mut u8,
    ) -> Option<NonNull<u8>> {
        let cur = self.cur.get();
        if cur != self.end.get() {
            self.cur.set(cur.wrapping_add(stride));
            // SAFETY: a stretch with slots left starts at a slot, never null
            // (an empty cursor has both ends null).
            return Some(unsafe { NonNull::new_unchecked(cur) });
        }
        let left = self.list_count.get();
        if left <= 0 {
            return None;
        }
        let slot = self.list.get();
        self.list.set(follow(slot));
        self.list_count.set(left - 1);
        NonNull::new(slot)
    }

    /// The list's count: the recycled slots left while positive; once the
    /// cursor is used up, whatever its owner set with
    /// [`set_list_count`](Self::set_list_count).
    #[inline(always)]
    pub(crate) fn list_count(&self) -> i32 {
        self.list_count.get()
    }

    /// Sets the count of a used-up cursor to `count`, zero or below (a
    /// positive count would hand out slots the cursor does not hold).
    #[inline(always)]
    pub(crate) fn set_list_count(&self, count: i32) {
        self.list_count.set(count.min(0));
    }

    /// Starts walking `reservation`, whose frame begins at `base`. The
    /// cursor must be empty (or its slots accounted for elsewhere).
    #[inline(always)]
    pub(crate) fn install(&self, base: *mut u8, reservation: &Reservation) {
        self.frame.set(reservation.frame);
        self.cur
            .set(base.wrapping_add(reservation.bump_start as usize));
        self.end
            .set(base.wrapping_add(reservation.bump_end as usize));
        self.list
            .set(base.wrapping_add(reservation.list_head as usize));
        // No wrap: a list holds at most a span's slots, far below i32::MAX.
        self.list_count.set(reservation.list_len as i32);
    }

    /// Whether every slot of the reservation has been handed out (or the
    /// cursor never held one).
    #[inline(always)]
    pub(crate) fn is_used_up(&self) -> bool {
        self.cur.get() == self.end.get() && self.list_count.get() <= 0
    }

    /// Slots not handed out yet. Exact on the owner's thread; from another
    /// thread a snapshot, never more than the stretch and list can hold.
    #[inline]
    pub(crate) fn unused(&self, stride: usize) -> u32 {
        let fresh = self.end.get().addr().saturating_sub(self.cur.get().addr()) / stride.max(1);
        (fresh as u32).saturating_add(self.list_count.get().max(0) as u32)
    }

    /// Empties the cursor (its count too) and returns what it held unhanded
    /// as the reservation it is the rest of (`None` if it held nothing).
    /// `base` is the first byte of the cursor's frame.
    pub(crate) fn take_unused(&self, base: *mut u8, stride: usize) -> Option<Reservation> {
        let cur = self.cur.get();
        let end = self.end.get();
        if self.is_used_up() {
            return None;
        }
        let list_len = self.list_count.get().max(0) as u32;
        self.list_count.set(0);
        let offset = |p: *mut u8| p.addr().wrapping_sub(base.addr()) as u32;
        let list_head = match list_len {
            0 => 0,
            _ => offset(self.list.get()),
        };
        let fresh = (end.addr().wrapping_sub(cur.addr()) / stride.max(1)) as u32;
        self.cur.set(ptr::null_mut());
        self.end.set(ptr::null_mut());
        self.list.set(ptr::null_mut());
        Some(Reservation {
            frame: self.frame.get(),
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

    fn walk<P: Word<*mut u8>, C: Word<Frame>, N: Word<i32>>(cursor: &Cursor<P, C, N>) {
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
        let first = cursor.take(16, follow).unwrap();
        assert_eq!(first.as_ptr(), base);
        let second = cursor.take(16, follow).unwrap();
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
        assert!(cursor.take(16, follow).is_none());
        assert!(cursor.take_unused(base, 16).is_none());

        // The list after the stretch, in link order.
        cursor.install(base, &rest);
        let order: Vec<usize> = core::iter::from_fn(|| cursor.take(16, follow))
            .map(|slot| (slot.as_ptr().addr() - base.addr()) / 16)
            .collect();
        assert_eq!(order, [2, 3, 6, 5]);
        assert_eq!(cursor.frame(), Frame::new(3));

        // A used-up cursor keeps its owner's count and hands out nothing.
        cursor.set_list_count(-2);
        assert!(cursor.take(16, follow).is_none());
        assert_eq!((cursor.list_count(), cursor.unused(16)), (-2, 0));
        cursor.set_list_count(5);
        assert_eq!(cursor.list_count(), 0, "a positive count is refused");
    }

    #[test]
    fn a_cursor_hands_out_the_stretch_then_the_list_and_gives_back_the_rest() {
        walk(&LocalCursor::empty());
        walk(&SharedCursor::empty());
    }
}
