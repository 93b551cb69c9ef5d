//! Batches: loop-scoped runs of slots, handed out as real `Box<T>`s.

use core::fmt;
use core::marker::PhantomData;
use core::ptr::{self, NonNull};

use crate::class::{self, class_of, stride_of, NO_CLASS};
use crate::config::{FIRST_REFILL, TINY_LOOP};
use crate::cursor::{box_in_slot, LocalCursor};
use crate::growth::{default_growth_code, Growth};
use crate::heap;
use crate::link::{self, read_link};
use crate::probe::is_active;
use crate::queues::give_back;
use crate::region::{self, frame_base};
use crate::reserve::{reserve, reserve_one};
use crate::settings::warn_not_installed;
use crate::thread;
use crate::types::{OwnedHeap, Tally, NO_HEAP};

/// A loop-scoped batch of `T` slots. Each [`alloc`](Batch::alloc) returns a
/// real `Box<T>` that can be moved to any thread, freed at any time, turned
/// into `Box<dyn Trait>`, pinned, leaked or round-tripped through
/// `Box::into_raw`.
///
/// ```
/// use batch_alloc_rt::{Batch, BatchAlloc};
///
/// #[global_allocator]
/// static GLOBAL: BatchAlloc = BatchAlloc::system();
///
/// let words = ["alpha", "beta", "gamma"];
/// let mut batch = Batch::with_capacity(words.len());
/// let boxes: Vec<Box<String>> = words.iter().map(|w| batch.alloc(w.to_string())).collect();
/// drop(batch); // unused slots go back; the boxes live on
/// assert_eq!(*boxes[1], "beta");
/// ```
///
/// The fast path is a pointer bump, or a pop from a list of recycled slots:
/// no atomic instruction, no thread-local lookup, no call. When the
/// reservation is used up, one call reserves the next from the current
/// thread's heap.
/// Nothing is reserved before the first `alloc`, and a loop of one or two
/// allocations never reserves slots ahead (a refill costs more than so short a
/// loop would save): the first two allocations of a batch hinted at two or
/// fewer, or not hinted, each reserve one slot of the current thread's
/// heap and hand it out at once, a little cheaper than a
/// `Box::new` from the system allocator, and nothing stays reserved. When
/// [`BatchAlloc`] is not the global allocator, or `T` is not batched
/// (zero-sized, aligned past a page, larger than the largest size class),
/// `alloc` is `Box::new`.
///
/// [`BatchAlloc`]: crate::BatchAlloc
pub struct Batch<T> {
    raw: ErasedBatch,
    // A batch makes boxes of T but holds no T.
    _boxes: PhantomData<fn(T) -> Box<T>>,
}

impl<T> Batch<T> {
    /// A batch for a loop whose trip count is unknown: refills grow by the
    /// [default growth policy](crate::set_default_growth).
    #[inline]
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// A batch for about `capacity` allocations. A hint, not a promise:
    /// refills ask for what the hint says is still to come, and grow by the
    /// batch's growth policy once it is used up.
    #[inline]
    pub fn with_capacity(capacity: usize) -> Self {
        Batch {
            raw: ErasedBatch::with_capacity(capacity),
            _boxes: PhantomData,
        }
    }

    /// Sets how refills grow once the capacity hint is used up.
    pub fn with_growth(mut self, growth: Growth) -> Self {
        self.raw.growth = growth.to_u8();
        self
    }

    /// Moves `value` into a slot of this batch and returns it boxed.
    #[inline]
    pub fn alloc(&mut self, value: T) -> Box<T> {
        let slot = match self.raw.pop(const { stride_of::<T>() }) {
            Some(slot) => slot,
            None => match self.raw.next_slot::<T>() {
                Some(slot) => slot,
                None => return Box::new(value),
            },
        };
        // SAFETY: every slot of this batch's runs belongs to `T`'s class.
        unsafe { hand_out(slot, value) }
    }
}

impl<T> Default for Batch<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> fmt::Debug for Batch<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batch").field("raw", &self.raw).finish()
    }
}

/// [`ErasedBatch::growth`] before the batch has read the default policy:
/// no policy's code (they start at 1), and zero, as a new batch's fields
/// mostly are.
const DEFAULT_GROWTH: u8 = 0;

