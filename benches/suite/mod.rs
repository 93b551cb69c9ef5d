//! The comparison suite: batch-alloc against per-item boxing on three
//! allocators, two arenas, jemalloc's batch API and the one-allocation limit.
//!
//! One workload source, five bench binaries, one per global allocator:
//! `suite_system` (glibc), `suite_mimalloc`, `suite_jemalloc`,
//! `suite_batch_system` (`BatchAlloc<System>`) and `suite_batch_mimalloc`
//! (`BatchAlloc<MiMalloc>`). Each root file installs its allocator, says
//! which [`Binary`] it is and calls [`main`].
//!
//! Run everything, interleaved, and write `docs/benchmarks.md` with:
//!
//! ```text
//! benches/suite/run.sh            # full suite (about 40 minutes on 2 cores, plus the build)
//! benches/suite/run.sh --quick    # a subset (about 8 minutes)
//! ```
//!
//! A binary can also be run alone. With no mode argument it is a criterion
//! bench (`cargo bench -p batch-alloc-benches --bench suite_system --
//! alloc_drop/64B`); the other modes are what the driver runs in separate
//! processes:
//!
//! - `info`: the allocator, its version and whether `BatchAlloc` is active,
//!   as one JSON line.
//! - `memory SIZE N STRATEGY`: keeps `N` objects of `SIZE` bytes alive and
//!   prints resident memory before, at the peak and after dropping them.
//! - `instructions STRATEGY N REPS`: allocates and drops `N` 64-byte objects
//!   `REPS` times, for counting instructions with callgrind; with
//!   `program:NAME:VARIANT` as the strategy, runs a program instead.
//! - `program list`, `program NAME VARIANT REPS [SIZE]`: the real-programs
//!   table's programs (see [`real`]), one variant in this process; run them
//!   all with `benches/suite/programs.sh`.

pub mod matrix;
pub mod memory;
pub mod programs;
pub mod real;
pub mod strategies;

use std::env;
use std::ffi::{c_char, CStr};
use std::hint::black_box;

use criterion::Criterion;

use strategies::{Batched, Boxes, BumpFresh, BumpReset, Item, Limit, Strategy, TypedArena};

/// The global allocator of one bench binary. (Each binary names one.)
#[allow(dead_code)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allocator {
    System,
    Mimalloc,
    Jemalloc,
    BatchSystem,
    BatchMimalloc,
}

impl Allocator {
    /// The name results carry, in bench ids and the report.
    pub fn label(self) -> &'static str {
        match self {
            Allocator::System => "glibc",
            Allocator::Mimalloc => "mimalloc",
            Allocator::Jemalloc => "jemalloc",
            Allocator::BatchSystem => "batch-glibc",
            Allocator::BatchMimalloc => "batch-mimalloc",
        }
    }

    /// Whether `BatchAlloc` wraps the allocator.
    pub fn wrapped(self) -> bool {
        matches!(self, Allocator::BatchSystem | Allocator::BatchMimalloc)
    }
}

/// One bench binary: its allocator and what it adds to the common strategies.
pub trait Binary {
    const ALLOCATOR: Allocator;

    /// The allocator's own version string.
    fn version() -> String;

    /// Strategies only this binary can run (jemalloc's batch API needs
    /// jemalloc as the global allocator, which frees what it hands out).
    fn extra<T: Item, V: Visit<T>>(_visit: &mut V) {}
}

/// Something done once per strategy a binary runs: register a bench, count
/// instructions, measure memory.
pub trait Visit<T: Item> {
    fn strategy<S: Strategy<T>>(&mut self, label: &str);
}

/// Visits every strategy binary `B` runs for items of type `T`.
///
/// Peers that do not depend on the global allocator for their speed (the
/// arenas take a few large chunks from it, the limit one block) run in the
/// glibc binary only.
pub fn each_strategy<B: Binary, T: Item, V: Visit<T>>(visit: &mut V) {
    match B::ALLOCATOR {
        Allocator::System => {
            visit.strategy::<Boxes<T>>("box-glibc");
            visit.strategy::<Limit<T>>("vec");
            visit.strategy::<BumpFresh<T>>("bumpalo");
            visit.strategy::<BumpReset<T>>("bumpalo-reset");
            visit.strategy::<TypedArena<T>>("typed-arena");
        }
        Allocator::Mimalloc => visit.strategy::<Boxes<T>>("box-mimalloc"),
        Allocator::Jemalloc => visit.strategy::<Boxes<T>>("box-jemalloc"),
        Allocator::BatchSystem => visit.strategy::<Batched<T>>("batch-glibc"),
        Allocator::BatchMimalloc => visit.strategy::<Batched<T>>("batch-mimalloc"),
    }
    B::extra::<T, V>(visit);
}

