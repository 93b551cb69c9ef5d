//! What the code `#[batch_alloc]` generates calls (through the facade's
//! `batch_alloc::__private`, which is this module's re-export), and the
//! public [`scope`]: opening or joining the thread's scope at an annotated
//! function, an `async` body or a `scope()` call, and boxing a value in
//! it, each counted at its site for the `report` feature.
//!
//! The functions that take the user's value are `#[inline(always)]` only
//! where debug assertions are off (optimised builds, in practice): in an
//! unoptimised build an always-inlined callee's locals join its caller's
//! frame, once per call site, and a recursive parser with many `Box::new`s
//! then needed far more stack than as written (docs/macro.md has the
//! figures).

use core::future::Future;
use core::pin::{pin, Pin};

use crate::probe::is_active;
use crate::report::{Outcome, Site};
use crate::scope::{
    batchable, box_in_scope, scope_on_this_thread, scope_would_join, try_box_in_scope, ScopedFuture,
};

/// The guard `#[batch_alloc]` declares, pinned, first in a function
/// that cannot call itself, before a closure's outermost loops, and in
/// a function that calls itself to open its scope: this thread's scope,
/// opened or joined by [`enter`], closed when the guard drops if it
/// opened it (see the runtime's `Scope`).
pub type Scope = crate::scope::Scope<Mark>;

impl Scope {
    /// A guard that holds nothing yet.
    #[inline(always)]
    pub const fn new() -> Scope {
        Scope::with(Mark::new())
    }
}

