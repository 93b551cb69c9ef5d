//! Loop-scoped batch allocation: one attribute makes a loop the allocator
//! of what it allocates, with no type changes.
//!
//! Programs that build many small heap objects in a loop (parsers,
//! deserializers, tree and graph builders) pay the allocator's full price
//! once per object. Under [`#[batch_alloc]`](macro@batch_alloc), the
//! outermost annotated loop running on a thread opens a *batch scope*, and
//! until it ends that thread's boxes, strings, vectors, and whatever code
//! called from the loop allocates, come from runs of slots reserved in one
//! call and handed out by a pointer bump; annotated loops it calls,
//! recursively, join the same scope. Every allocation stays an ordinary one:
//! a real `std::boxed::Box<T>` (moved to another thread, dropped at any
//! time, turned into `Box<dyn Trait>`, pinned, leaked), a real `String`,
//! freed one by one, anywhere. Nothing in the program changes type.
//!
//! # Install
//!
//! ```toml
//! [dependencies]
//! batch-alloc = "0.1"
//! ```
//!
//! Stable Rust 1.84 or later. Optional features:
//!
//! - `serde`: [`serde_boxes`], `deserialize_with` helpers that fill
//!   `Vec<Box<T>>` and maps of boxes from one batch ([below](#the-serde-feature)).
//! - `hardened`: the runtime aborts with a message on a double free, on a
//!   free of a pointer that is not the start of a slot, and on a corrupted
//!   free list, at the price of 25% more instructions per box (49% for a box
//!   freed on another thread).
//! - `report`: every annotated loop and rewritten `Box::new` counts what it
//!   did; [`report()`] returns the table, which also prints at exit.
//!
//! # Quick start
//!
//! Two independent parts: the application installs [`BatchAlloc`] as its
//! global allocator (one line, wrapping any allocator), and any crate,
//! library or application, puts the attribute on the functions whose loops
//! allocate.
//!
//! ```
//! use batch_alloc::{batch_alloc, BatchAlloc};
//!
//! #[global_allocator]
//! static GLOBAL: BatchAlloc = BatchAlloc::system();
//!
//! struct Record {
//!     id: u64,
//!     name: String,
//! }
//!
//! #[batch_alloc]
//! fn parse(lines: &[&str]) -> Vec<Box<Record>> {
//!     let mut out = Vec::with_capacity(lines.len());
//!     for (id, line) in lines.iter().enumerate() {
//!         // The box and its name, served from the scope this loop opens.
//!         out.push(Box::new(Record { id: id as u64, name: line.to_uppercase() }));
//!     }
//!     out
//! }
//!
//! let lines = vec!["ada"; 1000];
//! let before = batch_alloc::stats().scoped_allocations;
//! let records = parse(&lines);
//! assert_eq!((records[999].id, records[999].name.as_str()), (999, "ADA"));
//! // 1000 boxes, 1000 names, and the vector that holds the boxes.
//! assert_eq!(batch_alloc::stats().scoped_allocations - before, 2001);
//!
//! // Ordinary allocations: drop them anywhere, one by one, on any thread.
//! std::thread::spawn(move || drop(records)).join().unwrap();
//! ```
//!
//! A library can use the attribute without choosing the global allocator:
//! where `BatchAlloc` is not installed, the same code runs with plain
//! allocations, correct and merely not faster ([`is_active`] tells which).
//!
//! # The attribute
//!
//! Put [`#[batch_alloc]`](macro@batch_alloc) on a function, a method or a
//! whole `impl` block (every method in it): free functions, trait methods,
//! `async fn`s, generic, `unsafe` and `extern` functions. Each outermost
//! loop of the function (`for`, `while`, `while let`, `loop`) opens this
//! thread's scope as it starts, or joins the one a caller opened (one
//! thread-local read); the scope closes when the loop that opened it ends,
//! however it ends (`break`, `return`, `?`, a panic). While it is open:
//!
//! - each `Box::new(value)` of an annotated function is a bump of the
//!   thread's run of its size class, known at compile time;
//! - with *capture* (the default), every other allocation on the thread that
//!   the runtime has a size class for (up to 4 KiB) comes from the runs too:
//!   [`set_capture`]`(`[`Capture::Boxes`]`)`, or the environment variable
//!   `BATCH_ALLOC_CAPTURE=boxes`, limits scopes to annotated `Box::new`s.
//!
//! An `.await` inside an annotated loop closes the scope before it and
//! opens one after, on whichever thread the future then runs; annotated
//! `async fn`s stay `Send`. A scope never serves another thread.
//! Evaluation and drop order, a loop's value, labels, `break`, `continue`,
//! `return`, `?` and panics behave as written. The generated code names only
//! this crate's hidden paths, uses hygienic locals and contains no
//! `unsafe`, so it compiles under `#![forbid(unsafe_code)]`.
//!
//! `#[batch_alloc(boxes)]` keeps the per-site form: each `Box::new` inside a
//! loop takes its slot from a batch of its own, declared outside the loop
//! and sized by its trip count, and nothing else changes. When the attribute
//! finds nothing to rewrite, the compiler warns at the function's name and
//! says why; `#[batch_alloc(quiet)]` silences it.
//!
//! # What a scope serves, and what it leaves
//!
//! | left to the inner allocator | why |
//! |---|---|
//! | larger than 4 KiB, or aligned past a page | no size class serves it |
//! | on another thread | a scope serves its own thread only |
//! | before the outermost annotated loop starts, or after it ends | no scope is open |
//! | anything but annotated `Box::new`s, under [`Capture::Boxes`] | capture is off |
//! | everything, where [`BatchAlloc`] is not the global allocator | nothing could free the slots |
//!
//! The attribute works on syntax: a `Box::new` inside a macro call
//! (`vec![Box::new(x)]`) or passed as a value (`.map(Box::new)`) is not
//! rewritten, though a capturing scope still serves its allocation. A
//! thread's runs stay with it between scopes and go back when it exits;
//! empty spans past a 32 MiB pool go back to the operating system after
//! 100 ms unused. [`trim()`] gives back the calling thread's runs and every
//! cached frame at once.
//!
//! # `BatchAlloc` over another allocator
//!
//! [`BatchAlloc`] wraps any [`GlobalAlloc`](std::alloc::GlobalAlloc):
//! [`BatchAlloc::system()`] for the system allocator, [`BatchAlloc::new`] for
//! any other, both `const fn`. Every allocation that is not a batch slot goes
//! to the inner allocator untouched; `dealloc` and `realloc` tell a slot from
//! any other pointer with one range check. With mimalloc (`mimalloc = "0.1"`
//! in `[dependencies]`):
//!
//! ```
//! use batch_alloc::BatchAlloc;
//! use mimalloc::MiMalloc;
//!
//! #[global_allocator]
//! static GLOBAL: BatchAlloc<MiMalloc> = BatchAlloc::new(MiMalloc);
//!
//! let text = String::from("served by mimalloc, freed through the wrapper");
//! assert!(batch_alloc::is_active());
//! # drop(text);
//! ```
//!
//! # `Batch` by hand
//!
//! The attribute is a convenience over [`Batch<T>`](Batch), which can be used
//! directly, for example where the boxes are made in an iterator chain:
//!
//! ```
//! use batch_alloc::{Batch, BatchAlloc};
//!
//! #[global_allocator]
//! static GLOBAL: BatchAlloc = BatchAlloc::system();
//!
//! let words = ["alpha", "beta", "gamma", "delta"];
//! let mut batch = Batch::with_capacity(words.len()); // a hint, not a promise
//! let boxes: Vec<Box<String>> = words.iter().map(|w| batch.alloc(w.to_string())).collect();
//! drop(batch); // unused slots go back; the boxes live on
//! assert_eq!(*boxes[3], "delta");
//! ```
//!
//! [`Batch::new`] is for a loop of unknown length; its refills grow by a
//! [`Growth`] policy, chosen per batch ([`Batch::with_growth`]) or for the
//! process ([`set_default_growth`]). [`size_classes`] lists the slot sizes,
//! and [`limits`] the constants the runtime is built with.
//!
//! # Seeing what happened: `stats()` and `report()`
//!
//! [`stats()`] returns a [`Stats`] snapshot of the whole process:
//! allocations served from scopes, boxes handed out from batches, refills,
//! slots still owned by allocations, and the span memory held and cached. It
//! walks every span, so call it for diagnostics and tests, not in a hot
//! loop; with other threads quiet and their batches dropped, every field is
//! exact. With the `report` feature, [`report()`] says, per annotated loop
//! and per rewritten `Box::new`, what happened and why an allocation was
//! plain.
//!
//! ```
//! use batch_alloc::{Batch, BatchAlloc};
//!
//! #[global_allocator]
//! static GLOBAL: BatchAlloc = BatchAlloc::system();
//!
//! let before = batch_alloc::stats();
//! let mut batch = Batch::with_capacity(1000);
//! let boxes: Vec<Box<[u64; 4]>> = (0..1000).map(|i| batch.alloc([i; 4])).collect();
//! drop(batch);
//!
//! let now = batch_alloc::stats();
//! assert_eq!(now.batched_boxes - before.batched_boxes, 1000);
//! assert_eq!(now.live_slots - before.live_slots, 1000);
//! assert!(now.reserve_calls > before.reserve_calls);
//! assert!(now.span_bytes >= 1000 * 32);
//!
//! drop(boxes);
//! assert_eq!(batch_alloc::stats().live_slots, before.live_slots);
//! ```
//!
//! If neither `scoped_allocations` nor `batched_boxes` moves, nothing was
//! served: the loops were not annotated, the type is not batched, or
//! `BatchAlloc` is not installed (see the table above, and [`report()`]).
//!
//! # The `serde` feature
//!
//! ```toml
//! batch-alloc = { version = "0.1", features = ["serde"] }
//! ```
//!
//! serde's own impls box each element of a `Vec<Box<T>>` with `Box::new`.
//! The helpers in [`serde_boxes`] read the same input into the same types,
//! with the same errors, but take each container's boxes from one batch:
//!
//! ```
//! # #[cfg(feature = "serde")] {
//! use batch_alloc::BatchAlloc;
//! use serde::Deserialize;
//!
//! #[global_allocator]
//! static GLOBAL: BatchAlloc = BatchAlloc::system();
//!
//! #[derive(Deserialize)]
//! struct Point {
//!     x: i32,
//!     y: i32,
//! }
//!
//! #[derive(Deserialize)]
//! struct Path {
//!     #[serde(deserialize_with = "batch_alloc::serde_boxes::vec_box")]
//!     points: Vec<Box<Point>>,
//! }
//!
//! let path: Path = serde_json::from_str(r#"{"points": [{"x": 1, "y": 2}, {"x": 3, "y": 5}]}"#)?;
//! assert_eq!(path.points[1].y, 5);
//! # }
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! A hand-written serde `Visitor` needs no feature: put the attribute on its
//! `visit_seq` or `visit_map` ([`serde_boxes`] shows how). The module is
//! called `serde_boxes`, so `use batch_alloc::*;` next to
//! `use serde::Deserialize;` shadows nothing.
//!
// Without the feature the module is not there to link to.
#![cfg_attr(
    not(feature = "serde"),
    doc = "[`serde_boxes`]: #the-serde-feature \"the serde feature is off in this build\""
)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

