//! The program of `examples/linked_list.rs`: the graph and its reader
//! written out both ways ([`graph`]), the comparison of the two versions,
//! its command line.

use std::ffi::OsString;

use batch_alloc::is_active;

use crate::cli::{self, Arg, Parser};
use crate::timing::{self, share, thousands, Clock};
pub use crate::versions::Variant;
use crate::versions::{self, Run, Version};

pub mod graph;

pub use graph::*;

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
pub fn parse_args(
    args: impl IntoIterator<Item = impl Into<OsString>>,
) -> Result<Option<Options>, cli::Error> {
    let mut options = Options {
        vertices: DEFAULT_VERTICES,
        edges: DEFAULT_EDGES,
        reps: DEFAULT_REPS,
    };
    let mut args = Parser::from_args(args);
    while let Some(arg) = args.next()? {
        match arg {
            Arg::Short('h') | Arg::Long("help") => return Ok(None),
            Arg::Long("vertices") => {
                options.vertices = u32::try_from(cli::count(&mut args, "vertices")?)
                    .map_err(|_| "--vertices takes at most 4294967295".to_string())?
            }
            Arg::Long("edges") => options.edges = cli::count(&mut args, "edges")?,
            Arg::Long("reps") => options.reps = cli::count(&mut args, "reps")? as usize,
            _ => return Err(arg.unexpected()),
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
