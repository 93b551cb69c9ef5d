//! Batch scopes: while an annotated loop runs, this thread allocates from
//! its heap's runs.
//!
//! The outermost `#[batch_alloc]` loop running on a thread opens a scope
//! when its first iteration starts; annotated loops that run inside it, in
//! the same function or in functions it calls, recursively, join it and
//! cost one thread-local read. The scope closes when the loop that opened
//! it ends, by any exit: [`Scope`] is a guard whose drop restores the state
//! it found. While a scope is open, annotated `Box::new` sites take slots
//! from the runs with the class known at compile time ([`boxed`]), and, if
//! the scope captures, every allocation the runtime can serve goes there
//! too (see `runs.rs`). A scope is a property of a thread: it never serves
//! another thread, and a loop that awaits closes it before each `.await`
//! ([`Scope::suspend`]) and opens it again after ([`Scope::resume`]), since
//! the future may move and other tasks run on the thread meanwhile.

use core::sync::atomic::AtomicU8;

use crate::class::{class_of, NO_CLASS};
use crate::global::is_active;
use crate::heap::{self, scope_state_for, ScopeState, NO_SCOPE};
use crate::link::box_in_slot;
use crate::runs::alloc_in_scope;
use crate::sync::Ordering;

/// Whether scopes capture every allocation they can, or only annotated
/// `Box::new`s; see [`set_capture`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Capture {
    /// Every allocation the runtime can serve while a scope is open:
    /// strings, vectors and their growth, `Rc`/`Arc`, maps, and whatever
    /// code called from the loop allocates. The default.
    All,
    /// Only the annotated `Box::new` sites; everything else goes to the
    /// inner allocator, as without a scope.
    Boxes,
}

const CAPTURE_UNSET: u8 = 0;
const CAPTURE_ALL: u8 = 1;
const CAPTURE_BOXES: u8 = 2;

static CAPTURE: AtomicU8 = AtomicU8::new(CAPTURE_UNSET);

/// Sets, for the whole process, what batch scopes opened from now on
/// capture. Without a call, the environment variable `BATCH_ALLOC_CAPTURE`
/// decides (`boxes` for [`Capture::Boxes`]), and otherwise scopes capture
/// everything. Functions annotated `#[batch_alloc(boxes)]` open no scope at
/// all, whatever this says.
pub fn set_capture(capture: Capture) {
    let code = match capture {
        Capture::All => CAPTURE_ALL,
        Capture::Boxes => CAPTURE_BOXES,
    };
    CAPTURE.store(code, Ordering::Relaxed);
}

/// What batch scopes capture; see [`set_capture`].
pub fn capture() -> Capture {
    let code = match CAPTURE.load(Ordering::Relaxed) {
        CAPTURE_UNSET => {
            let from_env = match std::env::var_os("BATCH_ALLOC_CAPTURE") {
                Some(value) if value == "boxes" => CAPTURE_BOXES,
                _ => CAPTURE_ALL,
            };
            // Another thread's `set_capture` wins over the environment.
            match CAPTURE.compare_exchange(
                CAPTURE_UNSET,
                from_env,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => from_env,
                Err(set) => set,
            }
        }
        code => code,
    };
    match code {
        CAPTURE_BOXES => Capture::Boxes,
        _ => Capture::All,
    }
}

/// A loop's hold on this thread's batch scope: what `#[batch_alloc]`
/// declares just outside each annotated loop. Not public API.
///
/// It does nothing until the loop's first iteration calls [`enter`]
/// (Scope::enter), so a loop that runs zero times costs nothing; then it
/// opens a scope, or joins the one already open, and its drop puts back
/// what it found.
#[doc(hidden)]
#[derive(Debug)]
pub struct Scope {
    /// The scope state to put back, once opened.
    found: ScopeState,
    /// `IDLE`, `JOINED` or `OPENED`.
    held: u8,
}

const IDLE: u8 = 0;
const JOINED: u8 = 1;
const OPENED: u8 = 2;

// SAFETY: the guard holds no reference: `found` is a scope state to put
// back on the thread that opened it, and an async loop suspends (puts it
// back) before every await, so a guard that moves between threads with its
// future is idle whenever it moves.
unsafe impl Send for Scope {}
// SAFETY: a shared reference gives access to nothing.
unsafe impl Sync for Scope {}

impl Scope {
    /// A guard that holds nothing yet.
    #[inline(always)]
    pub const fn new() -> Scope {
        Scope {
            found: NO_SCOPE,
            held: IDLE,
        }
    }

    /// Called at the start of every iteration: opens or joins this
    /// thread's scope the first time.
    #[inline(always)]
    pub fn enter(&mut self) {
        if self.held == IDLE {
            self.open_or_join();
        }
    }

    #[inline]
    fn open_or_join(&mut self) {
        let found = heap::scope_state();
        if found != NO_SCOPE {
            self.held = JOINED;
            return;
        }
        self.open();
    }

    #[cold]
    #[inline(never)]
    fn open(&mut self) {
        // A loop whose scope cannot open (no `BatchAlloc`, no region, the
        // thread exiting) runs as written; it tries again next time.
        self.held = JOINED;
        if !is_active() {
            return;
        }
        let Some(heap) = heap::current_or_init() else {
            return;
        };
        self.found = NO_SCOPE;
        heap::set_scope_state(scope_state_for(heap, capture() == Capture::All));
        self.held = OPENED;
    }

    /// Before an `.await`: closes the scope if this guard opened it, and
    /// forgets it either way, so that nothing of this thread's scope is held
    /// while the future is suspended.
    #[inline]
    pub fn suspend(&mut self) {
        if self.held == OPENED {
            heap::set_scope_state(self.found);
        }
        self.held = IDLE;
    }

    /// After an `.await`: opens or joins the scope of whichever thread the
    /// future now runs on.
    #[inline]
    pub fn resume(&mut self) {
        self.enter();
    }
}

impl Default for Scope {
    fn default() -> Self {
        Scope::new()
    }
}

impl Drop for Scope {
    #[inline(always)]
    fn drop(&mut self) {
        if self.held == OPENED {
            heap::set_scope_state(self.found);
        }
    }
}

/// Whether a batch scope is open on this thread, and whether it captures:
/// `None`, `Some(false)` or `Some(true)`. For tests and diagnostics; not
/// public API.
#[doc(hidden)]
pub fn scope_on_this_thread() -> Option<bool> {
    let state = heap::scope_state();
    (state != NO_SCOPE).then(|| heap::captures(state))
}

/// What `#[batch_alloc]` makes of `Box::new(value)` in a scoped function:
/// a slot of `T`'s class from the open scope's run, or `Box::new` when no
/// scope is open or `T` is not batched. Not public API.
#[doc(hidden)]
#[inline(always)]
pub fn boxed<T>(value: T) -> Box<T> {
    let state = heap::scope_state();
    let class = const { class_of::<T>() };
    if state != NO_SCOPE && class != NO_CLASS {
        if let Some(slot) = alloc_in_scope(state, class) {
            // SAFETY: a slot of `T`'s class, reserved to this thread's scope,
            // never handed out, its mark cleared; a scope opens only when
            // `BatchAlloc` is the global allocator.
            return unsafe { box_in_slot(slot, value) };
        }
    }
    Box::new(value)
}
