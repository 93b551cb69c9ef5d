//! The driver: options, the timed runs, peak memory, the table.

use std::env;
use std::fs;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use batch_alloc::is_active;

use super::cli::Args;
use super::generate;
use super::model::{Dataset, Json};
use super::timing::{self, share, thousands, Clock};
pub use super::versions::Variant;
use super::versions::{self, Run, Version};
use super::visitors::{batched, plain};

/// The allocator `BatchAlloc` wraps in this binary (chosen at compile time,
/// by the `#[global_allocator]` static of the example's main file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allocator {
    System,
    Mimalloc,
}

impl Allocator {
    fn parse(name: &str) -> Option<Allocator> {
        match name {
            "system" => Some(Allocator::System),
            "mimalloc" => Some(Allocator::Mimalloc),
            _ => None,
        }
    }

    /// The example that installs this allocator.
    fn example(self) -> &'static str {
        match self {
            Allocator::System => "deserialize",
            Allocator::Mimalloc => "deserialize_mimalloc",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Allocator::System => "BatchAlloc<System>: the C library's malloc underneath",
            Allocator::Mimalloc => "BatchAlloc<MiMalloc>: mimalloc underneath",
        }
    }
}

pub const DEFAULT_RECORDS: u64 = 30_000;
pub const DEFAULT_REPS: usize = 9;

pub const USAGE: &str = "\
usage: cargo run --release --example deserialize -- [OPTIONS]

Deserializes JSON through the same hand-written serde visitors with and
without #[batch_alloc], checks that both give the same result, and prints
time, boxes, boxes served from batches and peak memory for each.

options:
  --records N      generate N customer records (default 30000; about
                   1.1 KB of JSON each, so 300000 is about 330 MB)
  --save FILE      also write the generated input to FILE
  --input FILE     deserialize your own JSON file instead, into a
                   document tree that boxes every array element and
                   object member
  --reps N         timed runs of each version (default 9)
  --no-peak        skip the peak memory measurement (two child processes)
  --allocator A    system or mimalloc: the allocator BatchAlloc wraps.
                   mimalloc runs examples/deserialize_mimalloc.rs (built
                   first when run through cargo)
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
}

