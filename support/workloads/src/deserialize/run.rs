//! The driver: options, the timed runs (in this process and in the
//! binaries built with other allocators), peak memory, the table.

use std::env;
use std::ffi::OsString;
use std::fmt::{self, Write as _};
use std::fs;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use batch_alloc::is_active;

use super::generate;
use super::model::{Dataset, Json};
use super::visitors::{batched, plain};
use crate::cli::{self, Arg, Parser, ValueExt};
use crate::timing::{self, thousands, Clock};
pub use crate::versions::Variant;
use crate::versions::{self, Run, Version};

// The other builds, run as child processes.
mod builds;

use builds::{build, peak_in_child, run_other, serve};
pub use builds::{Allocator, Child, Setup};

pub const DEFAULT_RECORDS: u64 = 30_000;
pub const DEFAULT_REPS: usize = 9;

pub const USAGE: &str = "\
usage: cargo run --release --example deserialize -- [OPTIONS]

Deserializes JSON through the same hand-written serde visitors as written
and with #[batch_alloc], under glibc and under mimalloc, checks that every
version gives the same result, and prints for each: parse and drop time,
the allocations batch-alloc served, peak memory, and speed-ups over the
code as written on glibc. The mimalloc versions run in the examples built
with mimalloc (deserialize_plain_mimalloc: mimalloc alone;
deserialize_mimalloc: BatchAlloc<MiMalloc>), as child processes, built
first when run through cargo.

options:
  --records N      generate N customer records (default 30000; about
                   1.1 KB of JSON each, so 300000 is about 330 MB)
  --save FILE      also write the generated input to FILE
  --input FILE     deserialize your own JSON file instead, into a
                   document tree that boxes every array element and
                   object member
  --reps N         timed runs of each version (default 9)
  --no-peak        skip the peak memory measurement (a child process
                   per version)
  --allocator A    system (the default) or mimalloc: the allocator
                   BatchAlloc wraps in the main process. mimalloc runs
                   examples/deserialize_mimalloc.rs and compares the
                   versions under BatchAlloc<MiMalloc> with plain mimalloc
  -h, --help       this text";

#[derive(Debug, PartialEq)]
pub struct Options {
    pub records: u64,
    pub input: Option<PathBuf>,
    pub save: Option<PathBuf>,
    pub reps: usize,
    pub allocator: Option<Allocator>,
    /// Measure peak memory in child processes.
    pub peak: bool,
}

#[derive(Debug, PartialEq)]
pub enum Invocation {
    Run(Options),
    Help,
    /// Internal: parse `path` once as `workload` with `variant` and print
    /// the peak resident memory, from a fresh process.
    PeakChild {
        workload: Workload,
        variant: Variant,
        path: PathBuf,
    },
    /// Internal: read `path`, parse it once as `workload` with `variant`,
    /// then parse and drop it each time standard input says `run`, and
    /// answer each with the times (see `builds::serve`).
    Serve {
        workload: Workload,
        variant: Variant,
        path: PathBuf,
    },
}

/// Reads the command line (without the program name).
pub fn parse_args(
    args: impl IntoIterator<Item = impl Into<OsString>>,
) -> Result<Invocation, cli::Error> {
    let mut options = Options {
        records: DEFAULT_RECORDS,
        input: None,
        save: None,
        reps: DEFAULT_REPS,
        allocator: None,
        peak: true,
    };
    let mut records_given = false;
    let mut args = Parser::from_args(args);
    while let Some(arg) = args.next()? {
        match arg {
            Arg::Short('h') | Arg::Long("help") => return Ok(Invocation::Help),
            Arg::Long("records") => {
                options.records = cli::count(&mut args, "records")?;
                records_given = true;
            }
            Arg::Long("reps") => options.reps = cli::count(&mut args, "reps")? as usize,
            Arg::Long("input") => options.input = Some(args.value()?.into()),
            Arg::Long("no-peak") => options.peak = false,
            Arg::Long("save") => options.save = Some(args.value()?.into()),
            Arg::Long("allocator") => {
                let name = args.value()?.string()?;
                options.allocator = Some(Allocator::parse(&name).ok_or_else(|| {
                    format!("--allocator takes system or mimalloc, not `{name}`")
                })?);
            }
            Arg::Long(child @ ("peak-child" | "serve-child")) => {
                let peak = child == "peak-child";
                let workload = Workload::parse(&args.value()?.string()?)?;
                let variant = Variant::parse(&args.value()?.string()?)?;
                let path = args.value()?.into();
                return Ok(match peak {
                    true => Invocation::PeakChild {
                        workload,
                        variant,
                        path,
                    },
                    false => Invocation::Serve {
                        workload,
                        variant,
                        path,
                    },
                });
            }
            _ => return Err(arg.unexpected()),
        }
    }
    if options.input.is_some() && (records_given || options.save.is_some()) {
        return Err("--records and --save are for generated input, not --input".into());
    }
    Ok(Invocation::Run(options))
}

