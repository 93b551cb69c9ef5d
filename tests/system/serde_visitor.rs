//! The pattern docs/serde.md documents for hand-written visitors:
//! `#[batch_alloc]` on `visit_seq` / `visit_map` (or on the whole `impl`)
//! batches the method's `while let ... { v.push(Box::new(x)) }` with nothing
//! else changed.
//!
//! `visitors!` writes the same visitors into three modules: `plain` as
//! written, `on_method` with the attribute on each `visit_*` method, and
//! `on_impl` with it on each `impl` block. Each test runs all three on the
//! same input and checks that they agree, on values and on errors, that
//! the plain code took nothing from batch-alloc and that the annotated code
//! took every box it made (and more: the strings and vectors) from its
//! batch scope. They run one at a time, each on a thread of its own
//! ([`serially`]).

#![allow(clippy::vec_box)]

use std::fmt::Debug;

use batch_alloc::stats;
use serde::{Deserialize, Serialize};

use workloads::testing::{assert_disjoint, assert_span_bytes_sane, box_range, serially, served};

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
pub struct Event {
    at: u64,
    kind: String,
    detail: Option<String>,
}

fn event(i: u64) -> Event {
    Event {
        at: i * 10,
        kind: ["open", "read", "write", "close"][i as usize % 4].to_string(),
        detail: (i % 3 == 0).then(|| format!("fd {i}")),
    }
}

/// A parse's value, which can list where its boxes are.
trait Boxes: Debug {
    fn box_ranges(&self, out: &mut Vec<(usize, usize)>);
}

impl<T: Debug> Boxes for Vec<Box<T>> {
    fn box_ranges(&self, out: &mut Vec<(usize, usize)>) {
        out.extend(self.iter().map(box_range));
    }
}

impl<T: Debug> Boxes for Vec<(String, Box<T>)> {
    fn box_ranges(&self, out: &mut Vec<(usize, usize)>) {
        out.extend(self.iter().map(|(_, b)| box_range(b)));
    }
}

impl<T: Boxes, E: Debug> Boxes for Result<T, E> {
    fn box_ranges(&self, out: &mut Vec<(usize, usize)>) {
        if let Ok(value) = self {
            value.box_ranges(out);
        }
    }
}