/// Reads the command line (without the program name).
pub fn parse_args(args: &[String]) -> Result<Invocation, String> {
    let mut options = Options {
        records: DEFAULT_RECORDS,
        input: None,
        save: None,
        reps: DEFAULT_REPS,
        allocator: None,
        peak: true,
    };
    let mut records_given = false;
    let mut args = Args::new(args);
    while let Some(name) = args.next_option() {
        match name {
            "-h" | "--help" => return Ok(Invocation::Help),
            "--records" => {
                options.records = args.count("a number of records")?;
                records_given = true;
            }
            "--reps" => options.reps = args.count("a number of runs")? as usize,
            "--input" => options.input = Some(PathBuf::from(args.value("a file name")?)),
            "--no-peak" => options.peak = false,
            "--save" => options.save = Some(PathBuf::from(args.value("a file name")?)),
            "--allocator" => {
                let name = args.value("system or mimalloc")?;
                options.allocator = Some(Allocator::parse(name).ok_or_else(|| {
                    format!("--allocator takes system or mimalloc, not `{name}`")
                })?);
            }
            "--peak-child" => {
                let workload = Workload::parse(args.value("a workload")?)?;
                let variant = Variant::parse(args.value("a variant")?)?;
                let path = PathBuf::from(args.value("a file name")?);
                return Ok(Invocation::PeakChild {
                    workload,
                    variant,
                    path,
                });
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if options.input.is_some() && (records_given || options.save.is_some()) {
        return Err("--records and --save are for generated input, not --input".to_string());
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

/// Both versions on one input; times: parse, then drop.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub workload: Workload,
    pub plain: Version<2>,
    pub batched: Version<2>,
    /// Peak resident memory of a process that parses the input once, in
    /// KiB, for each [`Variant`].
    pub peak_kib: [Option<u64>; 2],
}

#[derive(Debug)]
pub enum CompareError {
    Json(serde_json::Error),
    /// The two versions disagreed: a bug, in the example or the library.
    Differ,
}

/// Deserializes `text` with both versions: once untimed, keeping both
/// results to check that they are equal, then `reps` timed runs of each,
/// alternating which goes first. A timed run parses, then drops what it
/// parsed. `progress` hears about each run.
pub fn compare(
    workload: Workload,
    text: &str,
    reps: usize,
    clock: &Clock,
    mut progress: impl FnMut(&str),
) -> Result<Comparison, CompareError> {
    let plain = parse(workload, Variant::Plain, text).map_err(CompareError::Json)?;
    let batched = parse(workload, Variant::Batched, text).map_err(CompareError::Json)?;
    if plain != batched {
        return Err(CompareError::Differ);
    }
    drop((plain, batched));
    progress("checked: both versions give equal results");

    let run = |variant| {
        let (parsed, parse_time) = clock.time(|| parse(workload, variant, text));
        let parsed = parsed.map_err(CompareError::Json)?;
        let boxes = parsed.boxes();
        let ((), drop_time) = clock.time(|| drop(parsed));
        Ok(Run {
            times: [parse_time, drop_time],
            boxes,
        })
    };
    let [plain, batched] = versions::alternate(reps, run, progress)?;
    Ok(Comparison {
        workload,
        plain,
        batched,
        peak_kib: [None; 2],
    })
}

/// The peak resident memory of this process so far, in KiB (Linux).
pub fn peak_rss_kib() -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The child's side of a peak measurement: read `path`, parse it once,
/// report the process's peak resident memory.
pub fn peak_child(workload: Workload, variant: Variant, path: &Path) -> Result<u64, String> {
    let text = read_input(path)?;
    let parsed = parse(workload, variant, &text)
        .map_err(|e| describe_json_error(&path.display().to_string(), &e))?;
    let peak = peak_rss_kib().ok_or("this system has no /proc/self/status")?;
    drop(parsed);
    Ok(peak)
}

/// Runs this program again to parse `path` once and returns the peak
/// resident memory of that run: a fresh process per version, so that
/// neither inherits the heap the other left behind.
fn peak_in_child(workload: Workload, variant: Variant, path: &Path) -> Result<u64, String> {
    let exe = env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let output = Command::new(exe)
        .args(["--peak-child", workload.name(), variant.name()])
        .arg(path)
        .output()
        .map_err(|e| format!("cannot start a child process: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    match stdout.trim().strip_prefix("peak_kib=") {
        Some(kib) if output.status.success() => kib
            .parse()
            .map_err(|_| format!("the child process printed `{stdout}`")),
        _ => Err(format!(
            "the child process failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )),
    }
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

/// The table for one comparison.
pub fn table(c: &Comparison) -> String {
    let mut rows = Vec::new();
    for (name, version, peak_kib) in [
        ("plain", &c.plain, c.peak_kib[0]),
        ("#[batch_alloc]", &c.batched, c.peak_kib[1]),
    ] {
        let mut row = vec![name.to_string()];
        row.extend(version.times.medians());
        row.push(thousands(version.boxes));
        row.push(share(version.from_batches, version.boxes));
        row.push(peak_kib.map_or("n/a".to_string(), |kib| megabytes(kib * 1024)));
        rows.push(row);
    }
    let mut row = vec!["speedup".to_string()];
    row.extend(c.plain.times.speedups(&c.batched.times));
    row.extend([String::new(), String::new()]);
    row.push(match c.peak_kib {
        [Some(p), Some(b)] if p > 0 => format!("{:+.1}%", 100.0 * (b as f64 - p as f64) / p as f64),
        _ => String::new(),
    });
    rows.push(row);
    timing::table(
        &[
            "",
            "parse",
            "drop",
            "parse+drop",
            "boxes",
            "from batches",
            "peak RSS",
        ],
        &rows,
    )
}

/// Runs the program; `allocator` is the one this binary was built with.
pub fn main(allocator: Allocator) -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
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
        Invocation::Run(options) => match options.allocator {
            Some(wanted) if wanted != allocator => return run_other(wanted, &args),
            _ => run(allocator, &options),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the example built with the other allocator, with the same
/// arguments. Under `cargo run` it is built first, with this binary's
/// profile; otherwise it must have been built already.
fn run_other(allocator: Allocator, args: &[String]) -> ExitCode {
    let example = allocator.example();
    let release = if cfg!(debug_assertions) {
        ""
    } else {
        " --release"
    };
    if let Some(cargo) = env::var_os("CARGO") {
        eprintln!("building examples/{example}.rs ...");
        let mut build = Command::new(cargo);
        build
            .args(["build", "--quiet", "--example", example, "--manifest-path"])
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"));
        if !release.is_empty() {
            build.arg("--release");
        }
        if !build.status().is_ok_and(|status| status.success()) {
            eprintln!("error: could not build examples/{example}.rs");
            return ExitCode::FAILURE;
        }
    }
    let exe = match env::current_exe() {
        Ok(me) => me.with_file_name(format!("{example}{}", env::consts::EXE_SUFFIX)),
        Err(e) => {
            eprintln!("error: cannot find this program: {e}");
            return ExitCode::FAILURE;
        }
    };
    match Command::new(&exe).args(args).status() {
        Ok(status) => ExitCode::from(status.code().map_or(1, |c| c.clamp(0, 255) as u8)),
        Err(e) => {
            eprintln!(
                "error: cannot run `{}` ({e}); build it with `cargo build{release} --example {example}`",
                exe.display()
            );
            ExitCode::FAILURE
        }
    }
}

/// Runs the comparison `options` ask for and prints the table.
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
    // The file the child processes that measure peak memory read.
    let file = options
        .input
        .clone()
        .or_else(|| options.save.clone())
        .or_else(|| temp.as_ref().map(|t| t.0.clone()))
        .filter(|_| options.peak);

    let clock = Clock::start();
    eprintln!("deserializing {}:", workload.title());
    let mut comparison = match compare(workload, &text, options.reps, &clock, |line| {
        eprintln!("  {line}")
    }) {
        Ok(comparison) => comparison,
        Err(CompareError::Json(e)) => return Err(describe_json_error(&source, &e)),
        Err(CompareError::Differ) => {
            return Err("the two versions gave different results".to_string())
        }
    };
    if let Some(file) = &file {
        eprintln!("  peak memory: parsing once in a fresh process for each version ...");
        for variant in [Variant::Plain, Variant::Batched] {
            match peak_in_child(workload, variant, file) {
                Ok(kib) => comparison.peak_kib[variant as usize] = Some(kib),
                Err(e) => eprintln!("  note: peak memory not measured: {e}"),
            }
        }
    }

    println!();
    println!(
        "batch-alloc: deserializing {source} ({} of JSON)",
        megabytes(text.len() as u64)
    );
    println!("{},", workload.title());
    println!("through the same serde visitors without and with #[batch_alloc] (results equal).");
    println!(
        "allocator: {}; batching {}.",
        allocator.describe(),
        if is_active() { "active" } else { "NOT active" }
    );
    println!();
    print!("{}", table(&comparison));
    println!();
    println!(
        "times: median of {} each, the versions alternating; {}.",
        timing::runs(options.reps),
        clock.describe()
    );
    println!("speedup: median of the per-run ratios (each run times both versions).");
    println!("peak RSS: one parse in a fresh process, the input text included.");
    eprintln!("\n(done in {:.1} s)", started.elapsed().as_secs_f64());
    Ok(())
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
    if !options.peak {
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
                "note: cannot write {} ({e}); peak memory will not be measured",
                path.display()
            );
            Ok((text, None))
        }
    }
}
