//! Scopes: while one is open on a thread, the thread allocates from its
//! heap's runs.
//!
//! The first [`scope`](crate::scope()) call or annotated function running on a thread opens
//! the scope as it starts; everything that runs inside it, annotated or not,
//! joins it, at the cost of one thread-local read where it checks. The
//! scope closes when what opened it returns, by any exit: the guard that
//! opened it closes it when it drops. While a scope is open, every
//! allocation the runtime can serve comes from the runs (see `runs.rs`). A scope
//! is a property of a thread: it never serves another thread, and a future
//! holds none while suspended: each poll of a [`ScopedFuture`] opens or
//! joins the polling thread's scope and closes what it opened before
//! returning.

use core::alloc::Layout;
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::ptr::NonNull;
use core::task::{Context, Poll};

use crate::base::class::{class_of, NO_CLASS};
use crate::front::probe::is_active;
use crate::front::settings::warn_not_installed;
use crate::heap::runs::alloc_in_scope;
use crate::heap::this_thread::{self, ScopeState};
use crate::heap::thread;
use crate::memory::cursor::box_in_slot;

/// Opens this thread's scope, where none is open: true if it did, false if
/// none can open here (`BatchAlloc` not installed, no region, the thread
/// exiting). Whoever opened it closes it with [`close`].
#[inline]
fn open_scope() -> bool {
    let state = this_thread::scope_state();
    if !state.is_ready() {
        return open_first_scope();
    }
    this_thread::set_scope_state(state.opened());
    true
}

/// [`open_scope`] where the thread's heap is not known yet: the thread's
/// first scope, which finds its heap (or finds that scopes cannot open
/// here) first.
#[cold]
#[inline(never)]
fn open_first_scope() -> bool {
    first_scope();
    !this_thread::scope_state().joins() && open_scope()
}

/// [`open_scope`], out of line: for a guard (`expansion.rs`), which holds
/// one cold call where no scope is open.
#[cold]
#[inline(never)]
pub(crate) fn open_scope_out_of_line() -> bool {
    open_scope()
}

/// Whether entering a scope on this thread would join one rather than open
/// one: a scope is open, or scopes cannot open here.
#[inline(always)]
pub(crate) fn scope_would_join() -> bool {
    this_thread::scope_state().joins()
}

/// The thread's first scope: finds its heap, or finds that scopes cannot
/// open here, and records which in the scope state.
#[cold]
#[inline(never)]
fn first_scope() {
    let heap = match is_active() {
        true => thread::current_or_init(),
        false => {
            warn_not_installed();
            None
        }
    };
    match heap {
        Some(heap) => this_thread::set_scope_state(ScopeState::ready(heap)),
        // No BatchAlloc, no region, or the thread exiting: code runs as
        // written, at the cost of one thread-local read.
        None => this_thread::set_scope_state(ScopeState::disabled()),
    }
}

/// Closes the scope this thread has open. Out of line: inlined into a
/// function that holds a guard, it kept the scope state's thread-local
/// address in a register across the whole body.
#[cold]
#[inline(never)]
pub(crate) fn close() {
    this_thread::set_scope_state(this_thread::scope_state().closed());
}

/// A future whose every poll runs inside the scope of the thread that
/// polls it: what `#[batch_alloc]` makes of an `async fn`'s body. Not
/// public API.
///
/// A poll makes a guard of type `G`, enters it with `enter` (which opens or
/// joins the scope), and the guard closes what it opened before the poll
/// returns, so no scope is held while the future is suspended, whatever it
/// awaits and wherever the awaits are (inside macros included), and each
/// poll is served on its own thread.
#[doc(hidden)]
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct ScopedFuture<F, G, E> {
    future: F,
    enter: E,
    /// Not held: made afresh in each poll. A function pointer type, so that
    /// the future's `Send`, `Sync` and `Unpin` are its fields'.
    guard: PhantomData<fn() -> G>,
}

impl<F, G, E> ScopedFuture<F, G, E> {
    /// `future`, each of whose polls runs while a guard `enter` entered is
    /// alive.
    #[inline]
    pub const fn new(future: F, enter: E) -> Self {
        ScopedFuture {
            future,
            enter,
            guard: PhantomData,
        }
    }
}

impl<F: Future, G: Default, E: FnMut(&G)> Future for ScopedFuture<F, G, E> {
    type Output = F::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `future` is pinned structurally and `enter` is not: the
        // type has no `Drop` impl and is `Unpin` only when both fields are
        // (the auto trait), nothing moves `future` out of a pinned
        // `ScopedFuture`, and `enter` is only called through `&mut`.
        let this = unsafe { self.get_unchecked_mut() };
        let guard = G::default();
        (this.enter)(&guard);
        // SAFETY: as above: `future` stays where it is until it is dropped.
        let future = unsafe { Pin::new_unchecked(&mut this.future) };
        future.poll(cx)
    }
}

/// Runs `f` with this thread's scope, if one is open, set aside: what `f`
/// allocates goes to the inner allocator and is not counted as scoped. For
/// the crate's own bookkeeping inside a user's scope (the per-site report).
#[cfg(feature = "report")]
pub(crate) fn outside_scope<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(ScopeState);
    impl Drop for Restore {
        fn drop(&mut self) {
            this_thread::set_scope_state(self.0);
        }
    }
    let state = this_thread::scope_state();
    let _restore = Restore(state);
    this_thread::set_scope_state(state.closed());
    f()
}

/// Whether a scope is open on this thread: `Some(true)` if one is, `None`
/// if not. For tests; not public API.
#[doc(hidden)]
pub fn scope_on_this_thread() -> Option<bool> {
    let state = this_thread::scope_state();
    state.is_open().then_some(true)
}

/// A slot of `T`'s class from this thread's open scope: `None` if no scope
/// is open, no class serves `T` or there is no memory.
#[inline(always)]
fn slot_in_scope<T>() -> Option<NonNull<u8>> {
    let state = this_thread::scope_state();
    let class = const { class_of::<T>() };
    if state.is_open() && class != NO_CLASS {
        return alloc_in_scope(state, class);
    }
    None
}

/// A slot of `T`'s class from the open scope's run, the class known at
/// compile time, or `Box::new` when no scope is open or no class serves
/// `T`: for the runtime's tests of typed boxing. Not public API.
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