/// The entry point of every suite binary.
pub fn main<B: Binary>() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // glibc runs slower once a process has a second thread, and the
    // cross-thread benches spawn one: spawn one first, so that every figure
    // of every binary is measured in the same mode. (`SUITE_NO_SPAWN` lets
    // the driver count instructions without it too, to show the difference.)
    // A real program (`program` mode) runs as it is written: with the
    // threads it starts itself.
    let alone = match args.first().map(String::as_str) {
        Some("instructions") => env::var_os("SUITE_NO_SPAWN").is_some(),
        Some("program") => true,
        _ => false,
    };
    if !alone {
        std::thread::spawn(|| {}).join().unwrap();
    }
    match args.first().map(String::as_str) {
        Some("info") => info::<B>(),
        Some("memory") => memory::run::<B>(&args[1..]),
        Some("instructions") => instructions::<B>(&args[1..]),
        Some("program") => real::main::<B>(&args[1..]),
        _ => {
            let mut c = Criterion::default().configure_from_args();
            matrix::register::<B>(&mut c);
            programs::register::<B>(&mut c);
            c.final_summary();
        }
    }
}

/// Prints what the driver records about this binary, and checks that the
/// wrapper is active exactly where it should be.
fn info<B: Binary>() {
    let active = batch_alloc::is_active();
    assert_eq!(
        active,
        B::ALLOCATOR.wrapped(),
        "BatchAlloc active: {active}, expected the opposite"
    );
    println!(
        "{{\"allocator\":\"{}\",\"version\":\"{}\",\"glibc\":\"{}\",\"batch_active\":{}}}",
        B::ALLOCATOR.label(),
        B::version(),
        glibc_version(),
        active
    );
}

/// The version of the C library this process runs on.
pub fn glibc_version() -> String {
    extern "C" {
        fn gnu_get_libc_version() -> *const c_char;
    }
    // SAFETY: glibc returns a static NUL-terminated string.
    let version = unsafe { CStr::from_ptr(gnu_get_libc_version()) };
    version.to_string_lossy().into_owned()
}

/// What batches and batch scopes served so far: boxes, strings and vectors
/// alike.
fn served_by_batch_alloc() -> u64 {
    let stats = batch_alloc::stats();
    stats.batched_boxes + stats.scoped_allocations
}

/// `instructions STRATEGY N REPS`: allocate and drop `N` 64-byte objects
/// `REPS` times with one strategy (or `box`, as in memory mode); or, with `program:NAME:VARIANT` (say
/// `program:json:attr`), run a program `REPS` times at size `N`. Callgrind runs this twice with different
/// `REPS`; the difference over the items added is the cost per item, free
/// of start-up. Prints to stderr how many allocations batch-alloc served, so
/// the driver can reject a run where the wrapper was not serving them.
fn instructions<B: Binary>(args: &[String]) {
    let usage = "usage: instructions STRATEGY N REPS";
    let label = args.first().expect(usage);
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).expect(usage);
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).expect(usage);
    if let Some(program) = label.strip_prefix("program:") {
        let boxes = programs::instructions(program, n, reps);
        eprintln!("boxes_per_run={boxes}");
        eprintln!("served={}", served_by_batch_alloc());
        return;
    }
    let mut run = RunFor {
        label,
        n,
        reps,
        found: false,
    };
    if label == "box" {
        // `Box::new` per item on this binary's allocator, through the
        // wrapper where there is one: what the wrapper costs a plain box.
        run.strategy::<Boxes<strategies::T64>>("box");
    } else {
        each_strategy::<B, strategies::T64, _>(&mut run);
    }
    assert!(
        run.found,
        "{} has no strategy {label}",
        B::ALLOCATOR.label()
    );
    eprintln!("served={}", served_by_batch_alloc());
}

struct RunFor<'a> {
    label: &'a str,
    n: usize,
    reps: usize,
    found: bool,
}

impl<T: Item> Visit<T> for RunFor<'_> {
    fn strategy<S: Strategy<T>>(&mut self, label: &str) {
        if label != self.label {
            return;
        }
        self.found = true;
        let mut held = S::new(self.n);
        for _ in 0..self.reps {
            held.fill(self.n);
            black_box(&mut held);
            held.release();
        }
    }
}
