//! Batch scopes: while an annotated loop runs, this thread allocates from
//! its heap's runs.
//!
//! The outermost `#[batch_alloc]` loop running on a thread opens a scope as
//! it starts; annotated loops that run inside it, in the same function or in
//! functions it calls, recursively, join it, at the cost of one
//! thread-local read. The scope closes when the loop that opened
//! it ends, by any exit: [`Scope`] is a guard whose drop restores the state
//! it found. While a scope is open, annotated `Box::new` sites take slots
//! from the runs with the class known at compile time ([`box_in_scope`]), and, if
//! the scope captures, every allocation the runtime can serve goes there
//! too (see `runs.rs`). A scope is a property of a thread: it never serves
//! another thread, and a loop that awaits closes it before each `.await`
//! ([`Scope::suspend`]) and opens it again after ([`Scope::resume`]), since
//! the future may move and other tasks run on the thread meanwhile.

use core::alloc::Layout;
use core::future::Future;
use core::pin::Pin;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, AtomicUsize};
use core::task::{Context, Poll};

use crate::class::{class_of, NO_CLASS};
use crate::cursor::box_in_slot;
use crate::heap::{self, ScopeState, CAPTURING};
use crate::probe::is_active;
use crate::runs::alloc_in_scope;
use crate::settings::{settings, warn_not_installed};
use crate::sync::Ordering;
use crate::thread;

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

/// What scopes opened from now on add to the scope state: [`CAPTURING`] or
/// nothing. Read at every scope's opening, so it is the ready-made bit.
static CAPTURE_BIT: AtomicUsize = AtomicUsize::new(CAPTURING);
/// Whether the setting is decided: by [`set_capture`], or by the
/// environment at the first scope.
static CAPTURE_DECIDED: AtomicBool = AtomicBool::new(false);

/// Sets, for the whole process, what batch scopes opened from now on
/// capture. Without a call, the environment variable `BATCH_ALLOC_CAPTURE`
/// decides when the first scope opens (`boxes` for [`Capture::Boxes`]), and
/// otherwise scopes capture everything. Functions annotated
/// `#[batch_alloc(per_site)]` open no scope at all, whatever this says.
pub fn set_capture(capture: Capture) {
    let bit = match capture {
        Capture::All => CAPTURING,
        Capture::Boxes => 0,
    };
    CAPTURE_BIT.store(bit, Ordering::Relaxed);
    CAPTURE_DECIDED.store(true, Ordering::Relaxed);
}

/// What batch scopes capture; see [`set_capture`].
pub fn capture() -> Capture {
    decide_capture();
    match CAPTURE_BIT.load(Ordering::Relaxed) {
        0 => Capture::Boxes,
        _ => Capture::All,
    }
}

/// Reads the environment, once, unless [`set_capture`] came first.
fn decide_capture() {
    if CAPTURE_DECIDED.load(Ordering::Relaxed) {
        return;
    }
    let boxes = settings().capture_boxes == Some(true);
    // Another thread's `set_capture` wins over the environment.
    if CAPTURE_DECIDED
        .compare_exchange(false, true, Ordering::Relaxed, Ordering::Relaxed)
        .is_ok()
        && boxes
    {
        CAPTURE_BIT.store(0, Ordering::Relaxed);
    }
}

/// A loop's hold on this thread's batch scope: what `#[batch_alloc]`
/// declares just outside each annotated loop, and enters before the loop
/// starts. Not public API.
///
/// [`enter`](Scope::enter) opens a scope (two thread-local accesses, once
/// the thread's heap is known) or joins the one already open (one), and the
/// guard's drop closes what it opened.
#[doc(hidden)]
#[derive(Debug)]
pub struct Scope {
    /// `IDLE`, `JOINED` or `OPENED`: a byte the optimiser keeps in a
    /// register.
    held: u8,
}

const IDLE: u8 = 0;
const JOINED: u8 = 1;
const OPENED: u8 = 2;

impl Scope {
    /// A guard that holds nothing yet.
    #[inline(always)]
    pub const fn new() -> Scope {
        Scope { held: IDLE }
    }

    /// Opens or joins this thread's scope, unless the guard holds it
    /// already.
    #[inline(always)]
    pub fn enter(&mut self) {
        if self.held == IDLE {
            self.held = open_or_join();
        }
    }

    /// Before an `.await`: closes the scope if this guard opened it, and
    /// forgets it either way, so that nothing of this thread's scope is held
    /// while the future is suspended.
    #[inline]
    pub fn suspend(&mut self) {
        if self.held == OPENED {
            close();
        }
        self.held = IDLE;
    }

