//! The program of `examples/stmt_parser.rs`: a Lua-like front end
//! ([`lang`]: lexer, parser, checker, written out both ways), its input
//! ([`generate`]), the comparison of its two versions, its command line.

use std::ffi::OsString;

use batch_alloc::is_active;

use crate::cli::{self, Arg, Parser, ValueExt};
use crate::timing::{self, share, thousands, Clock};
pub use crate::versions::Variant;
use crate::versions::{self, Run, Version};

pub mod generate;
pub mod lang;

use lang::{Block, ParseError, Stmt, Summary, Token, EXPR_KINDS, STMT_KINDS};

/// One version of the front end.
pub struct FrontEnd {
    pub lex: fn(&str) -> Result<Vec<Token>, ParseError>,
    pub parse: fn(&[Token]) -> Result<Block, ParseError>,
    pub check: fn(&[Stmt]) -> Summary,
}

pub fn front_end(variant: Variant) -> FrontEnd {
    match variant {
        Variant::Plain => FrontEnd {
            lex: lang::plain::lex,
            parse: lang::plain::parse,
            check: lang::plain::check,
        },
        Variant::Batched => FrontEnd {
            lex: lang::batched::lex,
            parse: lang::batched::parse,
            check: lang::batched::check,
        },
    }
}

/// Lexes, parses and checks `source` with one version.
pub fn front(variant: Variant, source: &str) -> Result<(Vec<Token>, Block, Summary), String> {
    let front = front_end(variant);
    let tokens = (front.lex)(source).map_err(|e| e.to_string())?;
    let chunk = (front.parse)(&tokens).map_err(|e| e.to_string())?;
    let summary = (front.check)(&chunk);
    Ok((tokens, chunk, summary))
}

/// One timed run of one version: lex, parse, check, drop.
pub fn timed(variant: Variant, source: &str, clock: &Clock) -> Result<(Run<4>, Summary), String> {
    let front = front_end(variant);
    let (tokens, lex_time) = clock.time(|| (front.lex)(source));
    let tokens = tokens.map_err(|e| e.to_string())?;
    let (chunk, parse_time) = clock.time(|| (front.parse)(&tokens));
    let chunk = chunk.map_err(|e| e.to_string())?;
    let (summary, check_time) = clock.time(|| (front.check)(&chunk));
    let ((), drop_time) = clock.time(|| drop((chunk, tokens)));
    let run = Run {
        times: [lex_time, parse_time, check_time, drop_time],
        boxes: summary.boxes,
    };
    Ok((run, summary))
}

/// Both versions on one program.
#[derive(Debug)]
pub struct Comparison {
    pub plain: Version<4>,
    pub batched: Version<4>,
    /// What both versions' checkers said.
    pub summary: Summary,
    pub tokens: usize,
}

/// Runs both versions on `source`: once keeping everything to check that
/// tokens, trees and summaries are equal, then `reps` timed runs each,
/// alternating which goes first. Every run must give the same summary.
pub fn compare(
    source: &str,
    reps: usize,
    clock: &Clock,
    mut progress: impl FnMut(&str),
) -> Result<Comparison, String> {
    let (tokens, chunk, summary) = front(Variant::Plain, source)?;
    let batched = front(Variant::Batched, source)?;
    if batched.0 != tokens {
        return Err("the two lexers gave different tokens".to_string());
    }
    if batched.1 != chunk {
        return Err("the two parsers gave different trees".to_string());
    }
    if batched.2 != summary {
        return Err("the two checkers gave different summaries".to_string());
    }
    let tokens = tokens.len();
    drop((chunk, batched));
    progress("checked: both versions give equal tokens, trees and summaries");

    let run = |variant| {
        let (run, got) = timed(variant, source, clock)?;
        match got == summary {
            true => Ok(run),
            false => Err(format!("a {} run gave another summary", variant.name())),
        }
    };
    let [plain, batched] = versions::alternate(reps, run, progress)?;
    Ok(Comparison {
        plain,
        batched,
        summary,
        tokens,
    })
}

const HEADER: [&str; 8] = [
    "",
    "lex",
    "parse",
    "check",
    "drop",
    "total",
    "boxes",
    "from batches",
];

/// A version's row of the table.
fn row(name: &str, version: &Version<4>) -> Vec<String> {
    let mut row = vec![name.to_string()];
    row.extend(version.times.medians());
    row.push(thousands(version.boxes));
    row.push(share(version.from_batches, version.boxes));
    row
}

pub fn table(c: &Comparison) -> String {
    let mut speedups = vec!["speedup".to_string()];
    speedups.extend(c.plain.times.speedups(&c.batched.times));
    let rows = [
        row("plain", &c.plain),
        row("#[batch_alloc]", &c.batched),
        speedups,
    ];
    timing::table(&HEADER, &rows)
}

