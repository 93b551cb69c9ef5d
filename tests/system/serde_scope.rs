//! `#[serde(with = "batch_alloc::serde_scope")]`: the field reads as serde
//! reads it (values, errors, panics), only its own allocations come from
//! the scope's runs, and nothing is left behind when the input is
//! malformed or a `Deserialize` panics halfway.
//!
//! The counters are process-wide, so every test runs [`serially`]: one at a
//! time, each on a thread of its own.

#![allow(clippy::vec_box, clippy::box_collection)]

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};

use batch_alloc::stats;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

use workloads::testing::{
    assert_disjoint, assert_slots_back_at, assert_span_bytes_sane, box_range, serially, silenced,
};

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Item {
    id: u32,
    name: String,
    tags: Vec<String>,
    weight: Option<f32>,
}

fn item(id: u32) -> Item {
    Item {
        id,
        name: format!("item-{id}"),
        tags: (0..id % 3).map(|t| format!("t{t}")).collect(),
        weight: (id % 4 != 0).then_some(id as f32 / 4.0),
    }
}

/// Allocations the scope served while `f` ran.
fn counting<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = stats().scoped_allocations;
    let result = f();
    (result, stats().scoped_allocations - before)
}

/// A container of boxes, which can list where its boxes are.
trait Boxes {
    fn box_ranges(&self, out: &mut Vec<(usize, usize)>);
}

/// `Boxes` for containers whose `$boxes` (an expression of `c`) iterates
/// over `&Box<_>`.
macro_rules! boxes {
    ($(impl<$($p:ident),*> for $ty:ty => |$c:ident| $boxes:expr;)*) => {$(
        impl<$($p),*> Boxes for $ty {
            fn box_ranges(&self, out: &mut Vec<(usize, usize)>) {
                let $c = self;
                out.extend($boxes.map(box_range));
            }
        }
    )*};
}

boxes! {
    impl<T> for Vec<Box<T>> => |c| c.iter();
    impl<T> for VecDeque<Box<T>> => |c| c.iter();
    impl<T> for Vec<Option<Box<T>>> => |c| c.iter().flatten();
    impl<K, V, S> for HashMap<K, Box<V>, S> => |c| c.values();
    impl<K, V> for BTreeMap<K, Box<V>> => |c| c.values();
}

fn assert_boxes_disjoint(containers: &[&dyn Boxes]) {
    let mut ranges = Vec::new();
    for c in containers {
        c.box_ranges(&mut ranges);
    }
    assert_disjoint(&mut ranges);
}

/// Deserializes `json` through `serde_scope::deserialize`, as
/// `#[serde(with)]` calls it, and requires the whole input to be used.
fn through<C: DeserializeOwned>(json: &str) -> serde_json::Result<C> {
    let mut de = serde_json::Deserializer::from_str(json);
    let value = batch_alloc::serde_scope::deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// `value` through serde_json: the scoped read gives back what was written
/// and what serde's own impl reads, its `boxes` boxes (at least) come from
/// the scope, no box of the three overlaps another, and every slot is free
/// again once they are dropped.
fn round_trip<C>(value: &C, boxes: u64)
where
    C: Serialize + DeserializeOwned + PartialEq + Debug + Boxes,
{
    let before = stats();
    let json = serde_json::to_string(value).unwrap();
    let (scoped, served) = counting(|| through::<C>(&json).unwrap());
    let (serdes, outside) = counting(|| serde_json::from_str::<C>(&json).unwrap());
    assert_eq!(&scoped, value, "round trip of {json}");
    assert_eq!(
        scoped, serdes,
        "serde_scope and serde's impl differ on {json}"
    );
    assert!(
        served >= boxes,
        "{served} allocations from the scope for {json}"
    );
    assert_eq!(outside, 0, "serde's impl alone opened a scope");
    assert_boxes_disjoint(&[value, &scoped, &serdes]);
    drop((scoped, serdes));
    assert_slots_back_at(&before, &stats());
}

const LENGTHS: [u32; 6] = [0, 1, 2, 17, 300, 5000];

#[test]
fn containers_of_boxes_read_as_serde_reads_them() {
    serially(|| {
        for n in LENGTHS {
            let boxes = u64::from(n);
            let list: Vec<Box<Item>> = (0..n).map(|i| Box::new(item(i))).collect();
            round_trip(&list, boxes);
            let queue: VecDeque<Box<Item>> = list.iter().cloned().collect();
            round_trip(&queue, boxes);
            let holes: Vec<Option<Box<Item>>> = (0..n)
                .map(|i| (i % 3 != 1).then(|| Box::new(item(i))))
                .collect();
            round_trip(&holes, holes.iter().flatten().count() as u64);
            let by_name: HashMap<String, Box<Item>> = (0..n)
                .map(|i| (format!("k{i}"), Box::new(item(i))))
                .collect();
            round_trip(&by_name, boxes);
            let by_id: BTreeMap<u32, Box<Item>> = (0..n).map(|i| (i, Box::new(item(i)))).collect();
            round_trip(&by_id, boxes);
        }
    });
}

/// The form users write: one field scoped, one as serde reads it.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Record {
    plain: Vec<Box<u64>>,
    #[serde(with = "batch_alloc::serde_scope")]
    scoped: Vec<Box<u64>>,
}

