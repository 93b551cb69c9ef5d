//! What every workload binary of the crates harness shares: the command
//! line, the timing of a parse and of its drop, the process's counters, and
//! a deterministic generator of inputs.
//!
//!     BIN gen   WORKLOAD PATH SIZE   write the input (deterministic)
//!     BIN once  WORKLOAD PATH        one parse + drop in this process
//!     BIN warm  WORKLOAD PATH [N]    N parses (default 5); the last is reported
//!     BIN check WORKLOAD PATH        a digest of the parsed value (all builds must agree)
//!     BIN threads WORKLOAD PATH N own|other [PARSES]
//!                                    N threads, each parsing PARSES times (default 4); each
//!                                    value dropped on the thread that made it (own) or on
//!                                    the next thread of the ring (other; with one thread, on
//!                                    a thread that only drops)
//!     BIN list                       the workloads and their default sizes
//!
//! `once`, `warm` and `threads` print one JSON line on stdout (and append
//! it to the file named by `CRATES_LOG`, if set, so that runs under
//! hyperfine are recorded too). `alloc.rs`, generated per build, installs
//! the build's global allocator and names it.

use std::hint::black_box;
use std::io::Write;
use std::time::Instant;

pub struct Workload {
    pub name: &'static str,
    /// Default size, in the workload's own unit (see `about`).
    pub size: usize,
    pub about: &'static str,
    pub generate: fn(usize) -> String,
    /// Parses `input` `parses` times, dropping each value before the
    /// next, and reports the last.
    pub run: fn(&str, usize) -> Measured,
    /// A digest of the parsed value, for checking that builds agree.
    pub check: fn(&str) -> u64,
    /// The threaded mode: (input, threads, parses a thread, dropped on
    /// another thread) -> wall-clock nanoseconds; see [`threads`].
    pub threads: fn(&str, usize, usize, bool) -> u64,
}

/// `n` threads each parse `input` `parses` times, each parse inside the
/// build's scope (`alloc::scoped`), as a pool's tasks would. Each value is
/// dropped on the thread that made it, or (`other`) sent to the next
/// thread of the ring and dropped there between its own parses (with one
/// thread, by a thread that only drops). Returns the wall-clock time of
/// the whole, threads started and joined.
pub fn threads<T: Send>(input: &str, n: usize, parses: usize, other: bool, parse: fn(&str) -> T) -> u64 {
    use std::sync::mpsc;
    let t0 = Instant::now();
    std::thread::scope(|s| {
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..n).map(|_| mpsc::channel::<T>()).unzip();
        let mut receivers: Vec<_> = receivers.into_iter().map(Some).collect();
        if other && n == 1 {
            let lone = receivers[0].take().expect("a receiver");
            s.spawn(move || lone.into_iter().for_each(drop));
        }
        for (i, inbox) in receivers.into_iter().enumerate() {
            let next = senders[(i + 1) % n].clone();
            s.spawn(move || {
                for _ in 0..parses {
                    let value = crate::alloc::scoped(|| parse(black_box(input)));
                    match other {
                        true => next.send(value).expect("the next thread drops"),
                        false => drop(black_box(value)),
                    }
                    inbox.iter().flat_map(|r| r.try_iter()).for_each(drop);
                }
                drop(next);
                inbox.into_iter().flatten().for_each(drop);
            });
        }
    });
    t0.elapsed().as_nanos() as u64
}

/// [`threads`] for a value that cannot cross threads (syn's, whose spans
/// are `!Send`): dropped on the thread that made it only.
pub fn threads_own<T>(input: &str, n: usize, parses: usize, other: bool, parse: fn(&str) -> T) -> u64 {
    assert!(!other, "this workload's value cannot be dropped on another thread");
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..n {
            s.spawn(|| {
                for _ in 0..parses {
                    drop(black_box(crate::alloc::scoped(|| parse(black_box(input)))));
                }
            });
        }
    });
    t0.elapsed().as_nanos() as u64
}