pub use batch_alloc_macros::batch_alloc;
pub use batch_alloc_rt::{
    capture, default_growth, is_active, limits, set_capture, set_default_growth, size_classes,
    stats, trim, Batch, BatchAlloc, Capture, Growth, SizeClass, Stats,
};

/// `deserialize_with` helpers that fill containers of boxes (`Vec<Box<T>>`,
/// maps of boxed values, ...) from one batch; the `serde` feature. Also: how
/// to batch a hand-written serde `Visitor` with `#[batch_alloc]`.
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub mod serde_boxes;

mod report;
pub use report::report;

/// Runs `f` inside this thread's batch scope, and returns what it returns:
/// the way in for code with no annotated function of its own, such as a
/// derived `Deserialize` whose loops are inside serde.
///
/// ```
/// use batch_alloc::BatchAlloc;
/// use serde::Deserialize;
///
/// #[global_allocator]
/// static GLOBAL: BatchAlloc = BatchAlloc::system();
///
/// #[derive(Deserialize)]
/// struct Order {
///     sku: String,
///     tags: Vec<String>,
/// }
///
/// let json = r#"[{"sku": "a-1", "tags": ["new"]}, {"sku": "b-2", "tags": []}]"#;
/// let before = batch_alloc::stats().scoped_allocations;
/// let orders: Vec<Order> = batch_alloc::scope(|| serde_json::from_str(json))?;
/// assert_eq!(orders[1].sku, "b-2");
/// // The vector, the two strings and the tag list and its string.
/// assert!(batch_alloc::stats().scoped_allocations - before >= 5);
/// # Ok::<(), serde_json::Error>(())
/// ```
///
/// If no scope is open on the thread, `scope` opens one for the call and
/// closes it when `f` returns or unwinds; if one is open (an annotated
/// function or another `scope` up the stack), `f` joins it. While it is
/// open, every allocation on this thread that a size class serves (up to
/// 4 KiB) comes from the thread's runs: boxes, strings, vectors, maps,
/// whatever library code allocates. Each is an ordinary allocation, freed
/// one by one, on any thread, at any time. Opening costs a thread-local
/// read and write, joining one read; nothing is allocated. Where
/// [`BatchAlloc`] is not the global allocator, `f` runs as without it.
///
/// A scope serves its own thread only: for `rayon`, call it inside each
/// task (`par_iter().map(|doc| batch_alloc::scope(|| parse(doc)))`). For
/// a future, put `#[batch_alloc]` on the `async fn`: a scope must not be
/// held while a future is suspended, and the attribute opens one for each
/// poll instead.
#[track_caller]
#[inline]
pub fn scope<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(feature = "report")]
    {
        let mut guard = __private::Scope::new();
        __private::enter_at(report::site_at(std::panic::Location::caller()), &mut guard);
        f()
    }
    #[cfg(not(feature = "report"))]
    batch_alloc_rt::scope(f)
}