/// What the input is deserialized into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// The generated export, into a [`Dataset`].
    Records,
    /// Any JSON, into a [`Json`] tree.
    Tree,
}

impl Workload {
    fn parse(name: &str) -> Result<Workload, String> {
        match name {
            "records" => Ok(Workload::Records),
            "tree" => Ok(Workload::Tree),
            _ => Err(format!("unknown workload `{name}`")),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Workload::Records => "records",
            Workload::Tree => "tree",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Workload::Records => {
                "into Vec<Box<Record>>, each record holding a Box<Address> and a Vec<Box<Order>>"
            }
            Workload::Tree => "into a document tree: every array element and object member boxed",
        }
    }
}

/// The `--peak-child` spelling of a variant.
impl Variant {
    fn parse(name: &str) -> Result<Variant, String> {
        match name {
            "plain" => Ok(Variant::Plain),
            "batched" => Ok(Variant::Batched),
            _ => Err(format!("unknown variant `{name}`")),
        }
    }
}

/// A deserialized input.
#[derive(Debug, PartialEq)]
pub enum Parsed {
    Records(Dataset),
    Tree(Json),
}

impl Parsed {
    pub fn boxes(&self) -> u64 {
        match self {
            Parsed::Records(dataset) => dataset.boxes(),
            Parsed::Tree(tree) => tree.boxes(),
        }
    }

    /// A hash of everything parsed (its `Debug` form, streamed through
    /// FNV-1a): how another process shows that it parsed the same.
    pub fn digest(&self) -> u64 {
        struct Fnv(u64);
        impl fmt::Write for Fnv {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                for byte in s.bytes() {
                    self.0 = (self.0 ^ byte as u64).wrapping_mul(0x0000_0100_0000_01b3);
                }
                Ok(())
            }
        }
        let mut hash = Fnv(0xcbf2_9ce4_8422_2325);
        write!(hash, "{self:?}").expect("a hash takes any text");
        hash.0
    }
}

/// Deserializes `text` as `workload` through the `variant` code.
pub fn parse(workload: Workload, variant: Variant, text: &str) -> serde_json::Result<Parsed> {
    Ok(match (workload, variant) {
        (Workload::Records, Variant::Plain) => Parsed::Records(plain::dataset(text)?),
        (Workload::Records, Variant::Batched) => Parsed::Records(batched::dataset(text)?),
        (Workload::Tree, Variant::Plain) => Parsed::Tree(plain::tree(text)?),
        (Workload::Tree, Variant::Batched) => Parsed::Tree(batched::tree(text)?),
    })
}

/// Says where in `source` (a file name, or a description) a JSON error is,
/// as `source:line:column: what: message`.
pub fn describe_json_error(source: &str, error: &serde_json::Error) -> String {
    let full = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    let message = full.strip_suffix(&position).unwrap_or(&full);
    let what = match error.classify() {
        serde_json::error::Category::Syntax => "not valid JSON",
        serde_json::error::Category::Eof => "not valid JSON, it ends too early",
        serde_json::error::Category::Data => "not in the expected shape",
        serde_json::error::Category::Io => "unreadable",
    };
    format!(
        "{source}:{}:{}: {what}: {message}",
        error.line(),
        error.column()
    )
}

