//! Linked lists built by `while let` loops and dropped on another thread,
//! with and without `#[batch_alloc]`.
//!
//! ```text
//! cargo run --release --example linked_list
//! cargo run --release --example linked_list -- --edges 5000000 --reps 5
//! ```
//!
//! It generates a graph as an edge list in text (`from to` per line), the
//! way graphs are exchanged, and reads it into adjacency lists: one singly
//! linked list of `Box<Edge>` per vertex, each new edge pushed at its
//! list's head, all in one `while let` loop over the scanner's numbers.
//! Then it walks every list (a checksum) and hands the graph to a second
//! thread that drops it: each box is freed on a thread other than the one
//! that made it. Once through the reader as written (`mod plain`), once
//! under the attribute (`mod batched`); both graphs must be equal.
//!
//! The lists drop iteratively (a long list dropped recursively would
//! overflow the stack), as linked lists in Rust must.
//!
//! Files: `linked_list/graph.rs` (the graph, the reader written out both
//! ways, the generated edge list, the dropping thread; what a harness
//! includes), `shared/` (options, timing, the alternating runs).

#![forbid(unsafe_code)]

use std::process::ExitCode;

use batch_alloc::{is_active, BatchAlloc};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

#[path = "shared/cli.rs"]
mod cli;
#[path = "shared/timing.rs"]
pub mod timing;
#[path = "shared/versions.rs"]
pub mod versions;

#[path = "linked_list/graph.rs"]
mod graph;

pub use graph::*;

use cli::Args;
use timing::{share, thousands, Clock};
pub use versions::Variant;
use versions::{Run, Version};

pub fn read(variant: Variant, text: &str) -> Result<Graph, ReadError> {
    match variant {
        Variant::Plain => plain::read(text),
        Variant::Batched => batched::read(text),
    }
}

/// Both versions on one edge list; times: read, walk, drop on the other
/// thread.
#[derive(Debug)]
pub struct Comparison {
    pub plain: Version<3>,
    pub batched: Version<3>,
    pub checksum: u64,
}

/// Reads, walks and drops (elsewhere) `text` with both versions: once
/// keeping both graphs to check that they are equal, then `reps` timed
/// runs each, alternating which goes first.
pub fn compare(
    text: &str,
    reps: usize,
    dropper: &Dropper,
    clock: &Clock,
    mut progress: impl FnMut(&str),
) -> Result<Comparison, String> {
    let describe = |e: ReadError| format!("line {}: {}", e.line, e.message);
    let plain = read(Variant::Plain, text).map_err(describe)?;
    let batched = read(Variant::Batched, text).map_err(describe)?;
    if plain != batched {
        return Err("the two readers gave different graphs".to_string());
    }
    let checksum = plain.checksum();
    dropper.drop_elsewhere(plain);
    dropper.drop_elsewhere(batched);
    progress("checked: both readers give equal graphs");

    let run = |variant| {
        let (graph, read_time) = clock.time(|| read(variant, text));
        let graph = graph.map_err(describe)?;
        let (sum, walk_time) = clock.time(|| graph.checksum());
        if sum != checksum {
            return Err("a run read a different graph".to_string());
        }
        let boxes = graph.edges();
        let drop_time = dropper.drop_elsewhere(graph);
        Ok(Run {
            times: [read_time, walk_time, drop_time],
            boxes,
        })
    };
    let [plain, batched] = versions::alternate(reps, run, progress)?;
    Ok(Comparison {
        plain,
        batched,
        checksum,
    })
}

pub fn table(c: &Comparison) -> String {
    let mut rows = Vec::new();
    for (name, phase) in [("plain", &c.plain), ("#[batch_alloc]", &c.batched)] {
        let mut row = vec![name.to_string()];
        row.extend(phase.times.medians());
        row.push(thousands(phase.boxes));
        row.push(share(phase.from_batches, phase.boxes));
        rows.push(row);
    }
    let mut row = vec!["speedup".to_string()];
    row.extend(c.plain.times.speedups(&c.batched.times));
    rows.push(row);
    timing::table(
        &[
            "",
            "read",
            "walk",
            "drop on another thread",
            "total",
            "boxes",
            "from batches",
        ],
        &rows,
    )
}

pub const DEFAULT_VERTICES: u32 = 50_000;
pub const DEFAULT_EDGES: u64 = 1_000_000;
pub const DEFAULT_REPS: usize = 7;

pub const USAGE: &str = "\
usage: cargo run --release --example linked_list -- [OPTIONS]

Reads a generated edge list into adjacency lists of Box<Edge> in one
`while let` loop, walks them and drops them on another thread, through the
same reader with and without #[batch_alloc], and prints the times.

  --vertices N   vertices (default 50000)
  --edges N      edges, one box each (default 1000000; about 12 bytes of
                 text each)
  --reps N       timed runs of each version (default 7)";

#[derive(Debug, PartialEq)]
pub struct Options {
    pub vertices: u32,
    pub edges: u64,
    pub reps: usize,
}

/// Reads the command line (without the program name); `None` for `--help`.
pub fn parse_args(args: &[String]) -> Result<Option<Options>, String> {
    let mut options = Options {
        vertices: DEFAULT_VERTICES,
        edges: DEFAULT_EDGES,
        reps: DEFAULT_REPS,
    };
    let mut args = Args::new(args);
    while let Some(name) = args.next_option() {
        match name {
            "-h" | "--help" => return Ok(None),
            "--vertices" => {
                options.vertices = u32::try_from(args.count("a number")?)
                    .map_err(|_| "--vertices takes at most 4294967295".to_string())?
            }
            "--edges" => options.edges = args.count("a number")?,
            "--reps" => options.reps = args.count("a number")? as usize,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(Some(options))
}

/// Generates the edge list, runs the comparison and prints the table.
pub fn run(options: &Options, dropper: &Dropper) -> Result<(), String> {
    eprintln!(
        "generating {} edges between {} vertices ...",
        thousands(options.edges),
        thousands(options.vertices as u64)
    );
    let text = edge_list(options.vertices, options.edges);
    let clock = Clock::start();
    let c = compare(&text, options.reps, dropper, &clock, |l| eprintln!("  {l}"))?;
    println!();
    println!(
        "batch-alloc: reading {} edges ({:.1} MB of text) into adjacency lists of",
        thousands(options.edges),
        text.len() as f64 / 1e6
    );
    println!("Box<Edge> with one `while let` loop, walking them, and dropping them on");
    println!("another thread, through the same reader without and with #[batch_alloc]");
    println!(
        "(graphs equal, checksum {:#x}). Batching {}.",
        c.checksum,
        if is_active() { "active" } else { "NOT active" }
    );
    println!();
    print!("{}", table(&c));
    println!();
    println!(
        "times: median of {} each, the versions alternating; {}",
        timing::runs(options.reps),
        clock.describe()
    );
    println!("(the drop: on the dropping thread). speedup: median of the per-run ratios.");
    Ok(())
}

fn main() -> ExitCode {
    cli::main(USAGE, parse_args, |options| run(options, &Dropper::start()))
}
