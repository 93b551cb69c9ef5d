//! `memory SIZE N STRATEGY`: resident memory of `N` live objects.
//!
//! One configuration per process, so that peaks and leftovers belong to it
//! alone. Reads `VmRSS` and `VmHWM` from `/proc/self/status`:
//!
//! - `rss_start`: the process before anything is made;
//! - `rss_before`: with the list that will hold the `N` pointers made and
//!   touched, so that the next difference is the objects alone;
//! - `rss_live`: with the `N` objects alive; `(rss_live - rss_before) / N` is
//!   the resident cost of one object, headers and slack included;
//! - `hwm`: the process's peak;
//! - `rss_after`: once the objects and the list are dropped.
//!
//! `STRATEGY` is one of the binary's strategies, or `box` for `Box::new`
//! per item on this binary's allocator (through the wrapper where there is
//! one).

use std::hint::black_box;

use super::strategies::{Boxes, Item, Strategy, T16, T64};
use super::{each_strategy, Binary, Visit};

pub fn run<B: Binary>(args: &[String]) {
    let usage = "usage: memory SIZE N STRATEGY";
    let size: usize = args.first().and_then(|s| s.parse().ok()).expect(usage);
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).expect(usage);
    let label = args.get(2).expect(usage).as_str();
    let mut measure = Measure {
        label,
        n,
        line: None,
    };
    match size {
        16 => visit::<B, T16>(&mut measure),
        64 => visit::<B, T64>(&mut measure),
        _ => panic!("sizes: 16 or 64"),
    }
    let line = measure
        .line
        .unwrap_or_else(|| panic!("{} has no strategy {label}", B::ALLOCATOR.label()));
    println!(
        "{{\"allocator\":\"{}\",\"strategy\":\"{label}\",\"size\":{size},\"n\":{n},{line}}}",
        B::ALLOCATOR.label()
    );
}

fn visit<B: Binary, T: Item>(measure: &mut Measure<'_>) {
    if measure.label == "box" {
        measure.strategy::<Boxes<T>>("box");
    } else {
        each_strategy::<B, T, _>(measure);
    }
}

struct Measure<'a> {
    label: &'a str,
    n: usize,
    line: Option<String>,
}

impl<T: Item> Visit<T> for Measure<'_> {
    fn strategy<S: Strategy<T>>(&mut self, label: &str) {
        if label != self.label {
            return;
        }
        let start = status();
        let mut held = S::new(self.n);
        let before = status();
        held.fill(self.n);
        black_box(&mut held);
        let live = status();
        let stats = batch_alloc::stats();
        held.release();
        drop(held);
        let after = status();
        self.line = Some(format!(
            "\"rss_start\":{},\"rss_before\":{},\"rss_live\":{},\"hwm\":{},\"rss_after\":{},\
             \"span_bytes_live\":{},\"batched_boxes\":{},\"cached_bytes_after\":{}",
            start.rss,
            before.rss,
            live.rss,
            live.hwm,
            after.rss,
            stats.span_bytes,
            stats.batched_boxes,
            batch_alloc::stats().cached_bytes,
        ));
    }
}

struct Status {
    rss: u64,
    hwm: u64,
}

/// `VmRSS` and `VmHWM`, in bytes.
fn status() -> Status {
    let text = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let field = |name: &str| -> u64 {
        let line = text
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in /proc/self/status"));
        let kib: u64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .expect("a number of kB");
        kib * 1024
    };
    Status {
        rss: field("VmRSS:"),
        hwm: field("VmHWM:"),
    }
}