#[derive(Default)]
pub struct Measured {
    pub parse_ns: Vec<u64>,
    pub drop_ns: Vec<u64>,
    pub minflt_parse: Vec<u64>,
    pub minflt_drop: Vec<u64>,
    pub items: u64,
    pub stats_parse: Option<Vec<(&'static str, u64)>>,
}

/// Parses `input` `parses` times with `parse`; `items` counts what a value
/// holds (a check that it was built). Each value is dropped before the next
/// parse. Counters of the allocator (batch builds) are differences over the
/// last parse.
///
/// In the limit builds (`alloc::LIMIT`, the warm arena of limit.rs), the
/// arena starts serving this thread before the first parse, and each drop
/// is followed by `settle` (the first time the mark, then a reset to it).
/// The first parse is the warm-up: with one parse asked for (`once`), one
/// more is made first, untimed but recorded, so that the reported parse,
/// the last, runs through memory the warm-up faulted in; with five
/// (`warm`), the first of the five is the warm-up.
pub fn measure<T>(
    input: &str,
    parses: usize,
    parse: impl Fn(&str) -> T,
    items: impl Fn(&T) -> u64,
) -> Measured {
    let parses = parses + usize::from(crate::alloc::LIMIT && parses == 1);
    // Room for every figure before the arena starts: nothing allocated
    // between parses may outlive a reset.
    let mut m = Measured {
        parse_ns: Vec::with_capacity(parses),
        drop_ns: Vec::with_capacity(parses),
        minflt_parse: Vec::with_capacity(parses),
        minflt_drop: Vec::with_capacity(parses),
        ..Measured::default()
    };
    crate::alloc::begin();
    for i in 0..parses {
        let last = i + 1 == parses;
        let before = if last { crate::alloc::stats() } else { None };
        let f0 = minflt();
        let t0 = Instant::now();
        let run = || crate::alloc::scoped(|| parse(black_box(input)));
        let value = black_box(if last { reported_parse(run) } else { run() });
        let t1 = Instant::now();
        let f1 = minflt();
        if last {
            m.items = items(&value);
            if let (Some(before), Some(after)) = (before, crate::alloc::stats()) {
                // Counters over the parse; gauges (live slots, span and
                // cached bytes) as they stand with the value alive.
                let gauge = |name: &str| matches!(name, "live_slots" | "span_bytes" | "cached_bytes");
                m.stats_parse = Some(
                    after
                        .iter()
                        .zip(before.iter())
                        .map(|(a, b)| (a.0, if gauge(a.0) { a.1 } else { a.1.wrapping_sub(b.1) }))
                        .collect(),
                );
            }
        }
        let f2 = minflt();
        let t2 = Instant::now();
        if last {
            reported_drop(black_box(value));
        } else {
            drop(black_box(value));
            crate::alloc::settle();
        }
        let t3 = Instant::now();
        let f3 = minflt();
        m.parse_ns.push((t1 - t0).as_nanos() as u64);
        m.drop_ns.push((t3 - t2).as_nanos() as u64);
        m.minflt_parse.push(f1 - f0);
        m.minflt_drop.push(f3 - f2);
    }
    m
}

// The reported parse and its drop run in these two (and nothing else
// does, or the compiler would merge identical functions): callgrind's
// inclusive cost of each is one phase's instructions (benches/crates/crates.py
// reads `reported_parse` and `reported_drop`).
#[inline(never)]
fn reported_parse<T>(run: impl FnOnce() -> T) -> T {
    run()
}

#[inline(never)]
fn reported_drop<T>(value: T) {
    drop(value);
    crate::alloc::settle();
}

/// getrusage(RUSAGE_SELF): peak RSS, faults, CPU time.
struct Rusage {
    maxrss_kb: u64,
    minflt: u64,
    majflt: u64,
    utime_us: u64,
    stime_us: u64,
}

fn rusage() -> Rusage {
    let mut raw = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: RUSAGE_SELF is valid and getrusage fills the struct it is
    // given (its fields are integers: zeroed is a valid value anyway).
    let raw = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, raw.as_mut_ptr());
        raw.assume_init()
    };
    let us = |t: libc::timeval| (t.tv_sec * 1_000_000 + t.tv_usec) as u64;
    Rusage {
        maxrss_kb: raw.ru_maxrss as u64,
        minflt: raw.ru_minflt as u64,
        majflt: raw.ru_majflt as u64,
        utime_us: us(raw.ru_utime),
        stime_us: us(raw.ru_stime),
    }
}

fn minflt() -> u64 {
    rusage().minflt
}

fn json_list(v: &[u64]) -> String {
    let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", items.join(","))
}