macro_rules! visitors {
    ($(#[$on_impl:meta])* ; $(#[$on_method:meta])*) => {
        use std::fmt;

        use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};

        use super::Event;

        pub struct Events;

        $(#[$on_impl])*
        impl<'de> Visitor<'de> for Events {
            type Value = Vec<Box<Event>>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of events")
            }

            $(#[$on_method])*
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut events = Vec::new();
                while let Some(event) = seq.next_element()? {
                    events.push(Box::new(event));
                }
                Ok(events)
            }
        }

        pub struct Named;

        $(#[$on_impl])*
        impl<'de> Visitor<'de> for Named {
            type Value = Vec<(String, Box<Event>)>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("events by name")
            }

            $(#[$on_method])*
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut named = Vec::new();
                while let Some((name, event)) = map.next_entry()? {
                    named.push((name, Box::new(event)));
                }
                Ok(named)
            }
        }

        /// A recursive type: every call of `visit_seq` but the outermost
        /// joins the outermost's batch scope.
        #[derive(Debug, PartialEq)]
        pub enum Tree {
            Leaf(u64),
            Branch(Vec<Box<Tree>>),
        }

        impl super::Boxes for Tree {
            fn box_ranges(&self, out: &mut Vec<(usize, usize)>) {
                if let Tree::Branch(children) = self {
                    for child in children {
                        out.push(super::box_range(child));
                        child.box_ranges(out);
                    }
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for Tree {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Tree, D::Error> {
                d.deserialize_any(TreeVisitor)
            }
        }

        struct TreeVisitor;

        $(#[$on_impl])*
        impl<'de> Visitor<'de> for TreeVisitor {
            type Value = Tree;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or a list of trees")
            }

            fn visit_u64<E>(self, v: u64) -> Result<Tree, E> {
                Ok(Tree::Leaf(v))
            }

            $(#[$on_method])*
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
                let mut children = Vec::new();
                while let Some(child) = seq.next_element()? {
                    children.push(Box::new(child));
                }
                Ok(Tree::Branch(children))
            }
        }

        pub fn events(json: &str) -> serde_json::Result<Vec<Box<Event>>> {
            let mut de = serde_json::Deserializer::from_str(json);
            let events = de.deserialize_seq(Events)?;
            de.end()?;
            Ok(events)
        }

        pub fn named(json: &str) -> serde_json::Result<Vec<(String, Box<Event>)>> {
            let mut de = serde_json::Deserializer::from_str(json);
            let named = de.deserialize_map(Named)?;
            de.end()?;
            Ok(named)
        }

        pub fn tree(json: &str) -> serde_json::Result<Tree> {
            serde_json::from_str(json)
        }
    };
}

mod plain {
    visitors!(;);
}

mod on_method {
    use batch_alloc::batch_alloc;
    visitors!(; #[batch_alloc]);
}

mod on_impl {
    use batch_alloc::batch_alloc;
    visitors!(#[batch_alloc];);
}

type Parse<R> = fn(&str) -> serde_json::Result<R>;

/// Runs the three versions of one parse on `json`. They must agree (on the
/// value, or on the error, message and position); batch-alloc serves the
/// plain one nothing, and each annotated one at least `expected` boxes. No box of an
/// annotated version's value overlaps another, or one of the plain value.
/// Every slot is free again once the values are dropped.
fn three_ways<R: Boxes, M: Boxes, I: Boxes>(
    json: &str,
    (plain, on_method, on_impl): (Parse<R>, Parse<M>, Parse<I>),
    expected: u64,
) -> serde_json::Result<R> {
    let before = stats();
    let (want, plain_count) = served(|| plain(json));
    assert_eq!(plain_count, 0, "batch-alloc served plain code");
    let want_text = format!("{want:?}");
    let check = |name: &str, got: &dyn Boxes, count: u64| {
        assert_eq!(format!("{got:?}"), want_text, "attribute {name}");
        assert!(
            count >= expected,
            "{count} allocations from batch-alloc, attribute {name}"
        );
        let mut ranges = Vec::new();
        want.box_ranges(&mut ranges);
        got.box_ranges(&mut ranges);
        assert_disjoint(&mut ranges);
    };
    let settled = |name: &str| {
        let after = stats();
        assert_span_bytes_sane(&after);
        assert_eq!(
            after.live_slots, before.live_slots,
            "attribute {name}: slots left behind"
        );
    };
    let (got, count) = served(|| on_method(json));
    check("on the method", &got, count);
    drop(got);
    settled("on the method");
    let (got, count) = served(|| on_impl(json));
    check("on the impl", &got, count);
    drop(got);
    settled("on the impl");
    want
}

#[test]
fn visit_seq_serves_its_loop() {
    serially(|| {
        for n in [0, 1, 2, 3, 10, 1000] {
            let json = serde_json::to_string(&(0..n).map(event).collect::<Vec<_>>()).unwrap();
            let events = three_ways(
                &json,
                (plain::events, on_method::events, on_impl::events),
                n,
            )
            .unwrap();
            assert_eq!(events.len(), n as usize);
            assert!(events.iter().zip(0..).all(|(e, i)| **e == event(i)));
        }
    });
}

#[test]
fn visit_map_serves_its_loop() {
    serially(|| {
        for n in [0, 2, 3, 500] {
            let map: serde_json::Map<String, serde_json::Value> = (0..n)
                .map(|i| (format!("e{i}"), serde_json::to_value(event(i)).unwrap()))
                .collect();
            let json = serde_json::to_string(&map).unwrap();
            let named =
                three_ways(&json, (plain::named, on_method::named, on_impl::named), n).unwrap();
            assert_eq!(named.len(), n as usize);
        }
    });
}

#[test]
fn a_malformed_element_fails_like_the_plain_visitor_and_leaks_nothing() {
    serially(|| {
        let good = (0..300)
            .map(|i| serde_json::to_string(&event(i)).unwrap())
            .collect::<Vec<_>>()
            .join(",\n");
        let bad = [
            format!(r#"[{good}, {{"at": "noon", "kind": "open"}}]"#),
            format!(r#"[{good}, {{"kind": "open"}}]"#),
            format!("[{good}, "),
            format!("[{good},]"),
            "{}".to_string(),
        ];
        for json in &bad {
            // The loop boxed 300 events before `?` left it.
            let expected = if json.starts_with('[') { 300 } else { 0 };
            let error = three_ways(
                json,
                (plain::events, on_method::events, on_impl::events),
                expected,
            )
            .expect_err(json);
            assert!(error.line() > 0, "{error}");
        }
    });
}

#[test]
fn a_recursive_visitor_joins_one_scope() {
    serially(|| {
        // A branch of 1000 leaves, one of 3 and one of 2, inside a branch of
        // 4: the outermost `visit_seq` opens the scope before its loop, the
        // inner calls join it, and every box is served.
        let json = format!(
            "[{}, [1, 2, 3], [4, 5], 6]",
            serde_json::to_string(&(0..1000).collect::<Vec<u64>>()).unwrap()
        );
        let tree = three_ways(
            &json,
            (plain::tree, on_method::tree, on_impl::tree),
            1000 + 3 + 2 + 4,
        );
        let plain::Tree::Branch(top) = tree.unwrap() else {
            panic!("a list at the top")
        };
        assert_eq!(*top[3], plain::Tree::Leaf(6));
    });
}