#[test]
fn only_the_named_field_is_scoped() {
    serially(|| {
        let value = Record {
            plain: (0..1000).map(Box::new).collect(),
            scoped: (0..10).map(Box::new).collect(),
        };
        let json = serde_json::to_string(&value).unwrap();
        let (back, served) = counting(|| serde_json::from_str::<Record>(&json).unwrap());
        assert_eq!(back, value);
        assert!(
            (10..1000).contains(&served),
            "{served} allocations from the scope: the ten of `scoped`, not the thousand of `plain`"
        );
        // Inside a scope already open, the field's scope joins it.
        let (again, served) =
            counting(|| batch_alloc::scope(|| serde_json::from_str::<Record>(&json).unwrap()));
        assert_eq!(again, value);
        assert!(served >= 1010, "{served}");
    });
}

/// Malformed inputs.
fn malformed_lists() -> Vec<(&'static str, String)> {
    let items = |n: u32| {
        (0..n)
            .map(|i| serde_json::to_string(&item(i)).unwrap())
            .collect::<Vec<_>>()
            .join(",\n")
    };
    vec![
        ("not a list", r#"{"id": 1}"#.to_string()),
        ("a string", r#""items""#.to_string()),
        (
            "a bad element",
            format!(r#"[{}, {{"id": "x", "name": "", "tags": []}}]"#, items(150)),
        ),
        (
            "a missing field",
            format!(r#"[{}, {{"id": 1, "tags": []}}]"#, items(40)),
        ),
        ("cut short", format!("[{}, ", items(100))),
        ("a trailing comma", format!("[{},]", items(60))),
        ("an unclosed list", format!("[{}", items(80))),
    ]
}

/// Malformed input fails with serde's own error, position included, and
/// every slot the scope served is free again once the error is back.
fn fails_like_serde<C: DeserializeOwned + Debug>(what: &str, json: &str) {
    let live = stats().live_slots;
    let ours = through::<C>(json).expect_err(what).to_string();
    let serdes = serde_json::from_str::<C>(json).expect_err(what).to_string();
    assert_eq!(ours, serdes, "{what}");
    assert_eq!(stats().live_slots, live, "{what}: slots left behind");
    assert_span_bytes_sane(&stats());
}

#[test]
fn malformed_input_fails_like_serde_and_leaks_nothing() {
    serially(|| {
        for (what, json) in malformed_lists() {
            fails_like_serde::<Vec<Box<Item>>>(what, &json);
            fails_like_serde::<Vec<Option<Box<Item>>>>(what, &json);
        }
        let entries = |n: u32| {
            (0..n)
                .map(|i| format!("\"{i}\": {}", serde_json::to_string(&item(i)).unwrap()))
                .collect::<Vec<_>>()
                .join(",\n")
        };
        let maps = [
            ("not a map", "[1, 2, 3]".to_string()),
            (
                "a bad value",
                format!(r#"{{{}, "x": {{"id": -1}}}}"#, entries(120)),
            ),
            (
                "a bad key",
                format!(r#"{{{}, "seven": {}}}"#, entries(50), "{}"),
            ),
            ("cut short", format!("{{{}, ", entries(70))),
            ("a missing value", format!(r#"{{{}, "9": }}"#, entries(30))),
        ];
        for (what, json) in maps {
            fails_like_serde::<BTreeMap<u32, Box<Item>>>(what, &json);
            fails_like_serde::<HashMap<u32, Box<Item>>>(what, &json);
        }
    });
}

/// Panics in `Deserialize` at the value 99.
#[derive(Debug)]
struct Fuse(#[allow(dead_code)] u64);

impl<'de> Deserialize<'de> for Fuse {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = u64::deserialize(d)?;
        assert!(v != 99, "the 100th element");
        Ok(Fuse(v))
    }
}

#[test]
fn a_panic_halfway_closes_the_scope_and_leaks_nothing() {
    serially(|| {
        let json = serde_json::to_string(&(0..200).collect::<Vec<u64>>()).unwrap();
        let before = stats();
        let (result, served) = counting(|| {
            catch_unwind(AssertUnwindSafe(|| {
                silenced(|| through::<Vec<Box<Fuse>>>(&json))
            }))
        });
        assert!(result.is_err(), "the 100th element panics");
        // The payload, boxed where the panic was, is a slot too.
        drop(result);
        assert!(served >= 99, "{served}");
        assert_slots_back_at(&before, &stats());
        // The unwinding closed the scope: a box made now is not served.
        let (after, served) = counting(|| Box::new(7u64));
        assert_eq!((*after, served), (7, 0));
    });
}

#[test]
fn boxes_outlive_their_container_and_cross_threads() {
    serially(|| {
        let before = stats();
        let json = serde_json::to_string(&(0..500).map(item).collect::<Vec<_>>()).unwrap();
        let (mut list, served) = counting(|| through::<Vec<Box<Item>>>(&json).unwrap());
        assert!(served >= 500, "{served}");
        assert!(list.iter().zip(0..).all(|(b, i)| **b == item(i)));
        assert_boxes_disjoint(&[&list]);
        let kept = list.swap_remove(250);
        let dropped_elsewhere = std::thread::spawn(move || {
            let sum: u64 = list.iter().map(|i| u64::from(i.id)).sum();
            drop(list);
            sum
        })
        .join()
        .unwrap();
        assert_eq!(dropped_elsewhere, (0..500).sum::<u64>() - 250);
        assert_eq!(*kept, item(250));
        assert!(
            stats().live_slots > before.live_slots,
            "the kept box is a slot"
        );
        drop(kept);
        assert_slots_back_at(&before, &stats());
    });
}