/// A batch whose slot type is fixed by its first allocation rather than by
/// its own type, so that a loop can hold one without naming (or borrowing
/// through) the boxed type. The `#[batch_alloc]` attribute declares these.
///
/// A new batch is all zeros but for `hint` and the cursor's count, which
/// come first, so that the zeros after them are whole stores: a loop that
/// never reserves (one of one or two boxes, a slot at a time) pays for
/// little more than those.
#[doc(hidden)]
#[repr(C)]
pub struct ErasedBatch {
    /// Slots the trip-count hint still expects; 0 for a tiny hint (a loop
    /// that outruns its first allocations outran the hint too).
    hint: usize,
    /// Where the walk through the current reservation stands. Once it is
    /// used up, its list count, while negative, is minus the allocations
    /// still to be made without a reservation before the next refill: a
    /// tiny loop's first ones (from `-TINY_LOOP`, a lone slot each), or all
    /// of them once the batch cannot reserve (from `i32::MIN`, plain
    /// boxes). Those are due only once the cursor is used up, so the test
    /// that finds its list empty finds them too.
    cursor: LocalCursor,
    /// First byte of the frame of the current reservation; null exactly
    /// while there is none.
    base: *mut u8,
    /// The link key of the current reservation's span.
    key: u32,
    /// Refills made, for the per-site report.
    refills: u32,
    /// Size of the last refill asked for without a hint: at most a span's
    /// slots, which a `u16` holds, so that a new batch's zeros, from the
    /// cursor's frame to here, are 48 bytes: three whole stores.
    last_want: u16,
    /// Size class of the current reservation's slots; 0 before the first,
    /// which does no harm: slots are taken only while a stretch or list is
    /// ready, and only a refill of the class makes them ready.
    class: u8,
    /// The [`Growth`] policy, encoded; [`DEFAULT_GROWTH`] until the first
    /// refill that needs one reads the default.
    growth: u8,
}

// SAFETY: the pointers name slots reserved to this batch alone. Any thread
// may hand them out, and ending the reservation on another thread returns
// the unused ones through the span's remote list.
unsafe impl Send for ErasedBatch {}
// SAFETY: a shared reference gives access to nothing but `Debug`.
unsafe impl Sync for ErasedBatch {}

impl ErasedBatch {
    /// A batch for about `capacity` allocations (0 when unknown).
    #[inline]
    pub fn with_capacity(capacity: usize) -> Self {
        let tiny = capacity <= TINY_LOOP;
        let cursor = LocalCursor::empty();
        if tiny {
            cursor.set_list_count(-(TINY_LOOP as i32));
        }
        ErasedBatch {
            hint: if tiny { 0 } else { capacity },
            cursor,
            base: ptr::null_mut(),
            key: 0,
            refills: 0,
            last_want: 0,
            class: 0,
            growth: DEFAULT_GROWTH,
        }
    }

    /// Moves `value` into a slot of this batch and returns it boxed.
    #[inline]
    pub fn alloc<T>(&mut self, value: T) -> Box<T> {
        match self.try_alloc(value) {
            Ok(boxed) => boxed,
            Err(value) => Box::new(value),
        }
    }

    /// Moves `value` into a slot of this batch (or, for a tiny loop's first
    /// allocations, a lone slot), or hands it back when this
    /// allocation is to be a plain box (a type no class serves, no
    /// `BatchAlloc`, no memory): what [`alloc`](ErasedBatch::alloc) does, for
    /// the per-site report, which wants to know.
    #[inline]
    pub fn try_alloc<T>(&mut self, value: T) -> Result<Box<T>, T> {
        let ready = if self.class == const { class_of::<T>() } {
            self.pop(const { stride_of::<T>() })
        } else {
            None
        };
        let slot = match ready {
            Some(slot) => slot,
            None => match self.next_slot::<T>() {
                Some(slot) => slot,
                None => return Err(value),
            },
        };
        // SAFETY: the reservation's class is `T`'s class: `pop` ran only for one of
        // that class, and `next_slot` reserves one.
        Ok(unsafe { hand_out(slot, value) })
    }

    /// Refills this batch has made.
    pub fn refills(&self) -> u32 {
        self.refills
    }

    /// The next slot of the current reservation.
    #[inline(always)]
    fn pop(&mut self, stride: usize) -> Option<NonNull<u8>> {
        self.cursor.take(stride, |slot| {
            // SAFETY: a recycled slot of the reservation, linked when it was
            // freed; the link of the last one is read but not followed.
            let next = unsafe { read_link(slot, self.key) };
            self.base.wrapping_add(next as usize)
        })
    }

    /// Once the current reservation is used up: while the batch is not to reserve
    /// yet, what [`unreserved_slot`](Self::unreserved_slot) gives,
    /// otherwise a slot of `T`'s class from a new reservation (`None` if
    /// that fails).
    #[inline]
    fn next_slot<T>(&mut self) -> Option<NonNull<u8>> {
        if self.cursor.list_count() < 0 {
            return self.unreserved_slot::<T>();
        }
        self.refill(const { class_of::<T>() }, const { stride_of::<T>() })
    }

    /// An allocation made while the batch is not to reserve: a tiny loop's
    /// first ones take a lone slot of `T`'s class (`None` without
    /// `BatchAlloc` or memory); after a failed refill, `None`, for a plain
    /// box.
    #[inline(always)]
    fn unreserved_slot<T>(&mut self) -> Option<NonNull<u8>> {
        let due = self.cursor.list_count();
        let tiny = due >= -(TINY_LOOP as i32);
        self.cursor.set_list_count(due + 1);
        let class = const { class_of::<T>() };
        if tiny && class != NO_CLASS {
            return lone_slot(class);
        }
        None
    }

