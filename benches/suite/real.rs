//! The real-programs table (issue 12): whole programs, each compiled from
//! one source as written and annotated, every one run in a fresh process of
//! every suite binary by `benches/suite/programs.py`.
//!
//! - `program list`: the programs, their default sizes and the variants
//!   (and which of them only mean something where `BatchAlloc` is
//!   installed), as one JSON line (the driver's list comes from here).
//! - `program NAME VARIANT REPS [SIZE]`: builds NAME's input, then runs the
//!   VARIANT twin REPS times (each run the program's whole work: build,
//!   use, drop) and prints one JSON line: the time of each run, the peak
//!   resident memory of the first run, the boxes and a check value a run
//!   made, and `batch_alloc::stats()` before and after the runs. `REPS` 0
//!   builds the input only: callgrind's count of `REPS` 1 less that of
//!   `REPS` 0 is one run's instructions, start-up and input left out.
//!
//! The programs are the examples' (the `workloads` crate's), so the table
//! measures the code the examples run, annotated as they annotate it. Each source
//! writes its code out twice: as written and under `#[batch_alloc]` (see
//! [`Variant`]):
//!
//! | name | source | one run |
//! |---|---|---|
//! | `records` | `examples/deserialize.rs` | serde_json, through the hand-written visitors, into `Vec<Box<Record>>` with boxed children; a digest; drop |
//! | `tree` | `examples/deserialize.rs` (its `--input` mode) | the same generated JSON into a document tree that boxes every value; a walk; drop |
//! | `expr` | `examples/expr_parser.rs` | parse generated `let` lines into `Box<Expr>` trees, evaluate, drop |
//! | `linked_list` | `examples/linked_list.rs` | read an edge list into lists of `Box<Edge>`, walk them, drop them on another thread |
//! | `binary_trees` | `programs.rs` (`trees`) | the benchmarks game's binary-trees, trees built by loops |
//! | `stmt` | `examples/stmt_parser.rs` | lex, parse and check a generated Lua-like module bundle, drop tree and tokens |
//! | `derive` | `real/derive.rs` | the `records` export into types that only derive `Deserialize`, one `from_str`; annotated: inside `batch_alloc::scope` |
//! | `chains` | `real/chains.rs` | an access log through iterator chains (no `for`) into maps, boxed entries and a tree of path segments; every fn annotated |
//! | `par_derive_1t`, `par_derive_2t` | `real/derive.rs` | 64 documents of the `derive` export parsed by rayon on 1 or 2 threads; annotated: each task in a scope |
//!
//! Sizes are chosen so that one run takes roughly 50 to 300 ms natively.

// The programs box what they hold, which is the point of them.
#![allow(clippy::vec_box)]

use std::fs;
use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::Binary;

pub mod chains;
pub mod derive;
pub mod deserialize;
pub mod expr;
pub mod linked_list;
pub mod stmt;

use workloads::timing::{status_kib, Clock};

/// Which twin of a program runs, and how.
///
/// To add one: a variant here and in [`Variant::ALL`], its name in
/// [`Variant::name`], its module in each program's source if it is a twin
/// of its own (one line where the source writes out its twins), and an arm
/// in each program's `run` (the compiler lists them). The driver and the
/// report take the list from `program list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// As written.
    Plain,
    /// Under `#[batch_alloc]`, where the example puts it.
    Attr,
}

impl Variant {
    pub const ALL: [Variant; 2] = [Variant::Plain, Variant::Attr];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Plain => "plain",
            Variant::Attr => "attr",
        }
    }

    fn parse(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }
}

/// What one run reports: the boxes it made (one per `Box` in what it
/// built) and a value computed from its result, the same for every twin
/// and every allocator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub boxes: u64,
    pub check: u64,
}

/// A program of the table.
pub trait Program {
    const NAME: &'static str;
    /// What `size` counts, and its default.
    const UNIT: &'static str;
    const SIZE: u64;
    /// One line for the report.
    const ABOUT: &'static str;

    /// Everything a run reads, made before any run.
    type Input: Text;

    fn input(size: u64) -> Self::Input;

    /// The whole program once: build, use, drop.
    fn run(variant: Variant, input: &Self::Input) -> Outcome;
}

/// A program's input, as the report sizes it.
pub trait Text {
    /// Bytes of input text (0 for none).
    fn bytes(&self) -> usize;
}

impl Text for String {
    fn bytes(&self) -> usize {
        self.len()
    }
}

/// binary-trees, from the criterion suite's `programs.rs`.
pub struct BinaryTrees;

/// binary-trees reads no text, only the depth of its trees.
pub struct Depth(u32);

impl Text for Depth {
    fn bytes(&self) -> usize {
        0
    }
}

impl Program for BinaryTrees {
    const NAME: &'static str = "binary_trees";
    const UNIT: &'static str = "levels";
    const SIZE: u64 = 15;
    const ABOUT: &'static str =
        "binary-trees (benchmarks game), trees built level by level by loops, 16-byte nodes";

    type Input = Depth;

    fn input(size: u64) -> Depth {
        Depth(u32::try_from(size).expect("a tree depth"))
    }

    fn run(variant: Variant, &Depth(depth): &Depth) -> Outcome {
        use super::programs::trees;
        let check = match variant {
            Variant::Plain => trees::plain::run(depth),
            Variant::Attr => trees::attr::run(depth),
        };
        Outcome {
            boxes: trees::boxes(depth),
            check,
        }
    }
}

