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

#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread;
use std::time::Duration;

use batch_alloc::{is_active, BatchAlloc};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

#[path = "shared/cli.rs"]
mod cli;
#[path = "shared/timing.rs"]
pub mod timing;
#[path = "shared/versions.rs"]
pub mod versions;

use cli::Args;
use timing::{share, thousands, Clock};
pub use versions::Variant;
use versions::{Run, Version};

/// One edge in its source vertex's list.
#[derive(Debug)]
pub struct Edge {
    pub to: u32,
    pub next: Option<Box<Edge>>,
}

/// A singly linked list of edges, newest first.
#[derive(Debug, Default)]
pub struct List {
    pub head: Option<Box<Edge>>,
}

impl List {
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(self.head.as_deref(), |e| e.next.as_deref()).map(|e| e.to)
    }
}

impl PartialEq for List {
    fn eq(&self, other: &List) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Drop for List {
    /// One node at a time, without recursion.
    fn drop(&mut self) {
        let mut next = self.head.take();
        while let Some(mut edge) = next {
            next = edge.next.take();
        }
    }
}

/// A graph as adjacency lists: `lists[v]` holds the edges out of `v`.
#[derive(Debug, PartialEq)]
pub struct Graph {
    pub lists: Vec<List>,
}

impl Graph {
    /// Edges (one box each).
    pub fn edges(&self) -> u64 {
        self.lists.iter().map(|l| l.iter().count() as u64).sum()
    }

    /// Walks every list: a checksum of where each edge goes, by position.
    pub fn checksum(&self) -> u64 {
        let mut sum = 0u64;
        for (from, list) in self.lists.iter().enumerate() {
            for (i, to) in list.iter().enumerate() {
                sum = sum
                    .wrapping_mul(31)
                    .wrapping_add((from as u64) << 32 | to as u64)
                    .wrapping_add(i as u64);
            }
        }
        sum
    }
}

/// What is wrong with an edge list, and on which line.
#[derive(Debug, PartialEq)]
pub struct ReadError {
    pub line: usize,
    pub message: String,
}

/// Reads numbers from text, one at a time, the way a hand-written reader
/// does.
pub struct Scanner<'a> {
    text: &'a [u8],
    pos: usize,
    line: usize,
}

impl<'a> Scanner<'a> {
    pub fn new(text: &'a str) -> Scanner<'a> {
        Scanner {
            text: text.as_bytes(),
            pos: 0,
            line: 1,
        }
    }

    /// The next number, `None` at the end of the text.
    pub fn next_number(&mut self) -> Result<Option<u32>, ReadError> {
        while let Some(&byte) = self.text.get(self.pos) {
            match byte {
                b'\n' => self.line += 1,
                b' ' | b'\t' | b'\r' => {}
                _ => break,
            }
            self.pos += 1;
        }
        if self.pos == self.text.len() {
            return Ok(None);
        }
        let mut n: u32 = 0;
        let start = self.pos;
        while let Some(&byte @ b'0'..=b'9') = self.text.get(self.pos) {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add((byte - b'0') as u32))
                .ok_or_else(|| self.error("number too large"))?;
            self.pos += 1;
        }
        match self.pos == start {
            true => Err(self.error("expected a number")),
            false => Ok(Some(n)),
        }
    }

    /// The next edge: two numbers, both below `vertices`. Errors name the
    /// line the edge starts on.
    pub fn next_edge(&mut self, vertices: u32) -> Result<Option<(u32, u32)>, ReadError> {
        let Some(from) = self.next_number()? else {
            return Ok(None);
        };
        let line = self.line;
        let error = |message: &str| ReadError {
            line,
            message: message.to_string(),
        };
        let to = self
            .next_number()?
            .ok_or_else(|| error("an edge needs two ends"))?;
        match from < vertices && to < vertices {
            true => Ok(Some((from, to))),
            false => Err(error("no such vertex")),
        }
    }

    fn error(&self, message: &str) -> ReadError {
        ReadError {
            line: self.line,
            message: message.to_string(),
        }
    }
}

/// The reader, written once; `plain` and `batched` differ only by
/// `#[batch_alloc]`.
macro_rules! reader {
    ($(#[$batch:meta])*) => {
        use super::{Edge, Graph, List, ReadError, Scanner};

        /// Reads an edge list (the number of vertices, then `from to` per
        /// line) into adjacency lists.
        $(#[$batch])*
        pub fn read(text: &str) -> Result<Graph, ReadError> {
            let mut scanner = Scanner::new(text);
            let vertices = scanner.next_number()?.unwrap_or(0);
            let mut lists: Vec<List> = (0..vertices).map(|_| List::default()).collect();
            while let Some((from, to)) = scanner.next_edge(vertices)? {
                let list = &mut lists[from as usize];
                list.head = Some(Box::new(Edge {
                    to,
                    next: list.head.take(),
                }));
            }
            Ok(Graph { lists })
        }
    };
}

/// The reader as written.
pub mod plain {
    reader!();
}

/// The same reader under `#[batch_alloc]`.
pub mod batched {
    use batch_alloc::batch_alloc;

    reader!(#[batch_alloc]);
}

/// An edge list of `edges` random edges between `vertices` vertices, the
/// same on every machine.
pub fn edge_list(vertices: u32, edges: u64) -> String {
    let mut state = 0x5eed_9a4b_u64;
    let mut next = move || {
        // SplitMix64.
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (((z ^ (z >> 31)) >> 32) * vertices as u64) >> 32
    };
    let mut out = String::with_capacity(edges as usize * 14 + 16);
    out.push_str(&format!("{vertices}\n"));
    for _ in 0..edges {
        let (from, to) = (next(), next());
        out.push_str(&format!("{from} {to}\n"));
    }
    out
}

pub fn read(variant: Variant, text: &str) -> Result<Graph, ReadError> {
    match variant {
        Variant::Plain => plain::read(text),
        Variant::Batched => batched::read(text),
    }
}

/// A thread that drops what it is sent and answers how long that took.
/// Started once, before anything is timed, so that every timing is taken
/// in a process that already has two threads.
pub struct Dropper {
    graphs: Sender<Graph>,
    times: Receiver<Duration>,
}

impl Dropper {
    pub fn start() -> Dropper {
        let (graphs, inbox) = channel::<Graph>();
        let (answers, times) = channel();
        thread::spawn(move || {
            let clock = Clock::start();
            for graph in inbox {
                let ((), time) = clock.time(|| drop(graph));
                if answers.send(time).is_err() {
                    return;
                }
            }
        });
        Dropper { graphs, times }
    }

    /// Drops `graph` on the dropping thread; returns the time it took there.
    pub fn drop_elsewhere(&self, graph: Graph) -> Duration {
        self.graphs.send(graph).expect("the dropping thread runs");
        self.times.recv().expect("the dropping thread answers")
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
