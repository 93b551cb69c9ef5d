//! The per-site report: what each annotated loop and each rewritten
//! `Box::new` did, and why an allocation was plain.
//!
//! With the `report` feature, every site the attribute rewrote counts what
//! happened there, and the table is printed to stderr when the program
//! exits (unless `BATCH_ALLOC_REPORT=0`) or returned by [`report`] at any
//! time. Without the feature the sites are empty and the code the attribute
//! generates is what it would be without them: nothing is counted and
//! nothing is kept.
//!
//! ```text
//! batch-alloc report: 3 sites
//! site                         kind       events   served      plain: no scope  not installed  not batched  no memory  refills
//! src/parse.rs:41:13           loop        1,204   1 opened    1,203 joined
//! src/parse.rs:58:22           Box::new   88,310   88,310      0
//! src/lex.rs:12:9              Box::new      512   0           512 ...
//! ```

#[cfg(feature = "report")]
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
#[cfg(feature = "report")]
use std::sync::{Mutex, Once};

/// What a site is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SiteKind {
    /// A loop nest's scope guard.
    Loop,
    /// A `Box::new` of a scoped function.
    Boxed,
    /// A `Box::new` inside a loop of a `#[batch_alloc(boxes)]` function.
    Batched,
}

/// One rewritten place in the user's code, with its counts (when the
/// `report` feature is on). Made by the attribute's generated code, one
/// static per site.
pub struct Site {
    #[cfg(feature = "report")]
    kind: SiteKind,
    #[cfg(feature = "report")]
    file: &'static str,
    #[cfg(feature = "report")]
    line: u32,
    #[cfg(feature = "report")]
    column: u32,
    #[cfg(feature = "report")]
    counts: [AtomicU64; OUTCOMES],
    #[cfg(feature = "report")]
    listed: AtomicBool,
}

#[cfg(feature = "report")]
const OUTCOMES: usize = 6;

/// What happened at a site, once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "report"), allow(dead_code))]
pub(crate) enum Outcome {
    /// Served by batch-alloc: a loop opened a scope, or a box came from a
    /// scope's run or a batch.
    Served = 0,
    /// A loop joined a scope already open; a `Box::new` ran with no scope
    /// open.
    Elsewhere = 1,
    /// `BatchAlloc` is not the global allocator (or cannot reserve its
    /// address range).
    NotInstalled = 2,
    /// No size class serves the type (zero-sized, over-aligned, too large).
    NotBatched = 3,
    /// The runtime had no memory to give.
    NoMemory = 4,
    /// A batch refilled (counted beside its boxes).
    Refill = 5,
}

impl Site {
    /// A site of `kind` at `file:line:column`.
    pub const fn new(kind: SiteKind, file: &'static str, line: u32, column: u32) -> Site {
        #[cfg(not(feature = "report"))]
        let _ = (kind, file, line, column);
        Site {
            #[cfg(feature = "report")]
            kind,
            #[cfg(feature = "report")]
            file,
            #[cfg(feature = "report")]
            line,
            #[cfg(feature = "report")]
            column,
            #[cfg(feature = "report")]
            counts: [const { AtomicU64::new(0) }; OUTCOMES],
            #[cfg(feature = "report")]
            listed: AtomicBool::new(false),
        }
    }

    /// Counts one `outcome` (nothing without the `report` feature).
    #[inline(always)]
    pub(crate) fn count(&'static self, outcome: Outcome) {
        #[cfg(feature = "report")]
        {
            self.counts[outcome as usize].fetch_add(1, Relaxed);
            if !self.listed.load(Relaxed) {
                self.list();
            }
        }
        #[cfg(not(feature = "report"))]
        let _ = outcome;
    }

    #[cfg(feature = "report")]
    #[cold]
    fn list(&'static self) {
        if self.listed.swap(true, Relaxed) {
            return;
        }
        static AT_EXIT: Once = Once::new();
        AT_EXIT.call_once(|| {
            batch_alloc_rt::at_exit(print_at_exit);
        });
        // The list's growth is the report's own allocation, not the loop's.
        batch_alloc_rt::outside_scope(|| {
            SITES
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .push(self);
        });
    }
}

/// Every site that has counted something.
#[cfg(feature = "report")]
static SITES: Mutex<Vec<&'static Site>> = Mutex::new(Vec::new());

#[cfg(feature = "report")]
extern "C" fn print_at_exit() {
    if std::env::var_os("BATCH_ALLOC_REPORT").is_some_and(|value| value == "0") {
        return;
    }
    eprint!("{}", report());
}

/// The per-site report as a table: for each site that ran (a loop nest's
/// scope guard, a rewritten `Box::new`), by file and line, what happened
/// there and, for plain allocations, why. Empty without the `report`
/// feature.
pub fn report() -> String {
    #[cfg(feature = "report")]
    {
        table()
    }
    #[cfg(not(feature = "report"))]
    String::new()
}

#[cfg(feature = "report")]
fn table() -> String {
    use std::fmt::Write;
    let mut sites: Vec<&Site> = SITES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone();
    sites.sort_by_key(|site| (site.file, site.line, site.column));
    let mut out = format!(
        "batch-alloc report: {} sites ran\n{:<40} {:<9} {:>12}  what happened\n",
        sites.len(),
        "site",
        "kind",
        "times"
    );
    for site in sites {
        let counts: Vec<u64> = site.counts.iter().map(|c| c.load(Relaxed)).collect();
        let total: u64 = counts[..Outcome::Refill as usize].iter().sum();
        let place = format!("{}:{}:{}", site.file, site.line, site.column);
        let kind = match site.kind {
            SiteKind::Loop => "loop",
            SiteKind::Boxed => "Box::new",
            SiteKind::Batched => "batched",
        };
        let labels: &[(Outcome, &str)] = match site.kind {
            SiteKind::Loop => &[
                (Outcome::Served, "opened a scope"),
                (Outcome::Elsewhere, "joined one"),
                (Outcome::NotInstalled, "none: BatchAlloc not installed"),
            ],
            SiteKind::Boxed => &[
                (Outcome::Served, "from a scope"),
                (Outcome::Elsewhere, "plain: no scope open"),
                (Outcome::NotInstalled, "plain: BatchAlloc not installed"),
                (Outcome::NotBatched, "plain: type not batched"),
                (Outcome::NoMemory, "plain: no memory"),
            ],
            SiteKind::Batched => &[
                (Outcome::Served, "from its batch"),
                (Outcome::NotInstalled, "plain: BatchAlloc not installed"),
                (Outcome::NotBatched, "plain: type not batched"),
                (Outcome::NoMemory, "plain: no memory"),
                (Outcome::Refill, "refills"),
            ],
        };
        let what: Vec<String> = labels
            .iter()
            .filter(|(outcome, _)| counts[*outcome as usize] != 0)
            .map(|(outcome, label)| format!("{} {label}", counts[*outcome as usize]))
            .collect();
        let _ = writeln!(
            out,
            "{place:<40} {kind:<9} {total:>12}  {}",
            what.join(", ")
        );
    }
    out
}