/// Calls `$visit!(Type)` for every program, in the table's order.
macro_rules! each_program {
    ($visit:ident) => {
        $visit!(deserialize::Records);
        $visit!(deserialize::Tree);
        $visit!(expr::Expr);
        $visit!(linked_list::LinkedList);
        $visit!(BinaryTrees);
        $visit!(stmt::Stmt);
        $visit!(derive::Derive);
        $visit!(chains::Chains);
        $visit!(derive::ParDerive1);
        $visit!(derive::ParDerive2);
    };
}

const USAGE: &str = "usage: program list | program NAME VARIANT REPS [SIZE]";

/// The `program` mode.
pub fn main<B: Binary>(args: &[String]) {
    if args.first().map(String::as_str) == Some("list") {
        return list();
    }
    let [name, variant, reps, rest @ ..] = args else {
        panic!("{USAGE}");
    };
    let variant = Variant::parse(variant)
        .unwrap_or_else(|| panic!("variant {variant}: one of {:?}", names(Variant::ALL)));
    let reps: usize = reps.parse().expect(USAGE);
    let size: Option<u64> = rest.first().map(|s| s.parse().expect(USAGE));
    macro_rules! measure_if_named {
        ($program:ty) => {
            if name == <$program>::NAME {
                return measure::<B, $program>(variant, reps, size);
            }
        };
    }
    each_program!(measure_if_named);
    panic!("no program {name}");
}

fn names(variants: impl IntoIterator<Item = Variant>) -> Vec<&'static str> {
    variants.into_iter().map(Variant::name).collect()
}

fn list() {
    let mut programs = Vec::new();
    macro_rules! describe {
        ($program:ty) => {
            programs.push(json!({
                "name": <$program>::NAME,
                "unit": <$program>::UNIT,
                "size": <$program>::SIZE,
                "about": <$program>::ABOUT,
            }))
        };
    }
    each_program!(describe);
    println!(
        "{}",
        json!({
            "programs": programs,
            "variants": names(Variant::ALL),
            "wrapped_only": [],
        })
    );
}

/// Builds the input, runs `reps` times and prints the JSON line. Reads of
/// `/proc` and `stats()` happen whatever `reps` is, so that callgrind's
/// difference between two `reps` is the runs alone.
fn measure<B: Binary, P: Program>(variant: Variant, reps: usize, size: Option<u64>) {
    let size = size.unwrap_or(P::SIZE);
    let input = P::input(size);
    // The peak from here on is the program's (its input resident), not the
    // generator's.
    let peak_reset = reset_peak();
    let rss_before = status_kib("VmRSS:");
    let stats_before = stats();
    let clock = Clock::start();
    let mut times = Vec::with_capacity(reps);
    let mut walls = Vec::with_capacity(reps);
    let mut outcome = None;
    let mut timed_run = || {
        let wall = Instant::now();
        let (got, time) = clock.time(|| P::run(variant, black_box(&input)));
        walls.push(wall.elapsed());
        times.push(time);
        match outcome {
            None => outcome = Some(got),
            Some(first) => assert_eq!(first, got, "two runs of {} differ", P::NAME),
        }
    };
    if reps > 0 {
        timed_run();
    }
    let peak_first = status_kib("VmHWM:");
    for _ in 1..reps {
        timed_run();
    }
    let peak_all = status_kib("VmHWM:");
    let stats_after = stats();
    let ms = |d: &[Duration]| d.iter().map(|t| t.as_secs_f64() * 1e3).collect::<Vec<_>>();
    println!(
        "{}",
        json!({
            "program": P::NAME,
            "variant": variant.name(),
            "allocator": B::ALLOCATOR.label(),
            "batch_active": batch_alloc::is_active(),
            "size": size,
            "unit": P::UNIT,
            "input_bytes": input.bytes(),
            "reps": reps,
            "times_ms": ms(&times),
            "wall_ms": ms(&walls),
            "clock": clock.describe(),
            "boxes": outcome.map(|o| o.boxes),
            "check": outcome.map(|o| o.check.to_string()),
            "peak_reset": peak_reset,
            "rss_before_kib": rss_before,
            "peak_first_kib": peak_first,
            "peak_all_kib": peak_all,
            "stats_before": stats_before,
            "stats_after": stats_after,
        })
    );
}

/// `batch_alloc::stats()` as a JSON object of its numeric fields, read
/// from its `Debug` form so that counters the runtime adds show up here
/// without a change.
fn stats() -> Value {
    let text = format!("{:?}", batch_alloc::stats());
    let fields = text
        .trim_start_matches(|c: char| c != '{')
        .trim_matches(|c: char| c == '{' || c == '}' || c.is_whitespace());
    let mut out = Map::new();
    for field in fields.split(',') {
        if let Some((name, value)) = field.split_once(':') {
            if let Ok(n) = value.trim().parse::<u64>() {
                out.insert(name.trim().to_string(), n.into());
            }
        }
    }
    Value::Object(out)
}

/// Resets the process's peak resident memory to its current resident
/// memory (Linux: `5` to `/proc/self/clear_refs`); false where it cannot.
fn reset_peak() -> bool {
    fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// FNV-1a over 64-bit words: the programs' check values.
pub fn fnv(words: impl IntoIterator<Item = u64>) -> u64 {
    words.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, w| {
        (h ^ w).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