    /// After an `.await`: opens or joins the scope of whichever thread the
    /// future now runs on.
    #[inline]
    pub fn resume(&mut self) {
        self.enter();
    }

    /// Whether the guard opened this thread's scope (`Some(true)`), joined
    /// one or could not open one (`Some(false)`), or holds nothing yet
    /// (`None`): for the per-site report.
    pub fn opened(&self) -> Option<bool> {
        match self.held {
            IDLE => None,
            held => Some(held == OPENED),
        }
    }
}

/// Opens this thread's scope, or finds one open: returns what the guard
/// holds.
#[inline(always)]
fn open_or_join() -> u8 {
    let state = heap::scope_state();
    if state.joins() {
        return JOINED;
    }
    if state.is_ready() {
        heap::set_scope_state(state.opened(CAPTURE_BIT.load(Ordering::Relaxed)));
        return OPENED;
    }
    first_scope()
}

/// The thread's first scope: finds its heap (or finds that scopes cannot
/// open here) and opens.
#[cold]
#[inline(never)]
fn first_scope() -> u8 {
    decide_capture();
    let heap = match is_active() {
        true => thread::current_or_init(),
        false => {
            warn_not_installed();
            None
        }
    };
    match heap {
        Some(heap) => {
            heap::set_scope_state(ScopeState::ready(heap));
            open_or_join()
        }
        None => {
            // No BatchAlloc, no region, or the thread exiting: loops run as
            // written, at the cost of one thread-local read.
            heap::set_scope_state(ScopeState::disabled());
            JOINED
        }
    }
}

/// Closes the scope this thread has open.
#[inline(always)]
fn close() {
    heap::set_scope_state(heap::scope_state().closed());
}

impl Default for Scope {
    fn default() -> Self {
        Scope::new()
    }
}

/// Runs `f` inside this thread's batch scope: opens the scope if none is
/// open (and closes it when `f` returns or unwinds), or joins the one a
/// caller opened. Returns what `f` returns.
///
/// While the scope is open, every allocation on this thread that the
/// runtime has a size class for is served from the thread's runs (with
/// [`Capture::All`], the default): the strings, vectors and boxes a
/// deserializer or a parser makes, whoever wrote it. Each stays an
/// ordinary allocation, freed one by one, on any thread. Where
/// [`BatchAlloc`](crate::BatchAlloc) is not the global allocator, `f` runs
/// as it would without the call.
///
/// Opening costs a thread-local read and write, joining a read; nothing is
/// allocated.
#[inline]
pub fn scope<R>(f: impl FnOnce() -> R) -> R {
    let mut guard = Scope::new();
    guard.enter();
    f()
}

/// A future whose every poll runs inside the batch scope of the thread that
/// polls it: what `#[batch_alloc]` makes of an `async fn`'s body and of an
/// `async` block. Not public API.
///
/// A poll opens or joins the scope through the guard `enter` returns, and
/// the guard closes what it opened before the poll returns, so no scope is
/// held while the future is suspended, whatever it awaits and wherever the
/// awaits are (inside macros included), and each poll is served on its own
/// thread.
#[doc(hidden)]
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct ScopedFuture<F, E> {
    future: F,
    enter: E,
}

impl<F, E> ScopedFuture<F, E> {
    /// `future`, each of whose polls runs while the guard `enter()` returns
    /// is alive.
    #[inline]
    pub const fn new(future: F, enter: E) -> Self {
        ScopedFuture { future, enter }
    }
}

impl<F: Future, E: FnMut() -> G, G> Future for ScopedFuture<F, E> {
    type Output = F::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `future` is pinned structurally and `enter` is not: the
        // type has no `Drop` impl and is `Unpin` only when both fields are
        // (the auto trait), nothing moves `future` out of a pinned
        // `ScopedFuture`, and `enter` is only called through `&mut`.
        let this = unsafe { self.get_unchecked_mut() };
        let _guard = (this.enter)();
        // SAFETY: as above: `future` stays where it is until it is dropped.
        let future = unsafe { Pin::new_unchecked(&mut this.future) };
        future.poll(cx)
    }
}

/// A guard that has entered this thread's scope: for [`ScopedFuture`]
/// without the per-site report. Not public API.
#[doc(hidden)]
#[inline]
pub fn entered() -> Scope {
    let mut guard = Scope::new();
    guard.enter();
    guard
}