pub fn main(workloads: &[Workload]) {
    let started = Instant::now();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: BIN gen|once|warm|check WORKLOAD PATH [SIZE|PARSES] | BIN threads WORKLOAD PATH N own|other [PARSES] | BIN list";
    let Some(cmd) = args.first() else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    if cmd == "list" {
        let rows: Vec<String> = workloads
            .iter()
            .map(|w| {
                format!(
                    "{{\"name\":\"{}\",\"size\":{},\"about\":\"{}\"}}",
                    w.name, w.size, w.about
                )
            })
            .collect();
        println!("[{}]", rows.join(","));
        return;
    }
    let (Some(name), Some(path)) = (args.get(1), args.get(2)) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let Some(w) = workloads.iter().find(|w| w.name == name) else {
        eprintln!("unknown workload {name}");
        std::process::exit(2);
    };
    match cmd.as_str() {
        "gen" => {
            let size = args.get(3).map_or(w.size, |s| s.parse().expect("SIZE"));
            let text = (w.generate)(size);
            std::fs::write(path, text).expect("write input");
        }
        "check" => {
            let input = std::fs::read_to_string(path).expect("read input");
            println!("{}", (w.check)(&input));
        }
        "threads" => {
            let n: usize = args.get(3).and_then(|s| s.parse().ok()).expect("THREADS");
            let other = args.get(4).map(String::as_str) == Some("other");
            let parses = args.get(5).map_or(4, |s| s.parse().expect("PARSES"));
            let input = std::fs::read_to_string(path).expect("read input");
            let wall_ns = (w.threads)(&input, n, parses, other);
            let r = rusage();
            let line = format!(
                "{{\"workload\":\"{}\",\"build\":\"{}\",\"mode\":\"threads\",\"threads\":{n},\"other\":{other},\"parses\":{parses},\"wall_ns\":{wall_ns},\"total_ns\":{},\"maxrss_kb\":{},\"minflt\":{},\"utime_us\":{},\"stime_us\":{}}}",
                w.name,
                crate::alloc::BUILD,
                started.elapsed().as_nanos(),
                r.maxrss_kb,
                r.minflt,
                r.utime_us,
                r.stime_us
            );
            emit(&line);
        }
        "once" | "warm" => {
            let parses = match cmd.as_str() {
                "once" => 1,
                _ => args.get(3).map_or(5, |s| s.parse().expect("PARSES")),
            };
            let read0 = Instant::now();
            let input = std::fs::read_to_string(path).expect("read input");
            let read_ns = read0.elapsed().as_nanos() as u64;
            let m = (w.run)(&input, parses);
            let total_ns = started.elapsed().as_nanos() as u64;
            let r = rusage();
            // The reported parse: the last (in the limit's `once`, the one
            // after the warm-up).
            let last = m.parse_ns.len() - 1;
            let stats = m.stats_parse.as_ref().map_or("null".to_string(), |s| {
                let kv: Vec<String> = s.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                format!("{{{}}}", kv.join(","))
            });
            let line = format!(
                "{{\"workload\":\"{}\",\"build\":\"{}\",\"mode\":\"{}\",\"parses\":{},\"parse_ns\":{},\"drop_ns\":{},\"minflt_parse\":{},\"minflt_drop\":{},\"all_parse_ns\":{},\"all_drop_ns\":{},\"read_ns\":{},\"total_ns\":{},\"maxrss_kb\":{},\"minflt\":{},\"majflt\":{},\"utime_us\":{},\"stime_us\":{},\"items\":{},\"input_bytes\":{},\"batch\":{},\"limit\":{}}}",
                w.name,
                crate::alloc::BUILD,
                cmd,
                parses,
                m.parse_ns[last],
                m.drop_ns[last],
                m.minflt_parse[last],
                m.minflt_drop[last],
                json_list(&m.parse_ns),
                json_list(&m.drop_ns),
                read_ns,
                total_ns,
                r.maxrss_kb,
                r.minflt,
                r.majflt,
                r.utime_us,
                r.stime_us,
                m.items,
                input.len(),
                stats,
                crate::alloc::limit_report()
            );
            emit(&line);
        }
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
}

/// Prints a run's JSON line, and appends it to `CRATES_LOG`'s file.
fn emit(line: &str) {
    println!("{line}");
    if let Some(log) = std::env::var_os("CRATES_LOG") {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .expect("open CRATES_LOG");
        writeln!(f, "{line}").expect("write CRATES_LOG");
    }
}

/// A small deterministic generator (xorshift64*), the same on every build.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    /// An identifier-like word of `min..=max` letters.
    pub fn word(&mut self, min: usize, max: usize) -> String {
        const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
        let len = min + self.below(max - min + 1);
        (0..len)
            .map(|_| LETTERS[self.below(LETTERS.len())] as char)
            .collect()
    }
}

/// FNV-1a over bytes: the digest `check` prints.
pub fn digest(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}