/// Reads the user's file.
pub fn read_input(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))
}

/// Every version on one input; times: parse, then drop.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub workload: Workload,
    /// This process's allocator: the one `plain` and `batched` ran under.
    pub allocator: Allocator,
    pub plain: Version<2>,
    pub batched: Version<2>,
    /// Peak resident memory of a process that parses the input once, in
    /// KiB, for each [`Variant`].
    pub peak_kib: [Option<u64>; 2],
    /// The versions that ran in child processes, built with other
    /// allocators.
    pub others: Vec<Measured>,
}

/// A version measured in another process.
#[derive(Debug, Clone)]
pub struct Measured {
    pub setup: Setup,
    pub version: Version<2>,
    pub peak_kib: Option<u64>,
}

impl Comparison {
    /// Every version with its peak, in the table's order: the first is
    /// the baseline of the speed-ups.
    pub fn rows(&self) -> Vec<(Setup, &Version<2>, Option<u64>)> {
        let mut rows = vec![
            (
                Setup::new(self.allocator, Variant::Plain),
                &self.plain,
                self.peak_kib[0],
            ),
            (
                Setup::new(self.allocator, Variant::Batched),
                &self.batched,
                self.peak_kib[1],
            ),
        ];
        rows.extend(
            self.others
                .iter()
                .map(|m| (m.setup, &m.version, m.peak_kib)),
        );
        rows.sort_by_key(|(setup, _, _)| setup.rank());
        rows
    }
}

#[derive(Debug)]
pub enum CompareError {
    Json(serde_json::Error),
    /// Two versions disagreed: a bug, in the example or the library.
    Differ,
    /// A child process failed.
    Child(String),
}

/// Deserializes `text` with both versions in this process (under the
/// `BatchAlloc<System>` of `examples/deserialize.rs`): see
/// [`compare_with`], here with no child process.
pub fn compare(
    workload: Workload,
    text: &str,
    reps: usize,
    clock: &Clock,
    progress: impl FnMut(&str),
) -> Result<Comparison, CompareError> {
    compare_with(
        Allocator::System,
        workload,
        text,
        reps,
        clock,
        Vec::new,
        progress,
    )
}

/// Deserializes `text` with both versions in this process, built with
/// `allocator`, and in every child `start` starts from another build:
/// first once untimed, checking that every version gives the same result
/// (here by comparing them, in a child by the digest of its result), then
/// `reps` timed runs of each, in rotation (see [`versions::rotate`]). A
/// timed run parses, then drops what it parsed. The children start once
/// this process has found the input well-formed (else the error would
/// come from each). `progress` hears about each run, and about a child
/// that could not get ready, which is left out.
pub fn compare_with(
    allocator: Allocator,
    workload: Workload,
    text: &str,
    reps: usize,
    clock: &Clock,
    start: impl FnOnce() -> Vec<Child>,
    mut progress: impl FnMut(&str),
) -> Result<Comparison, CompareError> {
    let plain = parse(workload, Variant::Plain, text).map_err(CompareError::Json)?;
    let batched = parse(workload, Variant::Batched, text).map_err(CompareError::Json)?;
    if plain != batched {
        return Err(CompareError::Differ);
    }
    let children = start();
    let digest = (!children.is_empty()).then(|| plain.digest());
    drop((plain, batched));
    let mut ready = Vec::new();
    for mut child in children {
        match child.ready() {
            Ok(theirs) if Some(theirs) == digest => ready.push(child),
            Ok(_) => return Err(CompareError::Differ),
            Err(e) => progress(&format!("note: {} left out: {e}", child.setup.label())),
        }
    }
    progress(match ready.is_empty() {
        true => "checked: both versions give equal results",
        false => "checked: every version gives equal results",
    });

    let own = [Variant::Plain, Variant::Batched];
    let mut names: Vec<&str> = own
        .iter()
        .map(|&v| Setup::new(allocator, v).short())
        .collect();
    names.extend(ready.iter().map(|child| child.setup.short()));
    // Each progress line is one run: every version's parse time + drop
    // time, in turn; say so on the line.
    let each_run = |line: &str| match line.split_once(':') {
        Some((run, times)) => progress(&format!("{run}, parse + drop:{times}")),
        None => progress(line),
    };
    let versions = versions::rotate(
        reps,
        &names,
        |i| match own.get(i) {
            Some(&variant) => versions::counted(|| timed_run(workload, variant, text, clock))
                .map_err(CompareError::Json),
            None => ready[i - own.len()].run(),
        },
        each_run,
    )?;
    let mut versions = versions.into_iter();
    let (plain, batched) = (versions.next(), versions.next());
    Ok(Comparison {
        workload,
        allocator,
        plain: plain.expect("the plain version"),
        batched: batched.expect("the batched version"),
        peak_kib: [None; 2],
        others: ready
            .iter()
            .zip(versions)
            .map(|(child, version)| Measured {
                setup: child.setup,
                version,
                peak_kib: None,
            })
            .collect(),
    })
}

