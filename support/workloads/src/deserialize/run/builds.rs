//! The builds of the demonstration, one per global allocator, and how one
//! runs another: as a child process that times its own versions on
//! request (`--serve-child`), or that parses once and reports its peak
//! memory (`--peak-child`); under `cargo run`, built first.

use std::env;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{self, Command, ExitCode, Stdio};
use std::time::Duration;

use super::{describe_json_error, parse, read_input, timed_run, CompareError, Variant, Workload};
use crate::timing::Clock;
use crate::versions::{self, Run};

/// The global allocator of a build of this program (chosen at compile
/// time, by the `#[global_allocator]` static of the example's main file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allocator {
    /// `BatchAlloc<System>`: `examples/deserialize.rs`.
    System,
    /// `BatchAlloc<MiMalloc>`: `examples/deserialize_mimalloc.rs`.
    Mimalloc,
    /// mimalloc alone, no `BatchAlloc`: `examples/deserialize_plain_mimalloc.rs`.
    PlainMimalloc,
}

impl Allocator {
    pub(super) fn parse(name: &str) -> Option<Allocator> {
        match name {
            "system" => Some(Allocator::System),
            "mimalloc" => Some(Allocator::Mimalloc),
            _ => None,
        }
    }

    /// The example that installs this allocator.
    pub(super) fn example(self) -> &'static str {
        match self {
            Allocator::System => "deserialize",
            Allocator::Mimalloc => "deserialize_mimalloc",
            Allocator::PlainMimalloc => "deserialize_plain_mimalloc",
        }
    }

    /// The allocator that serves what batch-alloc does not.
    pub(super) fn inner(self) -> &'static str {
        match self {
            Allocator::System => "glibc",
            Allocator::Mimalloc | Allocator::PlainMimalloc => "mimalloc",
        }
    }

    /// The global allocator's type.
    pub(super) fn wrapper(self) -> &'static str {
        match self {
            Allocator::System => "BatchAlloc<System>",
            Allocator::Mimalloc => "BatchAlloc<MiMalloc>",
            Allocator::PlainMimalloc => "MiMalloc",
        }
    }

    /// The versions a run of this build compares, the first the baseline
    /// of the speed-ups: its own two, and those of the builds it runs as
    /// child processes.
    pub(super) fn setups(self) -> Vec<Setup> {
        let own = |variant| Setup {
            allocator: self,
            variant,
        };
        let mut setups = vec![own(Variant::Plain), own(Variant::Batched)];
        match self {
            Allocator::System => setups.extend([
                Setup::new(Allocator::PlainMimalloc, Variant::Plain),
                Setup::new(Allocator::Mimalloc, Variant::Batched),
            ]),
            Allocator::Mimalloc => {
                setups.push(Setup::new(Allocator::PlainMimalloc, Variant::Plain))
            }
            Allocator::PlainMimalloc => {}
        }
        setups.sort_by_key(|s| s.rank());
        setups
    }
}

/// One version of the visitors under one global allocator: a row of the
/// table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setup {
    pub allocator: Allocator,
    pub variant: Variant,
}

impl Setup {
    pub fn new(allocator: Allocator, variant: Variant) -> Setup {
        Setup { allocator, variant }
    }

