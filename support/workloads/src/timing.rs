//! Measuring, for the examples, tests and benches: a clock that leaves out
//! other programs' load, resident memory, medians, paired speedups, a
//! plain-text table.

use std::fs;
use std::time::{Duration, Instant};

/// Measures time: wall-clock time, less the time this thread spent
/// waiting for a CPU while other programs had it (which Linux reports, in
/// nanoseconds, in `/proc/thread-self/schedstat`). On a quiet machine the
/// two are the same; on a busy one the difference is other programs' load.
/// Read it on the thread that made it.
pub struct Clock {
    origin: Instant,
    /// Time waited for a CPU before `origin`, if Linux reports it.
    waited: Option<Duration>,
}

impl Clock {
    pub fn start() -> Clock {
        Clock {
            origin: Instant::now(),
            waited: time_waiting_for_cpu(),
        }
    }

    /// Time since the clock was started.
    pub fn now(&self) -> Duration {
        let wall = self.origin.elapsed();
        match (self.waited, time_waiting_for_cpu()) {
            (Some(before), Some(now)) => wall.saturating_sub(now.saturating_sub(before)),
            _ => wall,
        }
    }

    /// Runs `f` and returns what it returned and how long it took.
    pub fn time<R>(&self, f: impl FnOnce() -> R) -> (R, Duration) {
        let start = self.now();
        let result = f();
        (result, self.now().saturating_sub(start))
    }

    pub fn describe(&self) -> &'static str {
        match self.waited.is_some() {
            true => "wall-clock time less time spent waiting for a CPU",
            false => "wall-clock time",
        }
    }
}

/// How long this thread has waited, runnable, for a CPU since it started.
fn time_waiting_for_cpu() -> Option<Duration> {
    // Linux's only: under Wine a Windows build would read the file too,
    // through the drive Wine maps to `/`, for a thread not its own.
    if !cfg!(target_os = "linux") {
        return None;
    }
    let text = fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// A field of `/proc/self/status` in KiB (`VmRSS:`, resident memory;
/// `VmHWM:`, its peak), where that file exists (Linux).
pub fn status_kib(field: &str) -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

pub fn median_ms(times: &[Duration]) -> f64 {
    median(
        &times
            .iter()
            .map(|t| t.as_secs_f64() * 1e3)
            .collect::<Vec<_>>(),
    )
}

/// How many times faster `after` is than `before`: the median over runs of
/// the ratio within each run, whose two timings were taken moments apart
/// and so under the same load.
pub fn speedup(before: &[Duration], after: &[Duration]) -> f64 {
    median(&ratios(before, after))
}

/// For each run, how many times faster `after` was than `before`.
fn ratios(before: &[Duration], after: &[Duration]) -> Vec<f64> {
    before
        .iter()
        .zip(after)
        .filter(|(_, a)| !a.is_zero())
        .map(|(b, a)| b.as_secs_f64() / a.as_secs_f64())
        .collect()
}

/// The lowest and the highest of `values` (NaN for none).
fn spread(values: &[f64]) -> (f64, f64) {
    let low = values.iter().copied().reduce(f64::min);
    let high = values.iter().copied().reduce(f64::max);
    (low.unwrap_or(f64::NAN), high.unwrap_or(f64::NAN))
}

fn in_ms(times: &[Duration]) -> Vec<f64> {
    times.iter().map(|t| t.as_secs_f64() * 1e3).collect()
}

/// The timings of one version: for each run, one time per phase.
#[derive(Debug, Default, Clone)]
pub struct Runs<const PHASES: usize> {
    pub runs: Vec<[Duration; PHASES]>,
}

impl<const PHASES: usize> Runs<PHASES> {
    pub fn push(&mut self, run: [Duration; PHASES]) {
        self.runs.push(run);
    }

    /// Every run's time for `phase`.
    pub fn phase(&self, phase: usize) -> Vec<Duration> {
        self.runs.iter().map(|run| run[phase]).collect()
    }

    /// Every run's time over all phases.
    pub fn totals(&self) -> Vec<Duration> {
        self.runs.iter().map(|run| run.iter().sum()).collect()
    }

    /// Median milliseconds of each phase, then of the total.
    pub fn medians(&self) -> Vec<String> {
        (0..PHASES)
            .map(|p| self.phase(p))
            .chain([self.totals()])
            .map(|times| format!("{:.1} ms", median_ms(&times)))
            .collect()
    }

    /// [`Runs::medians`] with the spread of the runs beside each:
    /// `101.1 ms (84–136)`, the fastest and the slowest run (to a tenth of
    /// a millisecond under 10 ms).
    pub fn medians_with_spread(&self) -> Vec<String> {
        let ms = |x: f64| match x < 10.0 {
            true => format!("{x:.1}"),
            false => format!("{x:.0}"),
        };
        (0..PHASES)
            .map(|p| self.phase(p))
            .chain([self.totals()])
            .map(|times| {
                let (low, high) = spread(&in_ms(&times));
                format!("{:.1} ms ({}–{})", median_ms(&times), ms(low), ms(high))
            })
            .collect()
    }

    /// [`Runs::speedups`] with the spread of the per-run ratios beside
    /// each: `1.73x (1.45–2.01)`.
    pub fn speedups_with_spread(&self, after: &Runs<PHASES>) -> Vec<String> {
        (0..PHASES)
            .map(|p| ratios(&self.phase(p), &after.phase(p)))
            .chain([ratios(&self.totals(), &after.totals())])
            .map(|ratios| {
                let (low, high) = spread(&ratios);
                format!("{:.2}x ({low:.2}–{high:.2})", median(&ratios))
            })
            .collect()
    }

    /// Paired speedups of `after` over `self`, phase by phase, then total.
    pub fn speedups(&self, after: &Runs<PHASES>) -> Vec<String> {
        (0..PHASES)
            .map(|p| speedup(&self.phase(p), &after.phase(p)))
            .chain([speedup(&self.totals(), &after.totals())])
            .map(|x| format!("{x:.2}x"))
            .collect()
    }
}

/// `n` with a comma every three digits.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `part` of `whole`, with its share: `1,234 (56%)`.
pub fn share(part: u64, whole: u64) -> String {
    match whole {
        0 => thousands(part),
        _ => format!(
            "{} ({:.0}%)",
            thousands(part),
            100.0 * part as f64 / whole as f64
        ),
    }
}

/// `1 run`, `9 runs`.
pub fn runs(n: usize) -> String {
    match n {
        1 => "1 run".to_string(),
        n => format!("{n} runs"),
    }
}

pub fn millis(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// A plain-text table: the first column left-aligned, the others right,
/// each as wide as its widest cell, indented by two spaces.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let columns = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&header).chain(rows) {
        out.push(' ');
        for (i, width) in widths.iter().enumerate().take(columns) {
            let cell = row.get(i).map_or("", String::as_str);
            let pad = width - cell.chars().count();
            out.push(' ');
            if i == 0 {
                out.push_str(cell);
                out.push_str(&" ".repeat(pad));
            } else {
                out.push_str("  ");
                out.push_str(&" ".repeat(pad));
                out.push_str(cell);
            }
        }
        let trimmed = out.trim_end().len();
        out.truncate(trimmed);
        out.push('\n');
    }
    out
}