/// Not public API: the paths code generated by `#[batch_alloc]` names.
#[doc(hidden)]
///
/// The functions that take the user's value are `#[inline(always)]` only
/// where debug assertions are off (optimised builds, in practice): in an
/// unoptimised build an always-inlined callee's locals join its caller's
/// frame, once per call site, and a recursive parser with many `Box::new`s
/// then needed about twice the stack.
pub mod __private {
    pub use crate::report::{Site, SiteKind};
    pub use batch_alloc_rt::{scope_on_this_thread, RawBatch, Scope as RawScope};
    pub use core::iter::{IntoIterator, Iterator};

    use crate::report::Outcome;
    use batch_alloc_rt::{batchable, is_active, try_boxed, ScopedFuture};
    use core::future::Future;

    /// The guard `#[batch_alloc]` declares first in a function body (and
    /// outside a closure's loop): this thread's scope, opened or joined by
    /// [`enter_at`], closed when the guard drops if it opened it. With the
    /// `report` feature it also remembers where it opened the scope, to
    /// count what the scope served.
    #[derive(Debug, Default)]
    pub struct Scope {
        inner: batch_alloc_rt::Scope,
        #[cfg(feature = "report")]
        opened_at: Option<(&'static Site, u64)>,
    }

    impl Scope {
        /// A guard that holds nothing yet.
        #[inline(always)]
        pub const fn new() -> Scope {
            Scope {
                inner: batch_alloc_rt::Scope::new(),
                #[cfg(feature = "report")]
                opened_at: None,
            }
        }
    }

