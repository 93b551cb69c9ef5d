//! What the code `#[batch_alloc]` generates calls (through the facade's
//! `batch_alloc::__private`), and the public [`scope`]: opening or joining
//! the thread's scope at an annotated function, an `async fn`'s poll or a
//! `scope()` call, each counted at its site for the `report` feature.

use core::future::Future;

use crate::front::probe::is_active;
use crate::front::report::{Outcome, Site};
use crate::front::scope::{close, open_scope_out_of_line, scope_would_join, ScopedFuture};

/// What a guard keeps for the `report` feature: where it opened the
/// scope and what the thread's scopes had served then, to count what
/// its scope served when it drops. Nothing without the feature.
#[derive(Debug, Default)]
struct Mark {
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
            site.count_served(crate::front::report::served_on_this_thread().wrapping_sub(start));
        }
    }
}

/// Runs `f` inside this thread's scope, and returns what it returns:
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
/// 64 MiB that fit whole frames from frames: boxes, strings, vectors,
/// maps, whatever library code allocates. Each is an ordinary
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
    let guard = Guard::new();
    #[cfg(feature = "report")]
    enter_guard(
        crate::front::report::site_at(core::panic::Location::caller()),
        &guard,
    );
    #[cfg(not(feature = "report"))]
    guard.enter();
    f()
}

/// A hold on this thread's scope: what `#[batch_alloc]` puts in front of a
/// synchronous function's body (`let __scope = Guard::new();
/// enter_guard(SITE, &__scope);`), what [`scope`] declares, and what every
/// poll of an annotated `async fn` does. Entered, it joins this thread's
/// scope (a thread-local read and a test), or opens it, out of line, and
/// closes it when it drops, however its holder returns or unwinds. Not
/// public API.
///
/// Whether it opened is a byte of the guard, which the out-of-line opening
/// writes through a reference: so it stays in the frame (a store before
/// the body and a test after), where a flag the optimiser could keep in a
/// register took one saved and restored in every call that joins. It
/// needs no pinning: nothing keeps its address. In an unoptimised build,
/// where every temporary has a slot of its own in the frame, the guard,
/// its reference and the site are what it adds to a recursion's frame.
#[must_use = "the scope closes when the guard drops"]
#[derive(Debug)]
pub struct Guard {
    opened: core::cell::Cell<bool>,
    mark: Mark,
}

impl Guard {
    /// A guard that holds nothing yet.
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub const fn new() -> Guard {
        Guard {
            opened: core::cell::Cell::new(false),
            mark: Mark::new(),
        }
    }

    /// Joins this thread's scope, or opens one held by this guard until it
    /// drops; does nothing if this guard holds the scope already. What
    /// [`enter_guard`] does, without counting at a site.
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn enter(&self) {
        if !scope_would_join() {
            self.open();
        }
    }

    #[cold]
    #[inline(never)]
    fn open(&self) {
        self.opened.set(open_scope_out_of_line());
    }
}

impl Default for Guard {
    fn default() -> Guard {
        Guard::new()
    }
}

impl Drop for Guard {
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn drop(&mut self) {
        if self.opened.get() {
            close();
        }
    }
}

/// Opens or joins this thread's scope for an annotated function's body,
/// held by `guard`, counted at `site`: inside an open scope (the common
/// case), a thread-local read and a test; otherwise one cold call that
/// opens it. Inlined only where debug assertions are off (optimised
/// builds, in practice): in an unoptimised build, an always-inlined
/// callee's locals join its caller's frame.
#[cfg_attr(debug_assertions, inline)]
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn enter_guard(site: &'static Site, guard: &Guard) {
    guard.enter();
    if cfg!(feature = "report") {
        count_entry(site, guard.opened.get(), &guard.mark);
    }
}

#[cfg_attr(not(feature = "report"), allow(unused_variables))]
fn count_entry(site: &'static Site, opened: bool, mark: &Mark) {
    site.count(match opened {
        true => Outcome::Served,
        false if is_active() => Outcome::Elsewhere,
        false => Outcome::NotInstalled,
    });
    #[cfg(feature = "report")]
    if opened {
        mark.opened_at
            .set(Some((site, crate::front::report::served_on_this_thread())));
    }
}

/// What `#[batch_alloc]` makes of an `async fn`'s body: the same future,
/// each of whose polls runs inside the polling thread's scope (opened or
/// joined, and closed before the poll returns), counted at `site`.
#[inline(always)]
pub fn scoped_future<F: Future>(site: &'static Site, future: F) -> impl Future<Output = F::Output> {
    #[cfg(not(feature = "report"))]
    {
        let _ = site;
        ScopedFuture::new(future, |guard: &Guard| guard.enter())
    }
    #[cfg(feature = "report")]
    ScopedFuture::new(future, move |guard: &Guard| enter_guard(site, guard))
}
