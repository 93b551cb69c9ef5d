//! The per-site report: what each scope-opening place (an annotated
//! function, an `async fn`, a `scope()` call) did: opened a scope, and
//! what it served, or joined one, or found none could open.
//!
//! With the `report` feature, every site counts what happened there, and
//! the table is printed to stderr when the program exits (unless
//! `BATCH_ALLOC_REPORT=off`) or returned by [`report`] at any time. A site
//! that opened a scope also counts every allocation the scope served while
//! it was open (boxes, strings, vectors, library code), on the thread that
//! opened it. Without the feature the sites are empty and the generated
//! code is what it would be without them: nothing is counted or kept.
//!
//! ```text
//! batch-alloc report: 2 sites ran
//! site                                     kind             times  what happened
//! src/parse.rs:41:4 parse                  fn                 204  1 opened a scope (served 88,310 allocations), 203 joined one
//! src/main.rs:12:9                         scope()              1  1 opened a scope (served 7,008 allocations)
//! ```

/// What a site is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SiteKind {
    /// The scope guard of a synchronous annotated function.
    Function,
    /// An annotated `async fn`: a scope for each poll.
    Future,
    /// A call of [`scope`](crate::scope()).
    Scope,
}

/// What happened at a site, once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "report"), allow(dead_code))]
pub(crate) enum Outcome {
    /// A scope opened.
    Served = 0,
    /// A scope was joined (one was already open).
    Elsewhere = 1,
    /// `BatchAlloc` is not the global allocator (or cannot reserve its
    /// address range).
    NotInstalled = 2,
}

#[cfg(feature = "report")]
pub use on::Site;
#[cfg(feature = "report")]
pub(crate) use on::{served_on_this_thread, site_at};

#[cfg(not(feature = "report"))]
pub use off::Site;

/// The per-site report as a table: for each site that ran, by file and
/// line, what happened there and, for plain allocations, why. Without the
/// `report` feature, a line saying how to turn it on.
pub fn report() -> String {
    #[cfg(feature = "report")]
    {
        on::table()
    }
    #[cfg(not(feature = "report"))]
    String::from(
        "batch-alloc report: off. Build with the `report` feature \
         (batch-alloc = { version = \"0.1\", features = [\"report\"] }) to count what each \
         annotated function, scope() call and Box::new served.\n",
    )
}

#[cfg(not(feature = "report"))]
mod off {
    use super::{Outcome, SiteKind};

    /// One place in the user's code the attribute rewrote: empty without
    /// the `report` feature, so that it compiles to nothing.
    #[derive(Debug)]
    pub struct Site;

    impl Site {
        /// A site of `kind` at `file:line:column`.
        pub const fn new(
            kind: SiteKind,
            function: &'static str,
            file: &'static str,
            line: u32,
            column: u32,
        ) -> Site {
            let _ = (kind, function, file, line, column);
            Site
        }

        /// Counts nothing.
        #[inline(always)]
        pub(crate) fn count(&'static self, outcome: Outcome) {
            let _ = outcome;
        }
    }
}

#[cfg(feature = "report")]
mod on {
    use core::cell::UnsafeCell;
    use std::fmt::Write;
    use std::io::Write as _;
    use std::panic::Location;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

    use super::{Outcome, SiteKind};
    use crate::locks::{self, REPORT};
    use crate::scope::outside_scope;

    const OUTCOMES: usize = 3;

    /// One place in the user's code the attribute rewrote, or a `scope()`
    /// call, with its counts. One static per rewritten place.
    #[derive(Debug)]
    pub struct Site {
        kind: SiteKind,
        /// The function a `Function` or `Future` site is the body of.
        function: &'static str,
        file: &'static str,
        line: u32,
        column: u32,
        counts: [AtomicU64; OUTCOMES],
        /// Allocations served while a scope this site opened was open.
        served: AtomicU64,
        listed: AtomicBool,
    }

    impl Site {
        /// A site of `kind` at `file:line:column`.
        pub const fn new(
            kind: SiteKind,
            function: &'static str,
            file: &'static str,
            line: u32,
            column: u32,
        ) -> Site {
            Site {
                kind,
                function,
                file,
                line,
                column,
                counts: [const { AtomicU64::new(0) }; OUTCOMES],
                served: AtomicU64::new(0),
                listed: AtomicBool::new(false),
            }
        }

        /// Counts one `outcome`.
        #[inline(always)]
        pub(crate) fn count(&'static self, outcome: Outcome) {
            self.counts[outcome as usize].fetch_add(1, Relaxed);
            if !self.listed.load(Relaxed) {
                self.list();
            }
        }

        /// Adds what a scope this site opened served while it was open.
        pub(crate) fn count_served(&'static self, allocations: u64) {
            self.served.fetch_add(allocations, Relaxed);
        }