/// One timed run of one version: parse, then drop what was parsed.
fn timed_run(
    workload: Workload,
    variant: Variant,
    text: &str,
    clock: &Clock,
) -> serde_json::Result<Run<2>> {
    let (parsed, parse_time) = clock.time(|| parse(workload, variant, text));
    let parsed = parsed?;
    let boxes = parsed.boxes();
    let ((), drop_time) = clock.time(|| drop(parsed));
    Ok(Run {
        times: [parse_time, drop_time],
        boxes,
    })
}

/// The child's side of a peak measurement: read `path`, parse it once,
/// report the process's peak resident memory.
pub fn peak_child(workload: Workload, variant: Variant, path: &Path) -> Result<u64, String> {
    let text = read_input(path)?;
    let parsed = parse(workload, variant, &text)
        .map_err(|e| describe_json_error(&path.display().to_string(), &e))?;
    let peak = timing::status_kib("VmHWM:").ok_or("this system has no /proc/self/status")?;
    drop(parsed);
    Ok(peak)
}

/// A file removed when this value is dropped.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// The tables for one comparison, each headed by what it shows: the
/// times of every version (median, and the fastest and slowest run), the
/// speed-ups of every other version over the first (median of the per-run
/// ratios, and the lowest and highest), and memory (allocations served,
/// peak resident memory, and the peak against the first's).
pub fn table(c: &Comparison) -> String {
    let versions = c.rows();
    let (baseline, first, first_peak) = versions[0];
    let runs = timing::runs(first.times.runs.len());

    let times: Vec<Vec<String>> = versions
        .iter()
        .map(|(setup, version, _)| {
            let mut row = vec![setup.label().to_string()];
            row.extend(version.times.medians_with_spread());
            row
        })
        .collect();

    let speedups: Vec<Vec<String>> = versions[1..]
        .iter()
        .map(|(setup, version, _)| {
            let mut row = vec![setup.label().to_string()];
            row.extend(first.times.speedups_with_spread(&version.times));
            row
        })
        .collect();

    let memory: Vec<Vec<String>> = versions
        .iter()
        .enumerate()
        .map(|(i, (setup, version, peak_kib))| {
            let against = match (first_peak, peak_kib) {
                _ if i == 0 => String::new(),
                (Some(p), Some(b)) if p > 0 => {
                    format!("{:+.1}%", 100.0 * (*b as f64 - p as f64) / p as f64)
                }
                _ => String::new(),
            };
            vec![
                setup.label().to_string(),
                thousands(version.from_batches),
                peak_kib.map_or("n/a".to_string(), |kib| megabytes(kib * 1024)),
                against,
            ]
        })
        .collect();

    let phases = ["", "parse", "drop", "parse + drop"];
    let mut out = format!("time: median of {runs} (fastest–slowest)\n");
    out += &timing::table(&phases, &times);
    out += &format!(
        "\nspeedup over {}: median of the per-run ratios (lowest–highest)\n",
        baseline.label()
    );
    out += &timing::table(&phases, &speedups);
    out += "\nmemory\n";
    let against = format!("vs {}", baseline.label());
    out += &timing::table(
        &["", "served by batch-alloc", "peak RSS", &against],
        &memory,
    );
    out
}