/// What the tree holds, in a few lines.
pub fn describe(summary: &Summary, tokens: usize) -> String {
    let kinds = |names: &[&str], counts: &[u64]| {
        let mut pairs: Vec<(u64, &str)> =
            counts.iter().copied().zip(names.iter().copied()).collect();
        pairs.sort_by_key(|&(count, _)| std::cmp::Reverse(count));
        let total: u64 = counts.iter().sum();
        let list: Vec<String> = pairs
            .iter()
            .map(|(count, name)| format!("{name} {}", thousands(*count)))
            .collect();
        format!("{} ({})", thousands(total), list.join(", "))
    };
    let s = summary;
    format!(
        "  tokens: {}\n  statements: {}\n  expressions: {}\n  \
         functions {}, table fields {}, locals {}; names resolved to locals {}, to globals {};\n  \
         operators folded to constants {}; blocks nested {} deep\n  \
         heap blocks in the tree: {}, of which boxes {}\n",
        thousands(tokens as u64),
        kinds(&STMT_KINDS, &s.statements),
        kinds(&EXPR_KINDS, &s.expressions),
        thousands(s.functions),
        thousands(s.fields),
        thousands(s.locals),
        thousands(s.local_refs),
        thousands(s.global_refs),
        thousands(s.folded),
        s.max_depth,
        thousands(s.heap_blocks),
        share(s.boxes, s.heap_blocks),
    )
}

pub const USAGE: &str = "\
usage: cargo run --release --example stmt_parser -- [OPTIONS]

Lexes, parses and checks a generated Lua-like program, then drops the
tree, through the same front end with and without #[batch_alloc], and
prints the time of each phase for both.

  --bytes N     size of the program (default 4000000)
  --seed S      which program (default 1)
  --reps N      timed runs of each version (default 7)
  --only V      run only version V (plain or batched), for a profiler
  --emit        print the generated program and stop";

pub const DEFAULT_BYTES: usize = 4_000_000;
pub const DEFAULT_SEED: u64 = 1;
pub const DEFAULT_REPS: usize = 7;

#[derive(Debug, PartialEq)]
pub struct Options {
    pub bytes: usize,
    pub seed: u64,
    pub reps: usize,
    pub only: Option<Variant>,
    pub emit: bool,
}

/// Reads the command line (without the program name); `None` for `--help`.
pub fn parse_args(
    args: impl IntoIterator<Item = impl Into<OsString>>,
) -> Result<Option<Options>, cli::Error> {
    let mut options = Options {
        bytes: DEFAULT_BYTES,
        seed: DEFAULT_SEED,
        reps: DEFAULT_REPS,
        only: None,
        emit: false,
    };
    let mut args = Parser::from_args(args);
    while let Some(arg) = args.next()? {
        match arg {
            Arg::Short('h') | Arg::Long("help") => return Ok(None),
            Arg::Long("bytes") => options.bytes = cli::count(&mut args, "bytes")? as usize,
            Arg::Long("reps") => options.reps = cli::count(&mut args, "reps")? as usize,
            Arg::Long("seed") => {
                let text = args.value()?.string()?;
                options.seed = text
                    .replace('_', "")
                    .parse()
                    .map_err(|_| format!("--seed takes a whole number, not `{text}`"))?;
            }
            Arg::Long("only") => {
                options.only = Some(match args.value()?.string()?.as_str() {
                    "plain" => Variant::Plain,
                    "batched" => Variant::Batched,
                    other => {
                        return Err(format!("--only takes plain or batched, not `{other}`").into())
                    }
                })
            }
            Arg::Long("emit") => options.emit = true,
            _ => return Err(arg.unexpected()),
        }
    }
    Ok(Some(options))
}

/// Generates the program, runs the comparison (or one version) and prints
/// the results.
pub fn run(options: &Options) -> Result<(), String> {
    if options.emit {
        print!("{}", generate::program(options.bytes, options.seed));
        return Ok(());
    }
    eprintln!(
        "generating a program of {} bytes (seed {}) ...",
        thousands(options.bytes as u64),
        options.seed
    );
    let source = generate::program(options.bytes, options.seed);
    let clock = Clock::start();
    if let Some(variant) = options.only {
        return run_one(variant, &source, options.reps, &clock);
    }
    let c = compare(&source, options.reps, &clock, |l| eprintln!("  {l}"))?;
    println!();
    println!(
        "batch-alloc: lexing, parsing and checking a generated Lua-like program ({:.1} MB,",
        source.len() as f64 / 1e6
    );
    println!(
        "{} lines), then dropping the tree, through the same front end without",
        thousands(source.lines().count() as u64)
    );
    println!(
        "and with #[batch_alloc] (tokens, trees and summaries equal). Batching {}.",
        if is_active() { "active" } else { "NOT active" }
    );
    println!();
    print!("{}", table(&c));
    println!();
    print!("{}", describe(&c.summary, c.tokens));
    println!();
    println!(
        "times: median of {} each, the versions alternating; {}.",
        timing::runs(options.reps),
        clock.describe()
    );
    println!("speedup: median of the per-run ratios (each run times both versions).");
    Ok(())
}

/// `reps` timed runs of one version alone.
fn run_one(variant: Variant, source: &str, reps: usize, clock: &Clock) -> Result<(), String> {
    let mut version = Version::default();
    let mut first = None;
    let before = batch_alloc::stats().batched_boxes;
    for _ in 0..reps {
        let (run, summary) = timed(variant, source, clock)?;
        if *first.get_or_insert(summary.clone()) != summary {
            return Err("two runs gave different summaries".to_string());
        }
        version.times.push(run.times);
        version.boxes = run.boxes;
    }
    version.from_batches = (batch_alloc::stats().batched_boxes - before) / reps as u64;
    print!(
        "{}",
        timing::table(&HEADER, &[row(variant.name(), &version)])
    );
    Ok(())
}
