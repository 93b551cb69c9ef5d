//! The per-site report: what each scope-opening place (an annotated
//! function, an `async` body, a `scope()` call) and each
//! rewritten `Box::new` did, and why an allocation was plain.
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
//! batch-alloc report: 3 sites ran
//! site                                     kind             times  what happened
//! src/parse.rs:41:4                        fn                 204  1 opened a scope (served 88,310 allocations), 203 joined one
//! src/parse.rs:58:22                       Box::new        30,310  30,310 from a scope
//! src/main.rs:12:9                         scope()              1  1 opened a scope (served 7,008 allocations)
//! ```

/// What a site is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SiteKind {
    /// The scope guard of a synchronous annotated function.
    Function,
    /// The body of an annotated `async fn`, or an `async` block in an
    /// annotated function: a scope for each poll.
    Future,
    /// A call of [`scope`](crate::scope).
    Scope,
    /// A `Box::new` of a scoped function.
    Boxed,
}

/// What happened at a site, once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "report"), allow(dead_code))]
pub(crate) enum Outcome {
    /// Served by batch-alloc: a scope opened, or a box came from a scope's
    /// run or a batch.
    Served = 0,
    /// A scope was joined (one was already open); a `Box::new` ran with no
    /// scope open.
    Elsewhere = 1,
    /// `BatchAlloc` is not the global allocator (or cannot reserve its
    /// address range).
    NotInstalled = 2,
    /// No size class serves the type (zero-sized, over-aligned, too large).
    NotBatched = 3,
    /// The runtime had no memory to give.
    NoMemory = 4,
}

#[cfg(feature = "report")]
pub use on::Site;
#[cfg(feature = "report")]
pub(crate) use on::{mark_reentry, served_on_this_thread, site_at, take_reentry};

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
    use std::collections::HashMap;
    use std::fmt::Write;
    use std::io::Write as _;
    use std::panic::Location;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
    use std::sync::Mutex;

    use super::{Outcome, SiteKind};

    const OUTCOMES: usize = 5;

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
                let _registered = batch_alloc_rt::__private::at_exit(print_at_exit);
            }
            // The list's growth is the report's own allocation, not the
            // scope's.
            batch_alloc_rt::__private::outside_scope(|| lock(&SITES).push(self));
        }
    }

    /// Every site that has counted something.
    static SITES: Mutex<Vec<&'static Site>> = Mutex::new(Vec::new());

    fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        mutex
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The site of the `scope()` call at `location`, made at its first call.
    pub(crate) fn site_at(location: &'static Location<'static>) -> &'static Site {
        type Key = (&'static str, u32, u32);
        static BY_PLACE: Mutex<Option<HashMap<Key, &'static Site>>> = Mutex::new(None);
        let key = (location.file(), location.line(), location.column());
        batch_alloc_rt::__private::outside_scope(|| {
            *lock(&BY_PLACE)
                .get_or_insert_with(HashMap::new)
                .entry(key)
                .or_insert_with(|| {
                    Box::leak(Box::new(Site::new(
                        SiteKind::Scope,
                        "",
                        key.0,
                        key.1,
                        key.2,
                    )))
                })
        })
    }

    std::thread_local! {
        /// A function is calling itself inside the scope it just opened
        /// (see `__private::open_for_call`): that call is not counted as
        /// joining the scope.
        static REENTRY: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
    }

    /// The next `must_open` on this thread is a function's call to itself.
    pub(crate) fn mark_reentry() {
        REENTRY.with(|reentry| reentry.set(true));
    }

    /// Whether this call is the re-entered one (and it no longer is).
    pub(crate) fn take_reentry() -> bool {
        REENTRY.with(|reentry| reentry.replace(false))
    }

    /// Allocations this thread's scopes have served so far.
    pub(crate) fn served_on_this_thread() -> u64 {
        batch_alloc_rt::__private::scoped_allocations_on_this_thread()
    }

    extern "C" fn print_at_exit() {
        if batch_alloc_rt::__private::settings().report_at_exit {
            // Not `eprint!`, which panics when stderr fails (a closed pipe),
            // and a panic out of this `extern "C"` handler would abort the
            // exit: a report that cannot be written is dropped.
            let _ = std::io::stderr().write_all(table().as_bytes());
        }
    }

    pub(super) fn table() -> String {
        let mut sites: Vec<&Site> = lock(&SITES).clone();
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
                SiteKind::Boxed => "Box::new",
            };
            let labels: Vec<(Outcome, &str)> = match site.kind {
                SiteKind::Function | SiteKind::Future | SiteKind::Scope => vec![
                    (Outcome::Served, opened.as_str()),
                    (Outcome::Elsewhere, "joined one"),
                    (Outcome::NotInstalled, "none: BatchAlloc not installed"),
                ],
                SiteKind::Boxed => vec![
                    (Outcome::Served, "from a scope"),
                    (Outcome::Elsewhere, "plain: no scope open"),
                    (Outcome::NotInstalled, "plain: BatchAlloc not installed"),
                    (Outcome::NotBatched, "plain: type not batched"),
                    (Outcome::NoMemory, "plain: no memory"),
                ],
            };
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
