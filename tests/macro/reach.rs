//! The Rust people write, served: iterator chains, recursion, derived
//! `Deserialize` behind one `from_str`, `scope()` around any code, nested
//! in annotated functions and around them, panics crossing it, and `rayon`
//! tasks, each worker thread with its own scope.
//!
//! Counts are exact where the code's allocations are known: with capture
//! set to [`Capture::Boxes`], `scoped_allocations` moves by the annotated
//! `Box::new`s alone; with [`Capture::All`] (the default), by every
//! allocation made while a scope was open. The tests run one at a time
//! ([`with_capture`]), since the counters are process-wide.

#![allow(clippy::vec_box, clippy::box_collection)]

use std::collections::{BTreeMap, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};

use batch_alloc::__private::scope_on_this_thread;
use batch_alloc::{batch_alloc, scope, stats, Capture};
use serde::Deserialize;

use workloads::testing::{served, with_capture};

#[derive(Debug, PartialEq)]
struct Record {
    id: u64,
    name: String,
}

fn record(id: u64) -> Record {
    Record {
        id,
        name: format!("record {id}"),
    }
}

// ---- iterator adapters, no `for` ----

#[batch_alloc]
fn mapped(n: u64) -> Vec<Box<Record>> {
    (0..n).map(|i| Box::new(record(i))).collect()
}

#[batch_alloc]
fn filter_mapped(n: u64) -> Vec<Box<u64>> {
    (0..n)
        .filter_map(|i| match i % 2 {
            0 => Some(Box::new(i)),
            _ => None,
        })
        .collect()
}

#[batch_alloc]
fn flat_mapped(n: u64) -> Vec<Box<u64>> {
    (0..n).flat_map(|i| [Box::new(i), Box::new(i)]).collect()
}

#[batch_alloc]
fn for_each_pushed(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    (0..n).for_each(|i| out.push(Box::new(i)));
    out
}

#[batch_alloc]
fn folded(n: u64) -> Vec<Box<u64>> {
    (0..n).fold(Vec::new(), |mut out, i| {
        out.push(Box::new(i));
        out
    })
}

#[batch_alloc]
fn try_folded(words: &[&str]) -> Result<Vec<Box<u64>>, std::num::ParseIntError> {
    words.iter().try_fold(Vec::new(), |mut out, word| {
        out.push(Box::new(word.parse()?));
        Ok(out)
    })
}

#[batch_alloc]
fn extended(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    out.extend((0..n).map(Box::new));
    out
}

#[test]
fn iterator_adapters_are_served() {
    with_capture(Capture::Boxes, || {
        let n = 40;
        let (boxes, count) = served(|| mapped(n));
        assert_eq!(boxes.last().map(|b| b.id), Some(n - 1));
        assert_eq!(count, n, "every box of the chain");
        assert_eq!(served(|| filter_mapped(n)).1, n / 2);
        assert_eq!(served(|| flat_mapped(n)).1, 2 * n);
        assert_eq!(served(|| for_each_pushed(n)).1, n);
        assert_eq!(served(|| folded(n)).1, n);
        let (parsed, count) = served(|| try_folded(&["1", "2", "3"]));
        assert_eq!(parsed.unwrap().len(), 3);
        assert_eq!(count, 3);
        assert!(try_folded(&["1", "x"]).is_err());
        assert_eq!(scope_on_this_thread(), None, "closed after the chains");
    });
    // With capture, `.map(Box::new)`, which the attribute cannot rewrite,
    // is served as an allocation, and so are the vector's.
    with_capture(Capture::All, || {
        let (boxes, count) = served(|| extended(40));
        assert_eq!(boxes.len(), 40);
        assert!(count >= 40, "{count}");
    });
}

// ---- recursion, no loop ----

#[derive(Debug)]
struct Tree {
    left: Option<Box<Tree>>,
    right: Option<Box<Tree>>,
}

