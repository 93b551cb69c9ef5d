//! Batch scopes for Rust's allocator: while a scope is open on a thread,
//! that thread's small allocations come from runs of slots reserved in one
//! call, with no type changes.
//!
//! Programs that build many small heap objects (parsers, deserializers,
//! tree and graph builders) pay the allocator's full price once per object.
//! Install [`BatchAlloc`] as the global allocator, then open a *batch
//! scope* around the work, with [`scope`] or by putting
//! [`#[batch_alloc]`](macro@batch_alloc) on a function: until the scope
//! closes, the thread's boxes, strings, vectors and whatever called library
//! code allocates are a pointer bump each. Every allocation stays an
//! ordinary one: a real `std::boxed::Box<T>` (moved to another thread,
//! dropped at any time, turned into `Box<dyn Trait>`, pinned, leaked), a
//! real `String`, freed one by one, anywhere.
//!
//! # Install
//!
//! ```toml
//! [dependencies]
//! batch-alloc = "0.1"
//! ```
//!
//! Rust 1.85 or later. Optional features:
//!
//! | feature | what it adds |
//! |---|---|
//! | `serde` | [`serde_scope`]: `#[serde(with = "batch_alloc::serde_scope")]` reads one field of a derived `Deserialize` inside a scope ([below](#the-serde-feature)) |
//! | `report` | the per-site report: every place that opens scopes counts what it did; [`report()`] returns the table, which also prints at exit |
//! | `hardened` | the runtime aborts with a message on a double free, on a free of a pointer that is not the start of a slot, and on a corrupted free list, at a price in instructions per box measured in the repository's [docs/runtime.md](https://github.com/batch-alloc/batch-alloc/blob/main/docs/runtime.md#hardening) |
//!
//! Items behind a feature appear in these pages only when the
//! documentation is built with it: docs.rs builds every feature; locally,
//! `cargo doc --all-features --open` (or `cargo doc --features serde`)
//! shows them, and a plain `cargo doc` does not.
//!
//! # Quick start
//!
//! The application installs [`BatchAlloc`] (one line, wrapping any
//! allocator); any crate, library or application, opens scopes. For a
//! derived `Deserialize`, whose loops are inside serde, wrap the call in
//! [`scope`]; for code of your own, annotate the function:
//!
//! ```
//! use batch_alloc::batch_alloc;
//!
//! #[global_allocator]
//! static GLOBAL: batch_alloc::BatchAlloc = batch_alloc::BatchAlloc::system();
//!
//! #[derive(serde::Deserialize)]
//! struct Record {
//!     name: String,
//!     tags: Vec<String>,
//! }
//!
//! // A derived Deserialize, whose loops are inside serde: a scope around the call.
//! fn load(json: &str) -> serde_json::Result<Vec<Record>> {
//!     batch_alloc::scope(|| serde_json::from_str(json))
//! }
//!
//! // Code of your own: the annotated function is a scope while it runs.
//! #[batch_alloc]
//! fn labels(records: &[Record]) -> Vec<Box<String>> {
//!     records.iter().map(|r| Box::new(format!("{}: {}", r.name, r.tags.join(", ")))).collect()
//! }
//!
//! let before = batch_alloc::stats().scoped_allocations;
//! let records = load(r#"[{"name": "ada", "tags": ["x"]}, {"name": "bob", "tags": []}]"#)?;
//! let labels = labels(&records);
//! assert_eq!(*labels[0], "ada: x");
//! // The records' vector, names, tag lists and tags; the boxes, their
//! // strings and the vector that holds them.
//! assert!(batch_alloc::stats().scoped_allocations - before >= 10);
//!
//! // Ordinary allocations: drop them anywhere, one by one, on any thread.
//! std::thread::spawn(move || drop((records, labels))).join().unwrap();
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! A library can open scopes without choosing the global allocator: where
//! `BatchAlloc` is not installed, the same code runs with plain
//! allocations, correct and merely not faster ([`is_active`] tells which).
//!
//! # What opens a scope
//!
//! A scope belongs to a thread. It is opened by the first of these to run
//! on the thread, and everything that runs while it is open joins it (one
//! thread-local read): the functions it calls, annotated or not,
//! recursively.
//!
//! - **[`scope(|| ..)`](scope)** around any code: opens the thread's scope
//!   for the closure (or joins the one open), closes it when the closure
//!   returns or unwinds, and returns the closure's value. The way in for a
//!   derived `Deserialize` behind one `from_str` call, or for a `rayon`
//!   task: `par_iter().map(|doc| batch_alloc::scope(|| parse(doc)))`, each
//!   worker thread with its own scope.
//! - **An annotated synchronous function**
//!   ([`#[batch_alloc]`](macro@batch_alloc) on a function, a method or a
//!   whole `impl` block): its body is a scope while it runs, whatever it is
//!   written with (`for` and `while` loops, iterator chains, recursion, one
//!   call into a library). The scope closes when the function returns,
//!   however it returns (`?`, a panic unwinding through it). The function
//!   is otherwise the one written: its block, tokens, spans and edition,
//!   its parameters and its drops are as they were; the attribute adds two
//!   statements in front of the body, which open or join the scope, and
//!   inside an open scope an annotated call costs a thread-local read, a
//!   test and a byte of the frame (about 8 instructions, measured in the
//!   repository's `docs/macro.md`). A closure in it runs in whatever scope
//!   is open where it is called.
//! - **An annotated `async fn`**: a scope for each poll, opened when the
//!   poll starts and closed before it returns, so no scope is held while
//!   the future is suspended. The future is the one the compiler makes of
//!   the `async fn` (the same size, `Send` when it was).
//!
//! The generated code names only this crate's hidden paths, uses hygienic
//! locals and contains no `unsafe`, so it compiles under
//! `#![forbid(unsafe_code)]`.
//!
//! # What a scope serves, and when it does nothing
//!
//! While a scope is open on a thread, that thread's allocations of up to
//! 4 KiB (the largest size class) come from the thread's runs of slots, and
//! larger ones up to 64 MiB are served as large blocks of whole 64 KiB
//! frames, when rounding them up to frames wastes at most an eighth of
//! them. Each is freed by `dealloc` on any thread, at any time, after the
//! scope has closed. Left to the inner allocator:
//!
//! | allocation | why |
//! |---|---|
//! | any, where [`BatchAlloc`] is not the global allocator | nothing could free the slots; a debug build says so once on stderr |
//! | made where no scope is open on the thread (before the scope opens, after it closes) | no scope is open |
//! | on another thread, including threads the scope's code starts | a scope serves its own thread only |
//! | larger than 64 MiB, or aligned past a frame (64 KiB); aligned past a page (8 KiB) and 4 KiB or smaller | no size class or large block serves it |
//! | past 4 KiB, where whole frames would waste more than an eighth of it (4 to 57 KiB, 64 to 114 KiB, ...) | the inner allocator's classes fit it |
//!
//! A thread's runs stay with it between scopes, so a short scope does not
//! pay for a refill, and go back when it exits; empty spans past a 32 MiB
//! pool go back to the operating system after 100 ms unused. [`trim()`]
//! gives back the calling thread's runs and every cached frame at once.
//!
//! # Environment variables
//!
//! Read once, at first use (the first scope, the report at exit). Values are accepted in any case, with white space
//! around them; names must be spelled exactly. An unknown value, or a
//! `BATCH_ALLOC_*` name that is none of these, gets one line on stderr
//! naming what is accepted, and the default is used.
//!
//! | variable | accepted values | default | what it does |
//! |---|---|---|---|
//! | `BATCH_ALLOC_REPORT` | `on`, `off`, `1`, `0`, `true`, `false`, `yes`, `no` | `on` | with the `report` feature, whether the per-site report prints to stderr at exit |
//! | `BATCH_ALLOC_WARNINGS` | the same as `BATCH_ALLOC_REPORT` | `on` | whether a debug build says, once, that a scope opened without `BatchAlloc` installed |
//!
//! # `BatchAlloc` over another allocator
//!
//! [`BatchAlloc`] wraps any [`GlobalAlloc`](std::alloc::GlobalAlloc):
//! [`BatchAlloc::system()`] for the system allocator, [`BatchAlloc::new`] for
//! any other, both `const fn`. Every allocation that is not a slot goes
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
//! Code that knows how many boxes of one type it is about to make can say
//! so with a [`Batch<T>`](Batch): a run of `T`'s size class of its own,
//! its first refill the capacity, in one call. It needs no scope:
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
//! [`Batch::new`] is for a loop of unknown length: its refills double, as
//! a scope's runs do.
//!
//! # Seeing what happened: `stats()` and `report()`
//!
//! [`stats()`] returns a [`Stats`] snapshot of the whole process:
//! allocations served from scopes, boxes handed out from batches, refills,
//! slots still owned by allocations, and the span memory held and cached. It
//! walks every span, so call it for diagnostics and tests, not in a hot
//! loop; with other threads quiet and their batches dropped, every field is
//! exact. With the `report` feature, [`report()`] says, per place that
//! opens scopes, how often it opened or joined one and what its scopes
//! served.
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
//! served: no scope was open, or `BatchAlloc` is not installed (see the
//! table above, and [`report()`]).
//!
//! # The `serde` feature
//!
//! ```toml
//! batch-alloc = { version = "0.1", features = ["serde"] }
//! ```
//!
//! A derived `Deserialize` needs no feature: [`scope`] around the call
//! serves everything it allocates. Where the call is not yours (a
//! framework deserializes for you), [`serde_scope`] reads one field inside
//! a scope:
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
//!     #[serde(with = "batch_alloc::serde_scope")]
//!     points: Vec<Box<Point>>,
//! }
//!
//! let path: Path = serde_json::from_str(r#"{"points": [{"x": 1, "y": 2}, {"x": 3, "y": 5}]}"#)?;
//! assert_eq!(path.points[1].y, 5);
//! # }
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! A hand-written serde `Visitor` needs no feature either: put the
//! attribute on its `visit_seq` or `visit_map`. The module is called
//! `serde_scope`, so `use batch_alloc::*;` next to `use serde::Deserialize;`
//! shadows nothing.
//!
//! # Further reading
//!
//! The repository, <https://github.com/batch-alloc/batch-alloc>, has the
//! guides these pages summarise, in `docs/`: `scopes.md` (what a scope
//! serves and what it costs in memory), `macro.md` (what the
//! attribute adds, and what it costs), `serde.md`, `runtime.md` (how the runtime works,
//! and hardening), and the benchmarks; `examples/macro-expanded.rs` in a
//! checkout shows complete expansions of the attribute.
//!
// Without the feature the module is not there to link to.
#![cfg_attr(
    not(feature = "serde"),
    doc = "[`serde_scope`]: #the-serde-feature \"the serde feature is off in this build\""
)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

pub use batch_alloc_macros::batch_alloc;
pub use batch_alloc_rt::{is_active, report, scope, stats, trim, Batch, BatchAlloc, Stats};

/// Not public API: the paths the code `#[batch_alloc]` generates names
/// (the runtime's `__private`, in its `lib.rs`: the guard and the scoped
/// future of `front/expansion.rs`, the sites of `front/report.rs`).
#[doc(hidden)]
pub use batch_alloc_rt::__private;

/// `#[serde(with = "batch_alloc::serde_scope")]`: one field of a derived
/// `Deserialize` read inside a batch scope; the `serde` feature.
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub mod serde_scope;

// The README's Rust blocks, compiled and run as doctests. The README is not
// the front page itself (its links into docs/ would not resolve on docs.rs);
// docs/check_docs.py keeps the claims the two share equal.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
