//! This thread's heap state: which record is its heap, whether a scope is
//! open on it, and whether it has retired. How a heap is made,
//! trimmed and retired is `thread.rs`.
//!
//! The thread-locals the allocator path reads (the current record, the
//! scope state, whether the heap has retired) have `const` initialisers and
//! no destructor, so `dealloc` may read them at any point of a thread's
//! life, other thread-locals' destructors included. Nothing initialises
//! them lazily (a forked child finds them as the forking thread had them),
//! and with no destructor they are never destroyed: `try_with` is used for
//! its lack of a panic path, and the setters that drop its result drop an
//! `Ok`.

use core::cell::Cell;
use core::ptr;

use crate::memory::types::{HeapRecord, OwnedHeap, NO_HEAP};

thread_local! {
    static CURRENT: Cell<*mut HeapRecord> = const { Cell::new(NO_HEAP) };
    static SCOPE: Cell<ScopeState> = const { Cell::new(ScopeState::UNKNOWN) };
    /// The heap has retired: the thread is exiting, and makes no other.
    static EXITED: Cell<bool> = const { Cell::new(false) };
}

/// Whether a scope is open on a thread, and how, in one word, so that
/// the allocator path reads one thread-local and opening a scope writes
/// one: the thread's heap record (whose runs a scope allocates from; 64-byte
/// aligned, so its six low bits are free) with flags:
///
/// ```text
/// null                          not known yet: the first scope finds out
/// DISABLED                      scopes never open here (no BatchAlloc, no
///                               region, the thread exiting)
/// heap | READY                  no scope open; one can open at once
/// heap | READY | OPEN           a scope is open: the runs serve every
///                               allocation the runtime can serve
/// ```
///
/// A `#[repr(transparent)]` word: every test and change of the flags is a
/// method here, and compiles to the same bit operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct ScopeState(*mut HeapRecord);

/// A scope is open.
const OPEN: usize = 2;
/// The heap is known: a scope can open.
const READY: usize = 4;
/// Scopes never open on this thread.
const DISABLED: usize = 8;
const FLAGS: usize = 63;

impl ScopeState {
    /// Not known yet.
    pub(crate) const UNKNOWN: ScopeState = ScopeState(ptr::null_mut());

    /// The state of a thread where scopes never open.
    #[inline(always)]
    pub(crate) fn disabled() -> ScopeState {
        ScopeState(ptr::without_provenance_mut(DISABLED))
    }

    /// The state of a thread with `heap` and no scope open.
    #[inline(always)]
    pub(crate) fn ready(heap: OwnedHeap) -> ScopeState {
        ScopeState(heap.as_ptr().map_addr(|a| a | READY))
    }

    /// Whether a scope is open.
    #[inline(always)]
    pub(crate) fn is_open(self) -> bool {
        self.0.addr() & OPEN != 0
    }

    /// Whether entering a scope joins rather than opens one: a scope is
    /// open, or none can open on this thread.
    #[inline(always)]
    pub(crate) fn joins(self) -> bool {
        self.0.addr() & (OPEN | DISABLED) != 0
    }

    /// Whether the heap is known, so that a scope can open at once.
    #[inline(always)]
    pub(crate) fn is_ready(self) -> bool {
        self.0.addr() & READY != 0
    }

    /// This state with a scope open.
    #[inline(always)]
    pub(crate) fn opened(self) -> ScopeState {
        ScopeState(self.0.map_addr(|a| a | OPEN))
    }

    /// This state with no scope open.
    #[inline(always)]
    pub(crate) fn closed(self) -> ScopeState {
        ScopeState(self.0.map_addr(|a| a & !OPEN))
    }

    /// The heap an open scope's state names.
    #[inline(always)]
    pub(crate) fn heap(self) -> *mut HeapRecord {
        self.0.map_addr(|a| a & !FLAGS)
    }

    /// The handle of the heap a ready or open state names: this thread's,
    /// since only [`ScopeState::ready`] names one, from a handle, and a
    /// state never leaves its thread (a raw pointer: not `Send`).
    ///
    /// # Safety
    /// - The state is ready or open (it names a heap), and was read on this
    ///   thread (the heap retires only after the state is disabled).
    #[inline(always)]
    pub(crate) unsafe fn owned_heap(self) -> OwnedHeap {
        // SAFETY: records are never freed, and the caller's contract makes
        // this one this thread's, not retired.
        unsafe { OwnedHeap::new(&*self.heap()) }
    }
}

/// This thread's heap record, or [`NO_HEAP`] before its first refill and
/// after it exits. Safe in the allocator path at any point of a thread's
/// life.
#[inline(always)]
pub(crate) fn current() -> *mut HeapRecord {
    CURRENT.try_with(Cell::get).unwrap_or(NO_HEAP)
}

/// The handle of this thread's heap, `None` before its first refill and
/// after it exits.
#[inline(always)]
pub(crate) fn current_owned() -> Option<OwnedHeap> {
    match current() {
        NO_HEAP => None,
        // SAFETY: what `current` returned on this thread, not `NO_HEAP`.
        heap => Some(unsafe { owned(heap) }),
    }
}

/// The handle of `heap`, this thread's heap as [`current`] returned it.
///
/// # Safety
/// - `heap` is what `current` returned on this thread, not [`NO_HEAP`],
///   and the thread has not retired its heap since.
#[inline(always)]
pub(crate) unsafe fn owned(heap: *mut HeapRecord) -> OwnedHeap {
    // SAFETY: records are never freed; the caller's contract makes this one
    // this thread's, not retired.
    unsafe { OwnedHeap::new(&*heap) }
}

/// This thread's scope state (see [`ScopeState`]). Safe in the allocator
/// path.
#[inline(always)]
pub(crate) fn scope_state() -> ScopeState {
    SCOPE.try_with(Cell::get).unwrap_or(ScopeState::UNKNOWN)
}

/// Sets this thread's scope state. A state naming a heap must name this
/// thread's own, which exists until the thread exits (and the exit disables
/// scopes).
#[inline(always)]
pub(crate) fn set_scope_state(state: ScopeState) {
    let _ = SCOPE.try_with(|scope| scope.set(state));
}

/// Makes `heap` this thread's heap record (or [`NO_HEAP`]). False when the
/// thread-locals are gone: the thread is exiting.
#[inline]
pub(crate) fn set_current(heap: *mut HeapRecord) -> bool {
    CURRENT.try_with(|current| current.set(heap)).is_ok()
}

/// Whether this thread's heap has retired, or its thread-locals are gone:
/// it makes no other.
#[inline]
pub(crate) fn has_retired() -> bool {
    EXITED.try_with(Cell::get).unwrap_or(true)
}

/// Records that this thread's heap has retired.
#[inline]
pub(crate) fn mark_retired() {
    let _ = EXITED.try_with(|exited| exited.set(true));
}
