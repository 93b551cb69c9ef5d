//! The per-site report (feature `report`): each place that opens a scope
//! (an annotated function, an `async` body, a `scope()` call) counts how
//! often it opened or joined one and every allocation its scopes served;
//! each rewritten `Box::new` counts what happened there, and the table says
//! why an allocation was plain; without the feature, `report()` says how.
//! A test binary of its own: the report is the process's, of every site in
//! the binary, and the table names these sites by line. CI runs it with
//! the feature: `cargo test --features report --test report`.

// Vectors of boxes are what the attribute is for.
#![allow(clippy::vec_box)]

use batch_alloc::{batch_alloc, report, scope, BatchAlloc};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

#[batch_alloc]
fn build(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Box::new(i));
    }
    out
}

#[batch_alloc]
fn too_large() -> Box<[u8; 5000]> {
    Box::new([7; 5000])
}

#[batch_alloc]
fn leaf(i: u64) -> Box<u64> {
    Box::new(i)
}

fn strings(n: usize) -> Vec<String> {
    (0..n).map(|i| i.to_string()).collect()
}

/// The report's line for the site at `line` of this file.
#[cfg(feature = "report")]
fn line_for(table: &str, line: u32) -> &str {
    let place = format!("tests/report.rs:{line}:");
    table
        .lines()
        .find(|l| l.starts_with(&place))
        .unwrap_or_else(|| panic!("no site at line {line} in\n{table}"))
}

#[cfg(feature = "report")]
#[test]
fn each_site_says_what_it_did_and_why() {
    for _ in 0..3 {
        drop(build(100));
    }
    drop(too_large());
    drop(leaf(1));
    // Joined: `leaf` inside a scope opened by `scope()`, which counts the
    // 20 strings and their vector as well as the box.
    let (numbers, boxed) = scope(|| (strings(20), leaf(2)));
    drop((numbers, boxed));
    let table = report();
    // Each call of `build` opened a scope that served its 100 boxes and
    // the vector's growth.
    let function = line_for(&table, 19);
    assert!(function.contains("3 opened a scope (served"), "{table}");
    let served: u64 = function
        .split("served ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{table}"));
    assert!(served >= 300, "{table}");
    assert!(line_for(&table, 22).contains("300 from a scope"), "{table}");
    assert!(
        line_for(&table, 29).contains("1 plain: type not batched"),
        "{table}"
    );
    let leaf_fn = line_for(&table, 33);
    assert!(
        leaf_fn.contains("1 opened a scope") && leaf_fn.contains("1 joined one"),
        "{table}"
    );
    assert!(line_for(&table, 34).contains("2 from a scope"), "{table}");
    let scope_call = line_for(&table, 61);
    assert!(scope_call.contains("scope()"), "{table}");
    assert!(
        scope_call.contains("1 opened a scope (served 22 allocations)"),
        "{table}"
    );
}

#[cfg(not(feature = "report"))]
#[test]
fn without_the_feature_the_report_says_how_to_turn_it_on() {
    drop(build(10));
    drop((too_large(), leaf(1)));
    drop(scope(|| strings(3)));
    let text = report();
    assert!(text.contains("off"), "{text}");
    assert!(text.contains("features = [\"report\"]"), "{text}");
}

#[cfg(feature = "report")]
struct Filler;

#[cfg(feature = "report")]
#[batch_alloc]
impl Filler {
    fn fill(&self, n: u64) -> Vec<Box<u64>> {
        let mut out = Vec::new();
        for i in 0..n {
            out.push(Box::new(i));
        }
        out
    }

    fn fill_twice(&self, n: u64) -> usize {
        let mut total = 0;
        for _ in 0..2 {
            total += self.fill(n).len();
        }
        total
    }
}