    /// Ends the current reservation and reserves the next, of `class`.
    #[cold]
    #[inline(never)]
    fn refill(&mut self, class: u8, stride: usize) -> Option<NonNull<u8>> {
        self.settle();
        self.refills = self.refills.saturating_add(1);
        let heap = match class != NO_CLASS {
            true => batch_heap(),
            false => None,
        };
        let reservation = if let Some(heap) = heap {
            let known = self.hint > 0;
            let want = self.next_want(class);
            reserve(heap, class, want, known, Tally::Batch)
        } else {
            None
        };
        let Some(reservation) = reservation else {
            self.cursor.set_list_count(i32::MIN);
            return None;
        };
        let base = frame_base(reservation.frame);
        self.key = link::key(region::span(reservation.frame));
        self.base = base;
        self.class = class;
        self.cursor.install(base, &reservation);
        self.hint = self.hint.saturating_sub(reservation.len as usize);
        self.pop(stride)
    }

    fn next_want(&mut self, class: u8) -> u32 {
        let span_slots = class::shape(class).slots;
        let want = if self.hint > 0 {
            self.hint.min(u32::MAX as usize) as u32
        } else if self.last_want == 0 {
            FIRST_REFILL as u32
        } else {
            if self.growth == DEFAULT_GROWTH {
                self.growth = default_growth_code();
            }
            let next = Growth::from_u8(self.growth).next(usize::from(self.last_want));
            next.min(u32::MAX as usize) as u32
        };
        let want = want.clamp(1, span_slots);
        self.last_want = want.min(u32::from(u16::MAX)) as u16;
        want
    }

    /// Ends the current reservation, giving back what it did not hand out.
    /// One test while nothing is reserved (`base` is null exactly then), so
    /// that a batch that never reserves costs its drop one comparison.
    #[inline]
    fn settle(&mut self) {
        if !self.base.is_null() {
            self.end_reservation();
        }
    }

    #[cold]
    #[inline(never)]
    fn end_reservation(&mut self) {
        // A used-up cursor needs nothing back (and is as good as empty to
        // the next refill): asked first, so that most ends skip the class.
        if !self.cursor.is_used_up() {
            let stride = class::shape(self.class).size as usize;
            if let Some(unused) = self.cursor.take_unused(self.base, stride) {
                // SAFETY: the unused slots were never handed out and are
                // still linked as the reservation handed them over.
                unsafe { give_back(heap::current(), unused, Tally::Batch) };
            }
        }
        self.base = ptr::null_mut();
    }
}

/// One slot of `class`, reserved from this thread's heap and handed out at
/// once: what a tiny loop's first allocations take instead of a reservation of
/// their own (which would cost more than such a loop saves) or a call to
/// the inner allocator. `None` without `BatchAlloc`, on an exiting thread,
/// or with no memory. Out of line, so that the loop around a batch's fast
/// path keeps its registers.
#[inline(never)]
fn lone_slot(class: u8) -> Option<NonNull<u8>> {
    reserve_one(batch_heap()?, class)
}

/// This thread's heap, made on first use (once per thread) if `BatchAlloc`
/// serves the program; `None` otherwise or on an exiting thread.
#[inline(always)]
fn batch_heap() -> Option<OwnedHeap> {
    match heap::current() {
        NO_HEAP => first_heap(),
        // SAFETY: what `current` returned on this thread, not `NO_HEAP`.
        heap => Some(unsafe { heap::owned(heap) }),
    }
}

/// This thread's heap, made now if `BatchAlloc` serves the program.
#[cold]
#[inline(never)]
fn first_heap() -> Option<OwnedHeap> {
    match is_active() {
        true => thread::current_or_init(),
        false => {
            warn_not_installed();
            None
        }
    }
}

impl Drop for ErasedBatch {
    #[inline]
    fn drop(&mut self) {
        self.settle();
    }
}

impl fmt::Debug for ErasedBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stride = class::shape(self.class).size as usize;
        f.debug_struct("ErasedBatch")
            .field("ready_slots", &self.cursor.unused(stride))
            .field("hint", &self.hint)
            .field("growth", &Growth::from_u8(self.growth))
            .field(
                "unreserved_next",
                &self.cursor.list_count().min(0).unsigned_abs(),
            )
            .finish()
    }
}

/// Hands out `slot` as a box of `value`.
///
/// # Safety
/// - `slot` is a slot of `T`'s class (large and aligned enough for `T`),
///   reserved to the caller and never handed out before.
#[inline(always)]
unsafe fn hand_out<T>(slot: NonNull<u8>, value: T) -> Box<T> {
    // SAFETY: the slot is the caller's and at least 8 bytes long.
    unsafe { link::on_handout(slot.as_ptr()) };
    // SAFETY: as the caller promises, and this batch reserved only because
    // `BatchAlloc` is the global allocator.
    unsafe { box_in_slot(slot, value) }
}