impl Tree {
    fn nodes(&self) -> u64 {
        1 + [&self.left, &self.right]
            .iter()
            .filter_map(|child| child.as_ref().map(|c| c.nodes()))
            .sum::<u64>()
    }
}

#[batch_alloc]
fn build(depth: u32) -> Box<Tree> {
    let child = || (depth > 0).then(|| build(depth - 1));
    Box::new(Tree {
        left: child(),
        right: child(),
    })
}

#[test]
fn a_recursive_builder_is_served_root_included() {
    with_capture(Capture::Boxes, || {
        let (tree, count) = served(|| build(6));
        assert_eq!(tree.nodes(), 127);
        assert_eq!(count, 127);
    });
}

// ---- derived `Deserialize`, one call ----

#[derive(Debug, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Shape {
    Circle { r: f64 },
    Polygon { points: Vec<(i32, i32)> },
}

#[derive(Debug, Deserialize, PartialEq)]
struct Document {
    title: String,
    tags: Vec<String>,
    author: Option<Box<Person>>,
    shapes: Vec<Shape>,
    meta: HashMap<String, String>,
    index: BTreeMap<u32, Vec<String>>,
    nested: Vec<Box<Document>>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Person {
    name: String,
    email: Option<String>,
}

fn document_json(i: usize) -> String {
    format!(
        r#"{{"title": "doc {i}", "tags": ["a", "bb", "ccc"],
            "author": {{"name": "Ada {i}", "email": null}},
            "shapes": [{{"kind": "circle", "r": 1.5}}, {{"kind": "polygon", "points": [[0, 0], [1, 2]]}}],
            "meta": {{"lang": "en", "rev": "{i}"}},
            "index": {{"1": ["x"], "2": ["y", "z"]}},
            "nested": [{{"title": "inner", "tags": [], "author": null, "shapes": [],
                         "meta": {{}}, "index": {{}}, "nested": []}}]}}"#
    )
}

#[batch_alloc]
fn parse_annotated(json: &str) -> Vec<Document> {
    serde_json::from_str(json).unwrap()
}

#[test]
fn derived_deserialize_is_served_by_scope_and_by_the_attribute() {
    let json = format!(
        "[{}]",
        (0..20).map(document_json).collect::<Vec<_>>().join(",")
    );
    with_capture(Capture::All, || {
        let expected: Vec<Document> = serde_json::from_str(&json).unwrap();
        let (plain, plain_count) = served(|| serde_json::from_str::<Vec<Document>>(&json));
        assert_eq!(plain.unwrap(), expected);
        assert_eq!(plain_count, 0, "no scope, nothing served");

        let live = stats().live_slots;
        let (scoped, count) = served(|| scope(|| serde_json::from_str::<Vec<Document>>(&json)));
        let scoped = scoped.unwrap();
        assert_eq!(scoped, expected);
        // Per document at least: the title, three tags, the author box and
        // name, the shapes and the polygon's points, the two maps' entries.
        assert!(count >= 20 * 15, "{count}");
        assert!(stats().live_slots > live);
        drop(scoped);
        assert_eq!(stats().live_slots, live, "every slot freed");

        let (annotated, count) = served(|| parse_annotated(&json));
        assert_eq!(annotated, expected);
        assert!(count >= 20 * 15, "{count}");
        assert_eq!(scope_on_this_thread(), None);
    });
}

// ---- scope() ----

#[batch_alloc]
fn annotated_calls_scope(n: u64) -> (Vec<Box<u64>>, Vec<Option<bool>>) {
    let mut seen = vec![scope_on_this_thread()];
    let boxes = scope(|| {
        seen.push(scope_on_this_thread());
        (0..n).map(Box::new).collect()
    });
    seen.push(scope_on_this_thread());
    (boxes, seen)
}