        #[cold]
        fn list(&'static self) {
            if self.listed.swap(true, Relaxed) {
                return;
            }
            // The first site listed registers the report at exit; the others
            // need not wait for it. No lock: a `Once` left a child forked while
            // another thread registered waiting for good at its first site.
            static AT_EXIT: AtomicBool = AtomicBool::new(false);
            if !AT_EXIT.swap(true, Relaxed) {
                // False if the C library refused: then `report()` still gives
                // the table, and only the print at exit is lost.
                let _registered = crate::os::at_exit(print_at_exit);
            }
            // The list's growth is the report's own allocation, not the
            // scope's.
            with_lists(|lists| lists.counted.push(self));
        }
    }

    /// The report's lists: every site that has counted something, and the
    /// sites of `scope()` calls, made at their first call.
    struct Lists {
        counted: Vec<&'static Site>,
        scope_calls: Vec<&'static Site>,
    }

    struct Shared(UnsafeCell<Lists>);

    // SAFETY: the lists are read and written only under `locks::REPORT`.
    unsafe impl Sync for Shared {}

    static LISTS: Shared = Shared(UnsafeCell::new(Lists {
        counted: Vec::new(),
        scope_calls: Vec::new(),
    }));

    /// Runs `f` on the report's lists, under their lock, outside any scope
    /// (their growth is the report's own allocation, not the scope's). The
    /// lock is one of the runtime's, so a fork waits for it and the child
    /// starts with it free: the first use registers the fork handlers,
    /// which a program without `BatchAlloc` has not. Should the C library
    /// refuse them, the lists stay as they are (`f` gets a copy of
    /// nothing), rather than risk a child waiting on the lock for good.
    fn with_lists<R: Default>(f: impl FnOnce(&mut Lists) -> R) -> R {
        if !locks::register_fork_handlers() {
            return R::default();
        }
        outside_scope(|| {
            REPORT.lock();
            // SAFETY: the lock is held, so no other reference to the lists
            // is live; `f` only pushes and reads (a failed allocation aborts
            // rather than unwind with the lock held).
            let result = f(unsafe { &mut *LISTS.0.get() });
            REPORT.unlock();
            result
        })
    }

    /// The site of the `scope()` call at `location`, made at its first call
    /// (a leaked `Site`; few places call `scope()`, so the search is a
    /// walk).
    pub(crate) fn site_at(location: &'static Location<'static>) -> &'static Site {
        static UNCOUNTED: Site = Site::new(SiteKind::Scope, "", "", 0, 0);
        let key = (location.file(), location.line(), location.column());
        let found = with_lists(|lists| {
            let at = |site: &&'static Site| (site.file, site.line, site.column) == key;
            if let Some(site) = lists.scope_calls.iter().copied().find(at) {
                return Some(site);
            }
            let site: &'static Site = Box::leak(Box::new(Site::new(
                SiteKind::Scope,
                "",
                key.0,
                key.1,
                key.2,
            )));
            lists.scope_calls.push(site);
            Some(site)
        });
        found.unwrap_or(&UNCOUNTED)
    }

    /// Allocations this thread's scopes have served so far.
    pub(crate) fn served_on_this_thread() -> u64 {
        crate::stats::scoped_allocations_on_this_thread()
    }

    extern "C" fn print_at_exit() {
        if crate::settings::settings().report_at_exit {
            // Not `eprint!`, which panics when stderr fails (a closed pipe),
            // and a panic out of this `extern "C"` handler would abort the
            // exit: a report that cannot be written is dropped.
            let _ = std::io::stderr().write_all(table().as_bytes());
        }
    }

    pub(super) fn table() -> String {
        let mut sites: Vec<&Site> = with_lists(|lists| lists.counted.clone());
        sites.sort_by_key(|site| (site.file, site.line, site.column));
        let mut out = format!(
            "batch-alloc report: {} sites ran\n{:<48} {:<9} {:>12}  what happened\n",
            sites.len(),
            "site",
            "kind",
            "times"
        );
        for site in sites {
            let counts: Vec<u64> = site.counts.iter().map(|c| c.load(Relaxed)).collect();
            let total: u64 = counts.iter().sum();
            let place = match site.function {
                "" => format!("{}:{}:{}", site.file, site.line, site.column),
                name => format!("{}:{}:{} {name}", site.file, site.line, site.column),
            };
            let served = site.served.load(Relaxed);
            let opened = format!("opened a scope (served {served} allocations)");
            let kind = match site.kind {
                SiteKind::Function => "fn",
                SiteKind::Future => "async",
                SiteKind::Scope => "scope()",
            };
            let labels = [
                (Outcome::Served, opened.as_str()),
                (Outcome::Elsewhere, "joined one"),
                (Outcome::NotInstalled, "none: BatchAlloc not installed"),
            ];
            let what: Vec<String> = labels
                .iter()
                .filter(|(outcome, _)| counts[*outcome as usize] != 0)
                .map(|(outcome, label)| format!("{} {label}", counts[*outcome as usize]))
                .collect();
            let _ = writeln!(
                out,
                "{place:<48} {kind:<9} {total:>12}  {}",
                what.join(", ")
            );
        }
        out
    }
}