    /// The row's name.
    pub fn label(self) -> &'static str {
        match (self.variant, self.allocator) {
            (Variant::Plain, Allocator::System) => "as written, glibc",
            (Variant::Batched, Allocator::System) => "#[batch_alloc], BatchAlloc<System>",
            (Variant::Plain, Allocator::PlainMimalloc) => "as written, mimalloc",
            (Variant::Batched, Allocator::PlainMimalloc) => {
                "#[batch_alloc], mimalloc, no BatchAlloc"
            }
            (Variant::Plain, Allocator::Mimalloc) => "as written, BatchAlloc<MiMalloc>",
            (Variant::Batched, Allocator::Mimalloc) => "#[batch_alloc], BatchAlloc<MiMalloc>",
        }
    }

    /// The name in the progress lines.
    pub(super) fn short(self) -> &'static str {
        match (self.variant, self.allocator) {
            (Variant::Plain, Allocator::System) => "glibc",
            (Variant::Batched, Allocator::System) => "attr/glibc",
            (Variant::Plain, Allocator::PlainMimalloc) => "mimalloc",
            (Variant::Batched, Allocator::PlainMimalloc) => "attr/mimalloc-alone",
            (Variant::Plain, Allocator::Mimalloc) => "wrapped-mimalloc",
            (Variant::Batched, Allocator::Mimalloc) => "attr/mimalloc",
        }
    }

    /// The table's order: glibc's rows, then mimalloc's, as written first.
    pub(super) fn rank(self) -> u8 {
        match (self.variant, self.allocator) {
            (Variant::Plain, Allocator::System) => 0,
            (Variant::Batched, Allocator::System) => 1,
            (Variant::Plain, Allocator::PlainMimalloc) => 2,
            (Variant::Batched, Allocator::PlainMimalloc) => 3,
            (Variant::Plain, Allocator::Mimalloc) => 4,
            (Variant::Batched, Allocator::Mimalloc) => 5,
        }
    }
}

/// A version running in another build of this program (`--serve-child`,
/// `serve` below): it reads the input and parses it once, then parses and
/// drops it each time it is asked, timing itself with its own [`Clock`].
/// Dropping it closes its input, which ends it.
pub struct Child {
    pub(super) setup: Setup,
    process: process::Child,
    /// Its standard input, until the drop closes it.
    requests: Option<process::ChildStdin>,
    answers: BufReader<process::ChildStdout>,
}

impl Child {
    /// Starts the build of `setup`'s allocator, found beside this program,
    /// on the input in `path`.
    pub fn start(setup: Setup, workload: Workload, path: &Path) -> Result<Child, String> {
        let exe = sibling(setup.allocator)?;
        let mut process = Command::new(&exe)
            .args(["--serve-child", workload.name(), setup.variant.name()])
            .arg(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start `{}`: {e}", exe.display()))?;
        let requests = process.stdin.take();
        let answers = BufReader::new(process.stdout.take().expect("a piped stdout"));
        Ok(Child {
            setup,
            process,
            requests,
            answers,
        })
    }

    /// Waits for the first parse and returns the digest of its result.
    pub(super) fn ready(&mut self) -> Result<u64, String> {
        let answer = self.answer()?;
        match answer.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["ready", digest] => digest
                .parse()
                .map_err(|_| format!("it answered `{answer}`")),
            _ => Err(format!("it answered `{answer}`")),
        }
    }

    /// One timed run, and what batch-alloc served in it.
    pub(super) fn run(&mut self) -> Result<(Run<2>, u64), CompareError> {
        let label = self.setup.label();
        let failed = |e: String| CompareError::Child(format!("{label}: {e}"));
        let requests = self.requests.as_mut().expect("open until the drop");
        writeln!(requests, "run")
            .and_then(|()| requests.flush())
            .map_err(|e| failed(e.to_string()))?;
        let answer = self.answer().map_err(failed)?;
        let mut words = answer.split_whitespace();
        let first = words.next();
        let numbers: Vec<u64> = words.filter_map(|w| w.parse().ok()).collect();
        match (first, numbers.as_slice()) {
            (Some("ran"), &[parse_ns, drop_ns, boxes, served]) => Ok((
                Run {
                    times: [
                        Duration::from_nanos(parse_ns),
                        Duration::from_nanos(drop_ns),
                    ],
                    boxes,
                },
                served,
            )),
            _ => Err(failed(format!("it answered `{answer}`"))),
        }
    }

