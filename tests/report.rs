//! The per-site report (feature `report`): each place that opens a scope
//! (an annotated function, an `async fn`, a `scope()` call) counts how often
//! it opened or joined one and every allocation its scopes served; without
//! the feature, `report()` says how to turn it on. A test binary of its
//! own: the report is the process's, of every site in the binary, and the
//! table names these sites. CI runs it with the feature: `cargo test
//! --features report --test report`.

// Vectors of boxes are what the attribute is for.
#![allow(clippy::vec_box)]

use batch_alloc::{batch_alloc, report, scope, BatchAlloc};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

#[batch_alloc]
fn build(n: u64) -> Vec<Box<u64>> {
    (0..n).map(Box::new).collect()
}

#[batch_alloc]
fn leaf(i: u64) -> Box<u64> {
    Box::new(i)
}

fn strings(n: usize) -> Vec<String> {
    (0..n).map(|i| i.to_string()).collect()
}

/// The report's line for the function named `name`.
#[cfg(feature = "report")]
fn line_for<'t>(table: &'t str, name: &str) -> &'t str {
    table
        .lines()
        .find(|l| l.starts_with("tests/report.rs:") && l.split_whitespace().nth(1) == Some(name))
        .unwrap_or_else(|| panic!("no site {name} in\n{table}"))
}

/// The number after `served ` in a report line.
#[cfg(feature = "report")]
fn served(line: &str) -> u64 {
    line.split("served ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"))
}

#[cfg(feature = "report")]
#[test]
fn each_site_says_what_it_did() {
    for _ in 0..3 {
        drop(build(100));
    }
    drop(leaf(1));
    // Joined: `leaf` inside a scope opened by `scope()`, which counts the
    // 20 strings and their vector as well as the box.
    let scope_line = line!() + 1;
    let (numbers, boxed) = scope(|| (strings(20), leaf(2)));
    drop((numbers, boxed));
    let table = report();
    // Each call of `build` opened a scope that served its 100 boxes and
    // the vector.
    let function = line_for(&table, "build");
    assert!(function.contains("3 opened a scope (served"), "{table}");
    assert!(served(function) >= 303, "{table}");
    let leaf_fn = line_for(&table, "leaf");
    assert!(
        leaf_fn.contains("1 opened a scope") && leaf_fn.contains("1 joined one"),
        "{table}"
    );
    let place = format!("tests/report.rs:{scope_line}:");
    let scope_call = table
        .lines()
        .find(|l| l.starts_with(&place))
        .unwrap_or_else(|| panic!("no scope() at line {scope_line} in\n{table}"));
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
    drop(leaf(1));
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
        (0..n).map(Box::new).collect()
    }

    fn fill_twice(&self, n: u64) -> usize {
        (0..2).map(|_| self.fill(n).len()).sum()
    }
}

/// Each call of a method counts once, as opened or as joined.
#[cfg(feature = "report")]
#[test]
fn a_method_counts_each_call_once() {
    drop(Filler.fill(3));
    assert_eq!(Filler.fill_twice(2), 4);
    let table = report();
    let fill = line_for(&table, "fill");
    assert!(
        fill.contains("1 opened a scope") && fill.contains("2 joined one"),
        "{table}"
    );
    assert!(
        line_for(&table, "fill_twice").contains("1 opened a scope"),
        "{table}"
    );
}

/// The site the fork test runs, apart from the other tests' (which count
/// theirs exactly, at the same time).
#[cfg(all(feature = "report", unix))]
#[batch_alloc]
fn forked_boxes(n: u64) -> Vec<Box<u64>> {
    (0..n).map(Box::new).collect()
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
    assert!(written.contains("1 sites ran"), "{written}");
    // The five boxes and their vector.
    let forked = line_for(&written, "forked_boxes");
    assert!(forked.contains(" 1  1 opened a scope"), "{written}");
    assert_eq!(served(forked), 6, "{written}");
    let (ended, written) = forked_exit(true, || {});
    assert_eq!(
        (ended, written.as_str()),
        (Forked::Exited(0), ""),
        "a child forked while another thread held std's stderr lock"
    );
}