impl Drop for Scope {
    #[inline(always)]
    fn drop(&mut self) {
        if self.held == OPENED {
            close();
        }
    }
}

/// Runs `f` with this thread's scope, if one is open, set aside: what `f`
/// allocates goes to the inner allocator and is not counted as scoped. For
/// the crate's own bookkeeping inside a user's loop (the per-site report);
/// not public API.
#[doc(hidden)]
pub fn outside_scope<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(ScopeState);
    impl Drop for Restore {
        fn drop(&mut self) {
            heap::set_scope_state(self.0);
        }
    }
    let state = heap::scope_state();
    let _restore = Restore(state);
    heap::set_scope_state(state.closed());
    f()
}

/// Whether entering a scope on this thread would join one rather than open
/// one: a scope is open, or scopes cannot open here. What an annotated
/// function tests before running its body with no guard; not public API.
#[doc(hidden)]
#[inline(always)]
pub fn scope_would_join() -> bool {
    heap::scope_state().joins()
}

/// Whether a batch scope is open on this thread, and whether it captures:
/// `None`, `Some(false)` or `Some(true)`. For tests and diagnostics; not
/// public API.
#[doc(hidden)]
pub fn scope_on_this_thread() -> Option<bool> {
    let state = heap::scope_state();
    state.is_open().then(|| state.captures())
}

/// A slot of `T`'s class from this thread's open scope: `None` if no scope
/// is open, `T` is not batched or there is no memory.
#[inline(always)]
fn slot_in_scope<T>() -> Option<NonNull<u8>> {
    let state = heap::scope_state();
    let class = const { class_of::<T>() };
    if state.is_open() && class != NO_CLASS {
        return alloc_in_scope(state, class);
    }
    None
}

/// `value` boxed in a slot of the open scope, or handed back if no scope is
/// open, `T` is not batched or there is no memory: what [`box_in_scope`] does, for
/// the per-site report. Not public API.
#[doc(hidden)]
#[cfg_attr(debug_assertions, inline)]
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn try_box_in_scope<T>(value: T) -> Result<Box<T>, T> {
    match slot_in_scope::<T>() {
        // SAFETY: as in `box_in_scope`.
        Some(slot) => Ok(unsafe { box_in_slot(slot, value) }),
        None => Err(value),
    }
}

/// Whether the runtime serves `T` at all (a size class fits it): for the
/// per-site report. Not public API.
#[doc(hidden)]
pub const fn batchable<T>() -> bool {
    class_of::<T>() != NO_CLASS
}

/// What `#[batch_alloc]` makes of `Box::new(value)` in a scoped function:
/// a slot of `T`'s class from the open scope's run, or `Box::new` when no
/// scope is open or `T` is not batched. Not public API.
#[doc(hidden)]
#[cfg_attr(debug_assertions, inline)]
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn box_in_scope<T>(value: T) -> Box<T> {
    if size_of::<T>() == 0 {
        return Box::new(value);
    }
    let memory = match slot_in_scope::<T>() {
        Some(slot) => slot,
        None => plain_memory(Layout::new::<T>()),
    };
    // SAFETY: a slot of `T`'s class, reserved to this thread's scope, never
    // handed out, its mark cleared (a scope opens only when `BatchAlloc`
    // is the global allocator, whose `dealloc` frees slots); or a block the
    // global allocator made for `Layout::new::<T>()`, as `Box::new` takes.
    unsafe { box_in_slot(memory, value) }
}

/// The memory `Box::new` would take for `layout`, from the global
/// allocator, failing as it fails: out of line and not generic, since the
/// whole of the global allocator's `alloc`, inlined at every boxing site,
/// made a recursive parser take 1.9 times the stack per level
/// (tests/macro/transparent/stack.rs).
#[cold]
#[inline(never)]
fn plain_memory(layout: Layout) -> NonNull<u8> {
    // SAFETY: `layout` is a sized type's, of non-zero size (zero-sized
    // types never get here).
    let block = unsafe { std::alloc::alloc(layout) };
    match NonNull::new(block) {
        Some(block) => block,
        None => std::alloc::handle_alloc_error(layout),
    }
}

/// Runs `f` when the process exits normally (`exit`, or `main` returning),
/// after `main`: how the per-site report prints itself. False if it cannot
/// be arranged. Not public API.
#[doc(hidden)]
pub fn at_exit(f: extern "C" fn()) -> bool {
    crate::os::at_exit(f)
}