    /// The child's next line.
    fn answer(&mut self) -> Result<String, String> {
        let mut line = String::new();
        match self.answers.read_line(&mut line) {
            Ok(0) => Err("it ended early (its error is above)".to_string()),
            Ok(_) => Ok(line.trim_end().to_string()),
            Err(e) => Err(format!("cannot read its answer: {e}")),
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        drop(self.requests.take());
        let _ = self.process.wait();
    }
}

/// The child's side of [`Child`]: reads `path`, parses it once and
/// answers `ready DIGEST`; then, for each `run` on standard input, parses
/// and drops it and answers `ran PARSE_NS DROP_NS BOXES SERVED`.
pub(super) fn serve(workload: Workload, variant: Variant, path: &Path) -> Result<(), String> {
    let text = read_input(path)?;
    let describe = |e: serde_json::Error| describe_json_error(&path.display().to_string(), &e);
    let digest = parse(workload, variant, &text).map_err(describe)?.digest();
    let mut out = std::io::stdout().lock();
    let mut answer = |line: String| writeln!(out, "{line}").and_then(|()| out.flush());
    answer(format!("ready {digest}")).map_err(|e| e.to_string())?;
    let clock = Clock::start();
    for request in std::io::stdin().lock().lines() {
        match request.map_err(|e| e.to_string())?.as_str() {
            "run" => {
                let (run, served) =
                    versions::counted(|| timed_run(workload, variant, &text, &clock))
                        .map_err(describe)?;
                let [parse, drop] = run.times.map(|t| t.as_nanos());
                answer(format!("ran {parse} {drop} {} {served}", run.boxes))
                    .map_err(|e| e.to_string())?;
            }
            other => return Err(format!("unknown request `{other}`")),
        }
    }
    Ok(())
}

/// Runs the build of `setup`'s allocator (this program, or one beside it)
/// to parse `path` once with `setup`'s version and returns the peak
/// resident memory of that run: a fresh process per version, so that none
/// inherits the heap another left behind.
pub(super) fn peak_in_child(
    setup: Setup,
    own: Allocator,
    workload: Workload,
    path: &Path,
) -> Result<u64, String> {
    let exe = match setup.allocator == own {
        true => env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?,
        false => sibling(setup.allocator)?,
    };
    let output = Command::new(exe)
        .args(["--peak-child", workload.name(), setup.variant.name()])
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

/// The build of this program with `allocator`, beside this one (cargo
/// puts every example of a profile in one directory).
fn sibling(allocator: Allocator) -> Result<PathBuf, String> {
    let me = env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let example = allocator.example();
    let exe = me.with_file_name(format!("{example}{}", env::consts::EXE_SUFFIX));
    match exe.is_file() {
        true => Ok(exe),
        false => Err(format!(
            "`{}` is not built (`cargo build{} --example {example}`)",
            exe.display(),
            profile_flag()
        )),
    }
}

/// ` --release` in a release build, as cargo's command line spells it.
fn profile_flag() -> &'static str {
    match cfg!(debug_assertions) {
        true => "",
        false => " --release",
    }
}

/// Under `cargo run`, builds the examples of `allocators` with this
/// binary's profile, in one cargo command (elsewhere they must have been
/// built already). A failed build leaves their versions out, with a note.
pub(super) fn build(allocators: &[Allocator]) {
    let Some(cargo) = env::var_os("CARGO") else {
        return;
    };
    if allocators.is_empty() {
        return;
    }
    let mut command = Command::new(cargo);
    command.args(["build", "--quiet"]);
    let mut names = Vec::new();
    for allocator in allocators {
        command.args(["--example", allocator.example()]);
        names.push(format!("examples/{}.rs", allocator.example()));
    }
    // The examples are the facade's, whose manifest is the workspace's, two
    // levels above this crate's.
    command
        .arg("--manifest-path")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml"));
    if !profile_flag().is_empty() {
        command.arg("--release");
    }
    eprintln!("building {} ...", names.join(" and "));
    if !command.status().is_ok_and(|status| status.success()) {
        eprintln!("note: could not build {}", names.join(" and "));
    }
}

/// Runs the example built with another allocator, with the same
/// arguments (built first under `cargo run`, by [`main`]).
pub(super) fn run_other(allocator: Allocator, args: &[OsString]) -> ExitCode {
    let exe = match sibling(allocator) {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Built already: it need not ask cargo again.
    match Command::new(&exe).args(args).env_remove("CARGO").status() {
        Ok(status) => ExitCode::from(status.code().map_or(1, |c| c.clamp(0, 255) as u8)),
        Err(e) => {
            eprintln!("error: cannot run `{}` ({e})", exe.display());
            ExitCode::FAILURE
        }
    }
}