#[test]
fn scope_opens_joins_and_closes() {
    with_capture(Capture::All, || {
        assert_eq!(scope_on_this_thread(), None);
        let (value, count) = served(|| {
            scope(|| {
                assert_eq!(scope_on_this_thread(), Some(true));
                // `scope` inside `scope`, and an annotated function inside
                // `scope`, join it.
                let inner = scope(|| {
                    assert_eq!(scope_on_this_thread(), Some(true));
                    vec![1u64, 2, 3]
                });
                let (boxes, seen) = annotated_calls_scope(4);
                assert_eq!(seen, [Some(true); 3]);
                (inner, boxes)
            })
        });
        assert_eq!(value.0, [1, 2, 3]);
        assert_eq!(value.1.len(), 4);
        // The inner vector, the four boxes, the collected vector, `seen`
        // (and its growth).
        assert!(count >= 7, "{count}");
        assert_eq!(scope_on_this_thread(), None);

        // An annotated function that calls `scope` opened the scope itself.
        let ((boxes, seen), count) = served(|| annotated_calls_scope(5));
        assert_eq!(seen, [Some(true); 3]);
        assert_eq!(boxes.len(), 5);
        assert!(count >= 6, "{count}");
        assert_eq!(scope_on_this_thread(), None);
    });
}

#[test]
fn a_panic_crossing_scope_closes_it() {
    with_capture(Capture::All, || {
        let caught = catch_unwind(AssertUnwindSafe(|| {
            scope(|| {
                let _kept = String::from("dropped while unwinding");
                panic!("out of the scope");
            })
        }));
        assert!(caught.is_err());
        assert_eq!(scope_on_this_thread(), None, "closed by the unwind");
        // Caught inside: the scope stays open for the rest of the call.
        let after = scope(|| {
            let inner = catch_unwind(|| scope(|| panic!("inner")));
            assert!(inner.is_err());
            scope_on_this_thread()
        });
        assert_eq!(after, Some(true));
        assert_eq!(scope_on_this_thread(), None);
    });
}

#[test]
fn rayon_tasks_each_open_a_scope_on_their_own_thread() {
    use rayon::prelude::*;
    with_capture(Capture::All, || {
        // Workers spawned here, to be joined before the next test reads
        // the process-wide counters (a thread gives its runs back as it
        // exits).
        let workers = std::sync::Mutex::new(Vec::new());
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .spawn_handler(|worker| {
                let handle = std::thread::Builder::new().spawn(|| worker.run())?;
                workers.lock().unwrap().push(handle);
                Ok(())
            })
            .build()
            .unwrap();
        let docs: Vec<String> = (0..30).map(document_json).collect();
        let expected: Vec<Document> = docs
            .iter()
            .map(|d| serde_json::from_str(d).unwrap())
            .collect();
        let before = stats().scoped_allocations;
        let parsed: Vec<(Document, Option<bool>)> = pool.install(|| {
            docs.par_iter()
                .map(|doc| {
                    scope(|| {
                        let parsed = serde_json::from_str(doc).unwrap();
                        (parsed, scope_on_this_thread())
                    })
                })
                .collect()
        });
        let count = stats().scoped_allocations - before;
        assert!(parsed.iter().all(|(_, seen)| *seen == Some(true)));
        let parsed: Vec<Document> = parsed.into_iter().map(|(doc, _)| doc).collect();
        assert_eq!(parsed, expected);
        assert!(count >= 30 * 15, "{count}");
        // Annotated functions called from the tasks open the workers'
        // scopes too.
        let before = stats().scoped_allocations;
        let parsed: Vec<Vec<Document>> = pool.install(|| {
            docs.par_iter()
                .map(|doc| parse_annotated(&format!("[{doc}]")))
                .collect()
        });
        assert_eq!(parsed.len(), 30);
        assert!(stats().scoped_allocations - before >= 30 * 15);
        drop(pool);
        for worker in workers.into_inner().unwrap() {
            worker.join().unwrap();
        }
    });
}
