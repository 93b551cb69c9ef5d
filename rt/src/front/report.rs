//! The per-site report: what each scope-opening place (an annotated
//! function, an `async fn`, a `scope()` call) did: opened a scope, and
//! what it served, or joined one, or found none could open.
//!
//! With the `report` feature, every site counts what happened there, and
//! the table is printed to stderr when the program exits (unless
//! `BATCH_ALLOC_REPORT=off`) or returned by [`report`] at any time. A site
//! that opened a scope also counts every allocation the scope served while
//! it was open (boxes, strings, vectors, library code), on the thread that
//! opened it. A forked child counts from zero: its table, at exit or from
//! [`report`], holds what ran in it, and a child in which nothing ran
//! prints nothing. Without the feature the sites are empty and the
//! generated code is what it would be without them: nothing is counted or
//! kept.
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
    /// `BatchAlloc` is not the global allocator (or cannot map its
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
         annotated function and scope() call served.\n",
    )
}

#[cfg(not(feature = "report"))]
mod off {
    use super::{Outcome, SiteKind};

    /// An annotated function or a `scope()` call: empty without
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
    use std::panic::Location;
    use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
    use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64};

    use super::{Outcome, SiteKind};
    use crate::base::locks::{self, REPORT};
    use crate::base::sync::{fork_generation, nothing_around_fork};
    use crate::front::scope::outside_scope;

    const OUTCOMES: usize = 3;

    /// An annotated function, an annotated `async fn` or a `scope()` call,
    /// with its counts. One static per place.
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
                register_at_exit();
            }
            // The list's growth is the report's own allocation, not the
            // scope's.
            with_lists(|lists| lists.counted.push(self));
        }
    }

    /// The fork generation whose process prints the report at exit (see
    /// `sync::fork_generation`): the one that registered the print, or a
    /// child whose handler started its counts from zero.
    static PRINTS_IN: AtomicU32 = AtomicU32::new(0);

    /// Registers the print at exit, and the child handler that starts a
    /// forked child's counts from zero. After the runtime's own fork
    /// handlers, which release the report's lock in a child before this
    /// one's handler takes it (a child's handlers run in the order they
    /// were registered), and after the handler that counts generations.
    /// Should the C library refuse the child handler, a child prints
    /// nothing at exit (its generation is not the one that prints); should
    /// it refuse the print, `report()` still gives the table.
    fn register_at_exit() {
        let _ = locks::register_fork_handlers();
        PRINTS_IN.store(fork_generation(), Relaxed);
        let _ = crate::base::os::at_fork(nothing_around_fork, nothing_around_fork, count_from_zero);
        let _ = crate::base::os::at_exit(print_at_exit);
    }

    /// In a child just forked (by the forking thread, the only one): the
    /// sites' counts so far are the parent's, so each starts from zero
    /// here, and this process prints at exit what ran in it.
    unsafe extern "C" fn count_from_zero() {
        REPORT.lock();
        // SAFETY: the lock is held (the runtime's child handler released it
        // first), so no other reference to the lists is live; the walk
        // allocates nothing.
        let lists = unsafe { &*LISTS.0.get() };
        for site in &lists.counted {
            for count in &site.counts {
                count.store(0, Relaxed);
            }
            site.served.store(0, Relaxed);
        }
        REPORT.unlock();
        PRINTS_IN.store(fork_generation(), Relaxed);
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

    /// The sites of `scope()` calls by place, for [`site_at`] to find
    /// without a lock: an open-addressed table, written only under the
    /// report's lock (one entry at a time, null to a site, for good) and
    /// read by any thread. A site the table has no room for is found on
    /// the list, under the lock.
    static SCOPE_SITES: [AtomicPtr<Site>; SCOPE_SITE_ENTRIES] =
        [const { AtomicPtr::new(core::ptr::null_mut()) }; SCOPE_SITE_ENTRIES];
    const SCOPE_SITE_ENTRIES: usize = 256;

    /// The table's entries for the place `key`, in probing order.
    fn entries_for(key: (&str, u32, u32)) -> impl Iterator<Item = &'static AtomicPtr<Site>> {
        let (file, line, column) = key;
        let hash = (line as usize)
            .wrapping_mul(0x9E37_79B9)
            .wrapping_add(column as usize)
            .wrapping_add(file.len());
        (0..SCOPE_SITE_ENTRIES)
            .map(move |i| &SCOPE_SITES[hash.wrapping_add(i) % SCOPE_SITE_ENTRIES])
    }

    fn is_at(site: &Site, key: (&str, u32, u32)) -> bool {
        let (file, line, column) = key;
        // The same call site's file name is usually the same string.
        site.line == line
            && site.column == column
            && (core::ptr::eq(site.file, file) || site.file == file)
    }

    /// The site of the `scope()` call at `location`, made at its first call
    /// (a leaked `Site`). Every call of `scope()`, joins included, comes
    /// here: found in the table without a lock once it is made.
    pub(crate) fn site_at(location: &'static Location<'static>) -> &'static Site {
        let key = (location.file(), location.line(), location.column());
        for entry in entries_for(key) {
            // Acquire: pairs with the release that published the site.
            let site = entry.load(Acquire);
            if site.is_null() {
                break;
            }
            // SAFETY: the table holds only leaked sites, never freed.
            let site: &'static Site = unsafe { &*site };
            if is_at(site, key) {
                return site;
            }
        }
        make_site_at(key)
    }

    /// [`site_at`] for a place not in the table: made, listed and put in
    /// the table if it has room, under the lock.
    #[cold]
    #[inline(never)]
    fn make_site_at(key: (&'static str, u32, u32)) -> &'static Site {
        static UNCOUNTED: Site = Site::new(SiteKind::Scope, "", "", 0, 0);
        let found = with_lists(|lists| {
            if let Some(site) = lists
                .scope_calls
                .iter()
                .copied()
                .find(|site| is_at(site, key))
            {
                return Some(site);
            }
            let (file, line, column) = key;
            let site: &'static Site =
                Box::leak(Box::new(Site::new(SiteKind::Scope, "", file, line, column)));
            lists.scope_calls.push(site);
            if let Some(free) = entries_for(key).find(|e| e.load(Relaxed).is_null()) {
                // Release: the site's fields before its address.
                free.store((site as *const Site).cast_mut(), Release);
            }
            Some(site)
        });
        found.unwrap_or(&UNCOUNTED)
    }

    /// Allocations this thread's scopes have served so far.
    pub(crate) fn served_on_this_thread() -> u64 {
        crate::front::stats::scoped_allocations_on_this_thread()
    }

    /// Prints the table at exit, in the process that registered the print
    /// or a child that counted from zero, if a site ran there. With
    /// `write(2)`, not through std's stderr, whose lock a child forked
    /// while another thread held it (any `eprintln!`, any logger) would
    /// wait on for good; and not with `eprint!`, which panics when stderr
    /// fails (a closed pipe), where a panic out of this `extern "C"`
    /// handler would abort the exit: a report that cannot be written is
    /// dropped.
    extern "C" fn print_at_exit() {
        if PRINTS_IN.load(Relaxed) != fork_generation()
            || !crate::front::settings::settings().report_at_exit
        {
            return;
        }
        let sites = sites_that_ran();
        if !sites.is_empty() {
            crate::base::os::write_stderr(table_of(sites).as_bytes());
        }
    }

    /// The sites that ran in this process, by file and line (a site listed
    /// in a process this one was forked from may not have).
    fn sites_that_ran() -> Vec<&'static Site> {
        let mut sites: Vec<&Site> = with_lists(|lists| lists.counted.clone());
        sites.retain(|site| site.counts.iter().any(|count| count.load(Relaxed) != 0));
        sites.sort_by_key(|site| (site.file, site.line, site.column));
        sites
    }

    pub(super) fn table() -> String {
        table_of(sites_that_ran())
    }

    fn table_of(sites: Vec<&'static Site>) -> String {
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
