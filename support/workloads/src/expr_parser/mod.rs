//! The program of `examples/expr_parser.rs`: the expression language
//! ([`lang`]: the tree, the parser written out both ways, the generated
//! input), the comparison of its two versions, its command line.

use std::ffi::OsString;

use batch_alloc::is_active;

use crate::cli::{self, Arg, Parser};
use crate::timing::{self, share, thousands, Clock};
pub use crate::versions::Variant;
use crate::versions::{self, Run, Version};

pub mod lang;

pub use lang::*;

pub fn parse(variant: Variant, source: &str) -> Result<Program, ParseError> {
    match variant {
        Variant::Plain => plain::parse(source),
        Variant::Batched => batched::parse(source),
    }
}

/// Both versions on one program; times: parse, evaluate, drop.
#[derive(Debug)]
pub struct Comparison {
    pub plain: Version<3>,
    pub batched: Version<3>,
    /// The wrapping sum of every line's value.
    pub checksum: i64,
}

/// Parses, evaluates and drops `source` with both versions: once keeping
/// both trees to check that they are equal, then `reps` timed runs each,
/// alternating which goes first. Every run must give the same values.
pub fn compare(
    source: &str,
    reps: usize,
    clock: &Clock,
    mut progress: impl FnMut(&str),
) -> Result<Comparison, String> {
    let plain = parse(Variant::Plain, source).map_err(|e| e.to_string())?;
    let batched = parse(Variant::Batched, source).map_err(|e| e.to_string())?;
    if plain != batched {
        return Err("the two parsers gave different trees".to_string());
    }
    let values = plain.eval();
    drop((plain, batched));
    progress("checked: both parsers give equal trees");

    let run = |variant| {
        let (program, parse_time) = clock.time(|| parse(variant, source));
        let program = program.map_err(|e| e.to_string())?;
        let (got, eval_time) = clock.time(|| program.eval());
        if got != values {
            return Err("a run gave different values".to_string());
        }
        let boxes = program.boxes();
        let ((), drop_time) = clock.time(|| drop(program));
        Ok(Run {
            times: [parse_time, eval_time, drop_time],
            boxes,
        })
    };
    let [plain, batched] = versions::alternate(reps, run, progress)?;
    Ok(Comparison {
        plain,
        batched,
        checksum: values.iter().fold(0, |a: i64, v| a.wrapping_add(*v)),
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
            "parse",
            "eval",
            "drop",
            "total",
            "boxes",
            "from batches",
        ],
        &rows,
    )
}

pub const USAGE: &str = "\
usage: cargo run --release --example expr_parser -- [--lines N] [--reps N]

Parses a generated program into Box<Expr> trees, evaluates and drops it,
through the same precedence-climbing parser with and without
#[batch_alloc], and prints the time of each phase for both.

  --lines N   lines in the program (default 20000; about 470 bytes and
              140 boxes each)
  --reps N    timed runs of each version (default 7)";

pub const DEFAULT_LINES: u64 = 20_000;
pub const DEFAULT_REPS: usize = 7;

#[derive(Debug, PartialEq)]
pub struct Options {
    pub lines: u64,
    pub reps: usize,
}

/// Reads the command line (without the program name); `None` for `--help`.
pub fn parse_args(
    args: impl IntoIterator<Item = impl Into<OsString>>,
) -> Result<Option<Options>, cli::Error> {
    let mut options = Options {
        lines: DEFAULT_LINES,
        reps: DEFAULT_REPS,
    };
    let mut args = Parser::from_args(args);
    while let Some(arg) = args.next()? {
        match arg {
            Arg::Short('h') | Arg::Long("help") => return Ok(None),
            Arg::Long("lines") => options.lines = cli::count(&mut args, "lines")?,
            Arg::Long("reps") => options.reps = cli::count(&mut args, "reps")? as usize,
            _ => return Err(arg.unexpected()),
        }
    }
    Ok(Some(options))
}

/// Generates the program, runs the comparison and prints the table.
pub fn run(options: &Options) -> Result<(), String> {
    eprintln!("generating {} lines ...", thousands(options.lines));
    let source = generate::program(options.lines);
    let clock = Clock::start();
    let c = compare(&source, options.reps, &clock, |l| eprintln!("  {l}"))?;
    println!();
    println!(
        "batch-alloc: parsing {} generated lines ({:.1} MB) into Box<Expr> trees,",
        thousands(options.lines),
        source.len() as f64 / 1e6
    );
    println!("evaluating and dropping them, through the same precedence-climbing");
    println!("parser without and with #[batch_alloc] (trees and values equal;");
    println!(
        "checksum {}). Batching {}.",
        c.checksum,
        if is_active() { "active" } else { "NOT active" }
    );
    println!();
    print!("{}", table(&c));
    println!();
    println!(
        "times: median of {} each, the versions alternating; {}.",
        timing::runs(options.reps),
        clock.describe()
    );
    println!("speedup: median of the per-run ratios (each run times both versions).");
    Ok(())
}