/// A method of an annotated `impl` opens the scope by calling itself inside
/// it: each call still counts once, as opened or as joined.
#[cfg(feature = "report")]
#[test]
fn a_method_counts_each_call_once() {
    drop(Filler.fill(3));
    assert_eq!(Filler.fill_twice(2), 4);
    let table = report();
    let fill = line_for(&table, 111);
    assert!(
        fill.contains("1 opened a scope") && fill.contains("2 joined one"),
        "{table}"
    );
    assert!(
        line_for(&table, 119).contains("1 opened a scope"),
        "{table}"
    );
}

/// The sites the fork test runs, apart from the other tests' (which count
/// theirs exactly, at the same time). `FORKED_BOXES_LINE` is the line of
/// `forked_boxes`'s name.
#[cfg(all(feature = "report", unix))]
const FORKED_BOXES_LINE: u32 = line!() + 3;
#[cfg(all(feature = "report", unix))]
#[batch_alloc]
fn forked_boxes(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Box::new(i));
    }
    out
}

/// Runs `child` in a forked child whose stderr is a file, then ends it
/// with `exit(0)` (the exit handlers run, the report's print among them),
/// while another thread holds std's stderr lock if `stderr_held`: how the
/// child ended, and what it wrote to stderr.
#[cfg(all(feature = "report", unix))]
fn forked_exit(stderr_held: bool, child: impl FnOnce()) -> (workloads::testing::Forked, String) {
    use std::io::{Read, Seek};
    use std::os::fd::AsRawFd;
    use std::sync::{mpsc, Barrier};
    let mut file = tempfile();
    let fd = file.as_raw_fd();
    let (release, released) = mpsc::channel::<()>();
    let holding = std::sync::Arc::new(Barrier::new(2));
    let holder = stderr_held.then(|| {
        let holding = holding.clone();
        std::thread::spawn(move || {
            let _lock = std::io::stderr().lock();
            holding.wait();
            let _ = released.recv();
        })
    });
    if stderr_held {
        holding.wait();
    }
    let ended = workloads::testing::fork_and_wait(std::time::Duration::from_secs(10), || {
        child();
        // SAFETY: `fd` is the file's, open in this process; then a normal
        // exit, whose handlers run.
        unsafe {
            libc::dup2(fd, 2);
            libc::exit(0)
        }
    });
    drop(release);
    if let Some(holder) = holder {
        holder.join().unwrap();
    }
    let mut written = String::new();
    file.rewind().unwrap();
    file.read_to_string(&mut written).unwrap();
    (ended, written)
}

/// A file in the temporary directory, removed at once (open, it stays).
#[cfg(all(feature = "report", unix))]
fn tempfile() -> std::fs::File {
    let path = std::env::temp_dir().join(format!("batch-alloc-report-{}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    file
}

/// A forked child that exits normally prints only what ran in it: nothing
/// when nothing did (not its parent's report again), its own sites' counts
/// when some ran; and it exits although another thread of its parent held
/// std's stderr lock at the fork (the report is written without it).
#[cfg(all(feature = "report", unix))]
#[test]
fn a_forked_child_reports_only_what_ran_in_it_and_exits() {
    use workloads::testing::Forked;
    // The parent's report has sites, and its print at exit is registered.
    drop(forked_boxes(10));
    let (ended, written) = forked_exit(false, || {});
    assert_eq!(
        (ended, written.as_str()),
        (Forked::Exited(0), ""),
        "a child in which nothing ran"
    );
    let (ended, written) = forked_exit(false, || drop(forked_boxes(5)));
    assert_eq!(ended, Forked::Exited(0), "{written}");
    assert!(written.contains("2 sites ran"), "{written}");
    assert!(
        line_for(&written, FORKED_BOXES_LINE).contains(" 1  1 opened a scope"),
        "{written}"
    );
    assert!(
        line_for(&written, FORKED_BOXES_LINE + 3).contains(" 5  5 from a scope"),
        "{written}"
    );
    let (ended, written) = forked_exit(true, || {});
    assert_eq!(
        (ended, written.as_str()),
        (Forked::Exited(0), ""),
        "a child forked while another thread held std's stderr lock"
    );
}