    #[cfg(feature = "report")]
    impl Drop for Scope {
        fn drop(&mut self) {
            if let Some((site, start)) = self.opened_at.take() {
                site.count_served(crate::report::served_on_this_thread().wrapping_sub(start));
            }
        }
    }

    /// What `#[batch_alloc]` puts first in a function body and before a
    /// closure's loop: enters the guard, and counts at `site` whether it
    /// opened a scope.
    #[inline(always)]
    pub fn enter_at(site: &'static Site, scope: &mut Scope) {
        scope.inner.enter();
        if cfg!(feature = "report") {
            count_entry(site, scope);
        }
    }

    #[cfg_attr(not(feature = "report"), allow(unused_variables))]
    fn count_entry(site: &'static Site, scope: &mut Scope) {
        let opened = scope.inner.opened();
        site.count(match opened {
            Some(true) => Outcome::Served,
            _ if is_active() => Outcome::Elsewhere,
            _ => Outcome::NotInstalled,
        });
        #[cfg(feature = "report")]
        if opened == Some(true) {
            scope.opened_at = Some((site, crate::report::served_on_this_thread()));
        }
    }

    /// What `#[batch_alloc]` makes of an `async fn`'s body and of an
    /// `async` block: the same future, each of whose polls runs inside the
    /// polling thread's scope (opened or joined, and closed before the poll
    /// returns), counted at `site`.
    #[inline(always)]
    pub fn scoped_future<F: Future>(
        site: &'static Site,
        future: F,
    ) -> impl Future<Output = F::Output> {
        #[cfg(not(feature = "report"))]
        {
            let _ = site;
            ScopedFuture::new(future, batch_alloc_rt::entered)
        }
        #[cfg(feature = "report")]
        ScopedFuture::new(future, move || {
            let mut scope = Scope::new();
            enter_at(site, &mut scope);
            scope
        })
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

    /// What `#[batch_alloc]` turns `Box::new(value)` into, counted at
    /// `site` (see [`boxed`]).
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn boxed_at<T, F>(site: &'static Site, new: F, value: T) -> Box<T>
    where
        F: FnOnce(T) -> Box<T>,
    {
        if !cfg!(feature = "report") {
            return boxed(new, value);
        }
        match try_boxed(value) {
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

    /// What `#[batch_alloc(boxes)]` turns `Box::new(value)` into, counted at
    /// `site` (see [`alloc`]).
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn alloc_at<T, F>(site: &'static Site, batch: &mut RawBatch, new: F, value: T) -> Box<T>
    where
        F: FnOnce(T) -> Box<T>,
    {
        if !cfg!(feature = "report") {
            return alloc(batch, new, value);
        }
        let refills = batch.refills();
        let boxed = match batch.try_alloc(value) {
            Ok(boxed) => {
                site.count(Outcome::Served);
                boxed
            }
            Err(value) => {
                // A tiny loop's first boxes are lone slots: a batchable box
                // is plain only when there is no memory.
                site.count(plain_because::<T>(Outcome::NoMemory));
                Box::new(value)
            }
        };
        if batch.refills() != refills {
            site.count(Outcome::Refill);
        }
        boxed
    }

    /// What `#[batch_alloc]` turns `Box::new(value)` into: a slot from the
    /// open batch scope's run of `T`'s class, or `Box::new(value)`.
    ///
    /// `new` is the user's own `Box::new` path, as for [`alloc`].
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn boxed<T, F>(new: F, value: T) -> Box<T>
    where
        F: FnOnce(T) -> Box<T>,
    {
        let _ = new;
        batch_alloc_rt::boxed(value)
    }

    /// What `#[batch_alloc(boxes)]` turns `Box::new(value)` into, inside a
    /// loop.
    ///
    /// `new` is the user's own `Box::new` path, passed along and never called:
    /// its type must be a function from `T` to `std::boxed::Box<T>`, so a user
    /// type or import called `Box` is a compile error at the user's tokens,
    /// never a silent change of type. (The return type is `Box<T>` itself,
    /// not a type inferred from `new`, so that an expected type such as
    /// `Box<dyn Fn(&str)>` still flows into a closure's signature.)
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn alloc<T, F>(batch: &mut RawBatch, new: F, value: T) -> Box<T>
    where
        F: FnOnce(T) -> Box<T>,
    {
        let _ = new;
        batch.alloc(value)
    }
}