/// The first line of the output: what the baseline row runs on, and
/// whether that is through the wrapper.
fn baseline_line(baseline: Setup) -> String {
    match baseline.allocator {
        Allocator::PlainMimalloc => format!(
            "\"{}\", the baseline, runs on {} alone, not through the wrapper.",
            baseline.label(),
            baseline.allocator.inner()
        ),
        wrapped => format!(
            "\"{}\", the baseline, runs through the wrapper, {}, with no batch scope \
             open: {} serves all its allocations.",
            baseline.label(),
            wrapped.wrapper(),
            wrapped.inner()
        ),
    }
}

/// Runs the program; `allocator` is the one this binary was built with.
pub fn main(allocator: Allocator) -> ExitCode {
    let args: Vec<OsString> = env::args_os().skip(1).collect();
    let invocation = match parse_args(&args) {
        Ok(invocation) => invocation,
        Err(message) => {
            eprintln!("error: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let result = match invocation {
        Invocation::Help => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Invocation::PeakChild {
            workload,
            variant,
            path,
        } => peak_child(workload, variant, &path).map(|kib| println!("peak_kib={kib}")),
        Invocation::Serve {
            workload,
            variant,
            path,
        } => serve(workload, variant, &path),
        Invocation::Run(options) => {
            let wanted = options.allocator.unwrap_or(allocator);
            // The builds this run needs: the one that will be the main
            // process, and those it runs as children.
            let mut needed = Vec::new();
            for other in wanted.setups().iter().map(|s| s.allocator).chain([wanted]) {
                if other != allocator && !needed.contains(&other) {
                    needed.push(other);
                }
            }
            build(&needed);
            match wanted == allocator {
                true => run(allocator, &options),
                false => return run_other(wanted, &args),
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the comparison `options` ask for and prints the table: the two
/// versions in this process, and those of the other builds
/// (`Allocator::setups`) found beside this program, each in a child
/// process (a build that is missing is left out, with a note).
pub fn run(allocator: Allocator, options: &Options) -> Result<(), String> {
    let started = Instant::now();
    let (text, source, workload, temp) = match &options.input {
        Some(path) => {
            let text = read_input(path)?;
            (text, path.display().to_string(), Workload::Tree, None)
        }
        None => {
            let (text, temp) = generate_input(options)?;
            let source = format!("{} generated records", thousands(options.records));
            (text, source, Workload::Records, temp)
        }
    };
    // The file the child processes read.
    let file = options
        .input
        .clone()
        .or_else(|| options.save.clone())
        .or_else(|| temp.as_ref().map(|t| t.0.clone()));

    let start = || {
        let mut children = Vec::new();
        let others = allocator
            .setups()
            .into_iter()
            .filter(|s| s.allocator != allocator);
        for setup in others {
            let started = match &file {
                Some(file) => Child::start(setup, workload, file),
                None => Err("the input could not be written to a file".to_string()),
            };
            match started {
                Ok(child) => children.push(child),
                Err(e) => eprintln!("  note: {} left out: {e}", setup.label()),
            }
        }
        children
    };

    let clock = Clock::start();
    eprintln!("deserializing {}:", workload.title());
    let progress = |line: &str| eprintln!("  {line}");
    let mut comparison = match compare_with(
        allocator,
        workload,
        &text,
        options.reps,
        &clock,
        start,
        progress,
    ) {
        Ok(comparison) => comparison,
        Err(CompareError::Json(e)) => return Err(describe_json_error(&source, &e)),
        Err(CompareError::Differ) => return Err("two versions gave different results".to_string()),
        Err(CompareError::Child(e)) => return Err(format!("a child process failed: {e}")),
    };
    if let Some(file) = file.as_ref().filter(|_| options.peak) {
        eprintln!("  peak memory: parsing once in a fresh process for each version ...");
        let peak = |setup| match peak_in_child(setup, allocator, workload, file) {
            Ok(kib) => Some(kib),
            Err(e) => {
                eprintln!("  note: peak memory of {} not measured: {e}", setup.label());
                None
            }
        };
        for variant in [Variant::Plain, Variant::Batched] {
            comparison.peak_kib[variant as usize] = peak(Setup::new(allocator, variant));
        }
        for other in &mut comparison.others {
            other.peak_kib = peak(other.setup);
        }
    }

    let boxes = comparison.plain.boxes;
    println!();
    note(&baseline_line(comparison.rows()[0].0));
    println!(
        "batch-alloc: deserializing {source} ({} of JSON)",
        megabytes(text.len() as u64)
    );
    println!("{},", workload.title());
    println!("through the same serde visitors as written and with #[batch_alloc] (results equal).");
    println!();
    print!("{}", table(&comparison));
    println!();
    for (setup, _, _) in comparison.rows() {
        note(&where_it_ran(setup, allocator));
    }
    note(&format!(
        "times: median, fastest and slowest of {} of each version, in rotation: each run times every version once, \
         one after the other, starting with the next version each time; a version in another \
         process parses when asked and times itself; {}.",
        timing::runs(options.reps),
        clock.describe()
    ));
    note(
        "speedup: median of the per-run ratios (each run times every version), and the lowest \
         and highest ratio.",
    );
    note(&format!(
        "served by batch-alloc: what batch scopes and batches served in one run, boxes, \
         strings and vectors alike (batch_alloc::stats(): scoped_allocations + batched_boxes); \
         the result holds {} boxes.",
        thousands(boxes)
    ));
    note(
        "peak RSS: one parse in a fresh process, the input text included; its last column \
         against the baseline's.",
    );
    eprintln!("\n(done in {:.1} s)", started.elapsed().as_secs_f64());
    Ok(())
}

/// Where a row's version ran, and what served its allocations.
fn where_it_ran(setup: Setup, own: Allocator) -> String {
    let place = match setup.allocator == own {
        true => format!("this process (examples/{}.rs)", own.example()),
        false => format!(
            "examples/{}.rs, a process of its own",
            setup.allocator.example()
        ),
    };
    let how = match (setup.variant, setup.allocator) {
        (_, Allocator::PlainMimalloc) => ": mimalloc alone, no BatchAlloc".to_string(),
        (Variant::Plain, wrapped) => format!(
            ", through {}, which hands every allocation made outside a batch scope to {}",
            wrapped.wrapper(),
            wrapped.inner()
        ),
        (Variant::Batched, _) if setup.allocator != own => String::new(),
        (Variant::Batched, _) => match is_active() {
            true => "; batching active".to_string(),
            false => "; batching NOT active".to_string(),
        },
    };
    format!("{}: {place}{how}.", setup.label())
}

/// Prints `text` in lines of at most 88 characters, those after the first
/// indented by two spaces.
fn note(text: &str) {
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.len() + 1 + word.len() > 88 {
            println!("{line}");
            line = "  ".to_string();
        } else if !line.is_empty() {
            line.push(' ');
        }
        line += word;
    }
    println!("{line}");
}

/// Generates the input, with progress on a terminal; saves it where
/// `--save` says, or else to a temporary file for the child processes.
fn generate_input(options: &Options) -> Result<(String, Option<TempFile>), String> {
    let records = options.records;
    let terminal = std::io::stderr().is_terminal();
    eprintln!("generating {} records ...", thousands(records));
    let text = generate::json(records, |done| {
        if terminal && records >= 100_000 {
            eprint!("\r  {:>3}%", done * 100 / records);
        }
    });
    if terminal && records >= 100_000 {
        eprintln!();
    }
    if let Some(save) = &options.save {
        fs::write(save, &text).map_err(|e| format!("cannot write `{}`: {e}", save.display()))?;
        eprintln!("saved the input to {}", save.display());
        return Ok((text, None));
    }
    let path = env::temp_dir().join(format!(
        "batch-alloc-deserialize-{}.json",
        std::process::id()
    ));
    match fs::write(&path, &text) {
        Ok(()) => Ok((text, Some(TempFile(path)))),
        Err(e) => {
            eprintln!(
                "note: cannot write {} ({e}); only this process's versions will be measured, \
                 without peak memory",
                path.display()
            );
            Ok((text, None))
        }
    }
}
