//! Batches: a typed front over a run of slots, for code that knows how many
//! boxes of one type it is about to make.

use core::fmt;
use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::base::class::{self, class_of, NO_CLASS};
use crate::front::probe::is_active;
use crate::front::settings::warn_not_installed;
use crate::heap::queues::give_back;
use crate::heap::runs;
use crate::heap::this_thread;
use crate::heap::thread;
use crate::memory::cursor::box_in_slot;
use crate::memory::region::frame_base;
use crate::memory::types::{OwnedHeap, Run, Tally, NO_HEAP};

/// Slots for about `capacity` boxes of `T`, reserved from one span in one
/// call. Each [`alloc`](Batch::alloc) returns a real `Box<T>` that can be
/// moved to any thread, freed at any time, turned into `Box<dyn Trait>`,
/// pinned, leaked or round-tripped through `Box::into_raw`.
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
/// A batch is a run of `T`'s size class, the same walk a scope's run makes
/// for every allocation it serves: a pointer bump through a fresh stretch, then a
/// pop from a list of recycled slots, with no atomic instruction, no
/// thread-local lookup and no call. The first refill asks for the capacity
/// (up to a span's slots), each later one for twice the last, as a scope's
/// runs do. Nothing is reserved before the first `alloc`; what the batch
/// did not hand out goes back when it drops. When [`BatchAlloc`] is not the
/// global allocator, or no size class serves `T` (zero-sized, aligned past
/// a page, larger than the largest class), `alloc` is `Box::new`.
///
/// [`BatchAlloc`]: crate::BatchAlloc
pub struct Batch<T> {
    run: Run,
    // A batch makes boxes of T but holds no T.
    _boxes: PhantomData<fn(T) -> Box<T>>,
}

impl<T> Batch<T> {
    /// A batch for a loop whose trip count is unknown: the first refill
    /// asks for a few slots, each later one for twice the last.
    #[inline]
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// A batch for about `capacity` allocations (0 when unknown). A hint,
    /// not a promise: the first refill asks for it, up to a span's slots,
    /// and later ones double.
    #[inline]
    pub fn with_capacity(capacity: usize) -> Self {
        let size = const { stride_of::<T>() } as u32;
        let want = u32::try_from(capacity).unwrap_or(u32::MAX);
        Batch {
            run: Run::new(size, want),
            _boxes: PhantomData,
        }
    }

    /// Moves `value` into a slot of this batch and returns it boxed.
    #[inline]
    pub fn alloc(&mut self, value: T) -> Box<T> {
        // The write is in both branches, so that the bump falls straight
        // through to its own copy (one jump less per box).
        // SAFETY: the batch's run is its own, reached through `&mut self`.
        if let Some(slot) = unsafe { runs::take(&self.run, const { stride_of::<T>() }) } {
            // SAFETY: a slot of this batch's run, of `T`'s class, handed
            // out once (`take` cleared its freed mark), reserved only
            // because `BatchAlloc` is the global allocator.
            return unsafe { box_in_slot(slot, value) };
        }
        match self.refill() {
            // SAFETY: as above, a slot of the run's new reservation.
            Some(slot) => unsafe { box_in_slot(slot, value) },
            None => Box::new(value),
        }
    }

    /// Reserves the next slots of `T`'s class and takes the first; `None`
    /// for a type no class serves, without `BatchAlloc`, or with no memory.
    #[cold]
    #[inline(never)]
    fn refill(&mut self) -> Option<NonNull<u8>> {
        let class = const { class_of::<T>() };
        if class == NO_CLASS {
            return None;
        }
        // SAFETY: the batch's run is its own, reached through `&mut self`.
        unsafe { runs::next_slot(batch_heap()?, &self.run, class, Tally::Batch) }
    }
}

/// This thread's heap, made on first use (once per thread) if `BatchAlloc`
/// serves the program; `None` otherwise or on an exiting thread.
#[inline(always)]
fn batch_heap() -> Option<OwnedHeap> {
    match this_thread::current() {
        NO_HEAP => first_heap(),
        // SAFETY: what `current` returned on this thread, not `NO_HEAP`.
        heap => Some(unsafe { this_thread::owned(heap) }),
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

/// The slot size of `T`'s class (0 when no class serves `T`).
const fn stride_of<T>() -> usize {
    match class_of::<T>() {
        NO_CLASS => 0,
        class => class::CLASSES[class as usize].size as usize,
    }
}

impl<T> Default for Batch<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Drop for Batch<T> {
    /// Gives back what the batch did not hand out, on whichever thread it
    /// drops: one test when its run is used up, as it is after most loops.
    #[inline]
    fn drop(&mut self) {
        if !self.run.cursor.is_used_up() {
            self.give_back_unused();
        }
    }
}

impl<T> Batch<T> {
    #[cold]
    #[inline(never)]
    fn give_back_unused(&mut self) {
        let base = frame_base(self.run.cursor.frame());
        if let Some(unused) = self.run.cursor.take_unused(base, self.run.size as usize) {
            // SAFETY: the run's slots were reserved for this batch, are
            // still linked as the reservation handed them over, and were
            // never handed out.
            unsafe { give_back(this_thread::current(), unused, Tally::Batch) };
        }
    }
}

impl<T> fmt::Debug for Batch<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batch")
            .field(
                "ready_slots",
                &self.run.cursor.unused(self.run.size as usize),
            )
            .field(
                "next_refill",
                &self.run.want.load(core::sync::atomic::Ordering::Relaxed),
            )
            .finish()
    }
}