/// What a guard keeps for the `report` feature: where it opened the
/// scope and what the thread's scopes had served then, to count what
/// its scope served when it drops. Nothing without the feature.
#[derive(Debug, Default)]
pub struct Mark {
    #[cfg(feature = "report")]
    opened_at: core::cell::Cell<Option<(&'static Site, u64)>>,
}

impl Mark {
    const fn new() -> Mark {
        Mark {
            #[cfg(feature = "report")]
            opened_at: core::cell::Cell::new(None),
        }
    }
}

#[cfg(feature = "report")]
impl Drop for Mark {
    fn drop(&mut self) {
        if let Some((site, start)) = self.opened_at.take() {
            site.count_served(crate::report::served_on_this_thread().wrapping_sub(start));
        }
    }
}

/// What `#[batch_alloc]` puts first in a function that opens its scope
/// by calling itself: whether it must (no scope is open on this
/// thread, and one may open). Inside an open scope, the common case,
/// this is a thread-local read and a test, and the body runs as
/// written. With the `report` feature, a joined call counts at `site`.
#[inline(always)]
pub fn must_open(site: &'static Site) -> bool {
    let joins = scope_would_join();
    #[cfg(feature = "report")]
    if joins && !crate::report::take_reentry() {
        site.count(Outcome::Elsewhere);
    }
    #[cfg(not(feature = "report"))]
    let _ = site;
    !joins
}

/// Where [`must_open`] said so: opens this thread's scope (or finds
/// that none can open here) for the function's call to itself, which
/// runs inside it; the guard closes it when the call returns or
/// unwinds.
#[cold]
#[inline(never)]
pub fn open_for_call(site: &'static Site, scope: Pin<&Scope>) {
    enter(site, scope);
    #[cfg(feature = "report")]
    crate::report::mark_reentry();
}

/// Where [`must_open`] said so: opens this thread's scope (or finds that
/// none can open here) and runs `call`, the function calling itself,
/// inside it; closes it when `call` returns or unwinds. Out of line and
/// cold, so that the annotated function has one call more, in a branch
/// never taken inside a scope, and no unwinding cleanup of its own.
/// (The report counts the call to itself as this opening, not as a
/// join.)
#[cold]
#[inline(never)]
pub fn reenter<R, F: FnOnce() -> R>(site: &'static Site, call: F) -> R {
    opened_around(site, || {
        #[cfg(feature = "report")]
        crate::report::mark_reentry();
        call()
    })
}

/// Opens this thread's scope (where [`must_open`] said none is open)
/// around `body`, and closes it when `body` returns or unwinds.
#[inline(always)]
fn opened_around<R, F: FnOnce() -> R>(site: &'static Site, body: F) -> R {
    let scope = pin!(Scope::new());
    scope.as_ref().open_here();
    if cfg!(feature = "report") {
        count_entry(site, scope.as_ref());
    }
    let result = body();
    // Here, not in the guard's drop, which would call out of line (it
    // still closes the scope if `body` unwinds).
    scope.as_ref().close_here();
    result
}

/// [`run_in_scope`]'s opening: out of line and cold, as [`reenter`].
#[cold]
#[inline(never)]
pub fn open_around_body<R, F: FnOnce() -> R>(site: &'static Site, body: F) -> R {
    opened_around(site, body)
}

/// What `#[batch_alloc]` makes of a function that cannot call itself
/// (the closure form): runs `body`, the function's body in a closure
/// always inlined, where it is inside an open scope (a thread-local read
/// and a test), and otherwise opens the scope around it, out of line.
#[inline(always)]
pub fn run_in_scope<R, F: FnOnce() -> R>(site: &'static Site, body: F) -> R {
    if must_open(site) {
        return open_around_body(site, body);
    }
    body()
}

/// Runs `f` inside this thread's batch scope, and returns what it returns:
/// the way in for code with no annotated function of its own, such as a
/// derived `Deserialize` whose loops are inside serde.
///
/// ```
/// use batch_alloc_rt::{scope, stats, BatchAlloc};
///
/// #[global_allocator]
/// static GLOBAL: BatchAlloc = BatchAlloc::system();
///
/// let before = stats().scoped_allocations;
/// let words: Vec<String> = scope(|| "a b c".split(' ').map(String::from).collect());
/// assert_eq!(words[2], "c");
/// // The vector and its three strings.
/// assert!(stats().scoped_allocations - before >= 4);
/// ```
///
/// If no scope is open on the thread, `scope` opens one for the call and
/// closes it when `f` returns or unwinds; if one is open (an annotated
/// function or another `scope` up the stack), `f` joins it. While it is
/// open, every allocation on this thread up to the largest size class
/// (4 KiB) comes from the thread's runs of slots, and larger ones up to
/// 64 MiB that fit whole frames from frames (when the scope captures, the
/// default, [`Capture::All`](crate::Capture::All)): boxes, strings,
/// vectors, maps, whatever library code allocates. Each is an ordinary
/// allocation, freed one by one, on any thread, at any time. Opening costs
/// a thread-local read and write, joining one read; nothing is allocated.
/// Where [`BatchAlloc`](crate::BatchAlloc) is not the global allocator,
/// `f` runs as without it (a debug build says so once on stderr). With the
/// `report` feature, each call site counts what it opened and served.
///
/// A scope serves its own thread only: for `rayon`, call it inside each
/// task (`par_iter().map(|doc| scope(|| parse(doc)))`). For a future, put
/// `#[batch_alloc]` on the `async fn`: a scope must not be held while a
/// future is suspended, and the attribute opens one for each poll instead.
#[track_caller]
#[inline]
pub fn scope<R>(f: impl FnOnce() -> R) -> R {
    let scope = pin!(Scope::new());
    #[cfg(feature = "report")]
    enter(
        crate::report::site_at(core::panic::Location::caller()),
        scope.as_ref(),
    );
    #[cfg(not(feature = "report"))]
    scope.as_ref().enter();
    f()
}

/// Enters the scope guard `#[batch_alloc]` declares first in a
/// function that cannot call itself, and before the outermost loops of
/// a closure: this thread's scope, opened (and closed when the guard
/// drops) or joined, counted at `site`.
#[inline(always)]
pub fn enter(site: &'static Site, scope: Pin<&Scope>) {
    scope.enter();
    if cfg!(feature = "report") {
        count_entry(site, scope);
    }
}

#[cfg_attr(not(feature = "report"), allow(unused_variables))]
fn count_entry(site: &'static Site, scope: Pin<&Scope>) {
    let opened = scope.opened();
    site.count(match opened {
        true => Outcome::Served,
        false if is_active() => Outcome::Elsewhere,
        false => Outcome::NotInstalled,
    });
    #[cfg(feature = "report")]
    if opened {
        scope
            .extra()
            .opened_at
            .set(Some((site, crate::report::served_on_this_thread())));
    }
}

/// What `#[batch_alloc]` makes of an `async fn`'s body and of an
/// `async` block: the same future, each of whose polls runs inside the
/// polling thread's scope (opened or joined, and closed before the poll
/// returns), counted at `site`.
#[inline(always)]
pub fn scoped_future<F: Future>(site: &'static Site, future: F) -> impl Future<Output = F::Output> {
    #[cfg(not(feature = "report"))]
    {
        let _ = site;
        ScopedFuture::new(future, |scope: Pin<&Scope>| scope.enter())
    }
    #[cfg(feature = "report")]
    ScopedFuture::new(future, move |scope: Pin<&Scope>| enter(site, scope))
}

/// Why a `T` was a plain box at a site: `BatchAlloc` not installed, `T`
/// not batched, or else `otherwise`, what the site knows.
fn plain_because<T>(otherwise: Outcome) -> Outcome {
    if !is_active() {
        Outcome::NotInstalled
    } else if !batchable::<T>() {
        Outcome::NotBatched
    } else {
        otherwise
    }
}

/// What `#[batch_alloc]` turns `Box::new(value)` into: a slot from the
/// open batch scope's run of `T`'s class, or `Box::new(value)`, counted at
/// `site`.
///
/// `new` is the user's own `Box::new` path, passed along and never
/// called: its type must be a function from `T` to `std::boxed::Box<T>`,
/// so a user type or import called `Box` is a compile error at the
/// user's tokens, never a silent change of type. (The return type is
/// `Box<T>` itself, not a type inferred from `new`, so that an expected
/// type such as `Box<dyn Fn(&str)>` still flows into a closure's
/// signature.)
#[cfg_attr(debug_assertions, inline)]
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn box_in_scope_at<T, F>(site: &'static Site, new: F, value: T) -> Box<T>
where
    F: FnOnce(T) -> Box<T>,
{
    let _ = new;
    if !cfg!(feature = "report") {
        return box_in_scope(value);
    }
    match try_box_in_scope(value) {
        Ok(boxed) => {
            site.count(Outcome::Served);
            boxed
        }
        Err(value) => {
            site.count(plain_because::<T>(match scope_on_this_thread() {
                None => Outcome::Elsewhere,
                Some(_) => Outcome::NoMemory,
            }));
            Box::new(value)
        }
    }
}
