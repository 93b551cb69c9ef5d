//! Whether `BatchAlloc` is the global allocator: the first caller
//! allocates a probe layout and watches for the wrapper to see it (the way
//! mimalloc's `mi_is_redirected` answers from `init.c`, apart from the
//! entry points).

use core::alloc::Layout;
use core::cell::Cell;
use core::sync::atomic::AtomicU8;

use crate::base::sync::Ordering;

/// The layout `is_active` allocates to find out whether `BatchAlloc` serves
/// the global allocator. Any `alloc_zeroed` of this size costs a call and
/// a thread-local read more; other sizes, one comparison.
const PROBE: Layout = match Layout::from_size_align(3, 64) {
    Ok(layout) => layout,
    Err(_) => panic!("invalid probe layout"),
};

const UNKNOWN: u8 = 0;
const ACTIVE: u8 = 1;
const INACTIVE: u8 = 2;

static INSTALLED: AtomicU8 = AtomicU8::new(UNKNOWN);

thread_local! {
    /// 1 while this thread probes, 2 once a `BatchAlloc` saw the probe.
    static PROBE_STATE: Cell<u8> = const { Cell::new(0) };
}

/// Whether `layout` is the probe's: the one `alloc_zeroed` call that
/// costs a thread-local read more.
#[inline(always)]
pub(crate) fn is_probe(layout: Layout) -> bool {
    layout.size() == PROBE.size() && layout.align() == PROBE.align()
}

/// Whether `layout` may be the probe's, by its size alone: the test every
/// `alloc_zeroed` makes, one comparison, before the out-of-line
/// [`is_probe`].
#[inline(always)]
pub(crate) fn may_be_probe(layout: Layout) -> bool {
    layout.size() == PROBE.size()
}

/// Called by the wrapper's `alloc_zeroed` for the probe layout: the probe
/// under way on this thread, if any, went through a `BatchAlloc`.
#[cold]
pub(crate) fn observe_probe() {
    let _ = PROBE_STATE.try_with(|state| {
        if state.get() == 1 {
            state.set(2);
        }
    });
}

/// Whether [`BatchAlloc`](crate::BatchAlloc) is the global allocator. When it is not, batches
/// hand out plain `Box::new` boxes: correct, just not faster, and no span
/// slot ever reaches an allocator that did not make it.
pub fn is_active() -> bool {
    match INSTALLED.load(Ordering::Relaxed) {
        ACTIVE => true,
        INACTIVE => false,
        _ => probe(),
    }
}

#[cold]
fn probe() -> bool {
    PROBE_STATE.with(|state| state.set(1));
    // SAFETY: the layout has a non-zero size. `black_box` keeps the
    // optimiser from deleting the unused allocation, and the probe with it.
    let block = std::hint::black_box(unsafe { std::alloc::alloc_zeroed(PROBE) });
    if !block.is_null() {
        // SAFETY: allocated just above with the same layout.
        unsafe { std::alloc::dealloc(block, PROBE) };
    }
    let seen = PROBE_STATE.with(|state| state.replace(0)) == 2;
    INSTALLED.store(if seen { ACTIVE } else { INACTIVE }, Ordering::Relaxed);
    seen
}
