//! The `batch_alloc::serde_boxes` helpers: the same values and the same errors as
//! serde's own impls, the boxes from batches, and nothing left behind when
//! the input is malformed.
//!
//! How many boxes a batch serves is the runtime's business (a batch falls
//! back to plain boxes when it has no memory, for instance), so the
//! expected counts come from [`model`]: a `Batch` made by hand with the hint
//! the helper should have given it, allocating as many boxes of the same
//! type. The tests check that the model counts something wherever they rely
//! on it to tell batching from not batching.
//!
//! The counters are process-wide, so every test runs [`serially`]: one at a
//! time, each on a thread of its own.

#![allow(clippy::vec_box, clippy::box_collection)]

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt::Debug;
use std::hash::BuildHasherDefault;
use std::panic::{catch_unwind, AssertUnwindSafe};

use batch_alloc::{stats, Batch};
use serde::de::value::{Error as ValueError, MapDeserializer, SeqDeserializer};
use serde::de::{DeserializeOwned, IntoDeserializer};
use serde::{Deserialize, Deserializer, Serialize};

use workloads::testing::{
    assert_disjoint, assert_slots_back_at, assert_span_bytes_sane, box_range, serially,
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

/// Boxes batches served while `f` ran (batches settle their counts when
/// they are dropped, which is before a helper returns).
fn counting<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = stats().batched_boxes;
    let result = f();
    (result, stats().batched_boxes - before)
}

/// What a helper's batch should serve: a batch with capacity hint `hint`
/// that boxes `values`.
fn model<T>(hint: usize, values: impl IntoIterator<Item = T>) -> u64 {
    let (boxes, count) = counting(|| {
        let mut batch = Batch::with_capacity(hint);
        values
            .into_iter()
            .map(|v| batch.alloc(v))
            .collect::<Vec<_>>()
    });
    drop(boxes);
    count
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

/// Panics if any two boxes of `containers` overlap.
fn assert_boxes_disjoint(containers: &[&dyn Boxes]) {
    let mut ranges = Vec::new();
    for c in containers {
        c.box_ranges(&mut ranges);
    }
    assert_disjoint(&mut ranges);
}

type Json<'a> = serde_json::Deserializer<serde_json::de::StrRead<'a>>;

/// A helper as `#[serde(deserialize_with)]` calls it on JSON.
trait Helper<C>: for<'a, 'b> Fn(&'b mut Json<'a>) -> serde_json::Result<C> {}

impl<C, F: for<'a, 'b> Fn(&'b mut Json<'a>) -> serde_json::Result<C>> Helper<C> for F {}

/// `batch_alloc::serde_boxes::$name`, on JSON.
macro_rules! helper {
    ($name:ident $(::<$($ty:ty),*>)?) => {
        |de: &mut Json<'_>| batch_alloc::serde_boxes::$name $(::<$($ty),*>)? (de)
    };
}

/// Deserializes `json` through `helper`, as `#[serde(deserialize_with)]`
/// would, and requires the whole input to be used.
fn through<C>(helper: impl Helper<C>, json: &str) -> serde_json::Result<C> {
    let mut de = serde_json::Deserializer::from_str(json);
    let value = helper(&mut de)?;
    de.end()?;
    Ok(value)
}

/// `value` through serde_json: the helper gives back what was written and
/// what serde's own impl reads, and serves `expected_batched` boxes. No box
/// of the three overlaps another, and every slot is free again once they
/// are dropped.
fn round_trip<C>(helper: impl Helper<C>, value: &C, expected_batched: u64)
where
    C: Serialize + DeserializeOwned + PartialEq + Debug + Boxes,
{
    let before = stats();
    let json = serde_json::to_string(value).unwrap();
    let (helped, batched) = counting(|| through(helper, &json).unwrap());
    let serdes: C = serde_json::from_str(&json).unwrap();
    assert_eq!(&helped, value, "round trip of {json}");
    assert_eq!(
        helped, serdes,
        "the helper and serde's impl differ on {json}"
    );
    assert_eq!(batched, expected_batched, "boxes from batches for {json}");
    assert_boxes_disjoint(&[value, &helped, &serdes]);
    drop((helped, serdes));
    assert_slots_back_at(&before, &stats());
}

const LENGTHS: [u32; 7] = [0, 1, 2, 3, 17, 300, 5000];

#[test]
fn vec_box_round_trips() {
    serially(|| {
        for n in LENGTHS {
            let value: Vec<Box<Item>> = (0..n).map(|i| Box::new(item(i))).collect();
            // JSON gives no length, so the batch has no hint.
            let expected = model(0, (0..n).map(item));
            round_trip(helper!(vec_box), &value, expected);
        }
        assert!(model(0, (0..300).map(item)) > 0);
    });
}

#[test]
fn vec_deque_box_round_trips() {
    serially(|| {
        for n in LENGTHS {
            let value: VecDeque<Box<Item>> = (0..n).map(|i| Box::new(item(i))).collect();
            let expected = model(0, (0..n).map(item));
            round_trip(helper!(vec_deque_box), &value, expected);
        }
    });
}

#[test]
fn vec_option_box_round_trips() {
    serially(|| {
        let present = |i: &u32| i % 3 != 1;
        for n in LENGTHS {
            let value: Vec<Option<Box<Item>>> = (0..n)
                .map(|i| present(&i).then(|| Box::new(item(i))))
                .collect();
            // `null`s take no slot.
            let expected = model(0, (0..n).filter(present).map(item));
            round_trip(helper!(vec_option_box), &value, expected);
        }
        assert!(model(0, (0..300).filter(present).map(item)) > 0);
    });
}

#[test]
fn hash_map_box_round_trips() {
    serially(|| {
        for n in LENGTHS {
            let value: HashMap<String, Box<Item>> = (0..n)
                .map(|i| (format!("k{i}"), Box::new(item(i))))
                .collect();
            let expected = model(0, (0..n).map(item));
            round_trip(helper!(hash_map_box), &value, expected);
        }
    });
}

#[test]
fn hash_map_box_takes_any_default_hasher() {
    serially(|| {
        type Map = HashMap<u64, Box<u64>, BuildHasherDefault<DefaultHasher>>;
        let value: Map = (0..100).map(|i| (i, Box::new(i * i))).collect();
        round_trip::<Map>(helper!(hash_map_box), &value, model(0, 0..100u64));
    });
}

#[test]
fn btree_map_box_round_trips() {
    serially(|| {
        for n in LENGTHS {
            let value: BTreeMap<u32, Box<Item>> = (0..n).map(|i| (i, Box::new(item(i)))).collect();
            let expected = model(0, (0..n).map(item));
            round_trip(helper!(btree_map_box), &value, expected);
        }
    });
}

#[test]
fn a_repeated_key_keeps_the_last_value_as_serde_does() {
    serially(|| {
        let before = stats();
        let json = r#"{"a": 1, "b": 2, "a": 3, "c": 4, "a": 5, "d": 6}"#;
        let hashed: HashMap<String, Box<u32>> = through(helper!(hash_map_box), json).unwrap();
        assert_eq!(hashed, serde_json::from_str(json).unwrap());
        assert_eq!(*hashed["a"], 5);
        let sorted: BTreeMap<String, Box<u32>> = through(helper!(btree_map_box), json).unwrap();
        assert_eq!(sorted, serde_json::from_str(json).unwrap());
        assert_boxes_disjoint(&[&hashed, &sorted]);
        drop((hashed, sorted));
        // The replaced values' boxes were freed, batched or not.
        assert_slots_back_at(&before, &stats());
    });
}

/// The form users write: a struct whose fields name the helpers.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Helped {
    #[serde(deserialize_with = "batch_alloc::serde_boxes::vec_box")]
    list: Vec<Box<Item>>,
    #[serde(deserialize_with = "batch_alloc::serde_boxes::vec_deque_box")]
    queue: VecDeque<Box<String>>,
    #[serde(deserialize_with = "batch_alloc::serde_boxes::vec_option_box")]
    holes: Vec<Option<Box<u64>>>,
    #[serde(deserialize_with = "batch_alloc::serde_boxes::hash_map_box")]
    by_name: HashMap<String, Box<Item>>,
    #[serde(deserialize_with = "batch_alloc::serde_boxes::btree_map_box")]
    by_id: BTreeMap<u32, Box<Item>>,
}

#[test]
fn struct_fields_name_every_helper() {
    serially(|| {
        let value = Helped {
            list: (0..50).map(|i| Box::new(item(i))).collect(),
            queue: (0..40).map(|i| Box::new(format!("job {i}"))).collect(),
            holes: (0..30).map(|i| (i % 2 == 0).then(|| Box::new(i))).collect(),
            by_name: (0..20)
                .map(|i| (format!("n{i}"), Box::new(item(i))))
                .collect(),
            by_id: (0..10).map(|i| (i, Box::new(item(i)))).collect(),
        };
        let expected = model(0, (0..50).map(item))
            + model(0, (0..40).map(|i| format!("job {i}")))
            + model(0, (0..30u64).step_by(2))
            + model(0, (0..20).map(item))
            + model(0, (0..10).map(item));
        assert!(expected > 0);
        let json = serde_json::to_string_pretty(&value).unwrap();
        let (back, batched) = counting(|| serde_json::from_str::<Helped>(&json).unwrap());
        assert_eq!(back, value);
        assert_eq!(batched, expected);
    });
}

#[test]
fn a_length_from_the_input_sizes_the_batch() {
    serially(|| {
        let n = 1000u64;
        let values: Vec<u64> = (0..n).collect();

        // serde's value deserializers report their exact length, as binary
        // formats do.
        let de: SeqDeserializer<_, ValueError> = values.clone().into_deserializer();
        let before = stats();
        let boxes = batch_alloc::serde_boxes::vec_box::<_, u64>(de).unwrap();
        let after = stats();
        assert_eq!(boxes.iter().map(|b| **b).collect::<Vec<_>>(), values);
        let hinted = after.batched_boxes - before.batched_boxes;
        let hinted_refills = after.reserve_calls - before.reserve_calls;
        assert_eq!(hinted, model(n as usize, 0..n));
        assert_eq!(hinted, n, "a batch told the length serves every box");

        // JSON does not: the batch starts small and grows.
        let json = serde_json::to_string(&values).unwrap();
        let before = stats();
        let unhinted = through(helper!(vec_box::<_, u64>), &json).unwrap();
        let after = stats();
        assert_eq!(unhinted, boxes);
        assert_eq!(after.batched_boxes - before.batched_boxes, n);
        assert!(
            after.reserve_calls - before.reserve_calls > hinted_refills,
            "a hinted batch reserves in fewer calls ({hinted_refills})"
        );

        // Maps too.
        let map: BTreeMap<String, u64> = (0..n).map(|i| (format!("{i:04}"), i)).collect();
        let de: MapDeserializer<_, ValueError> = map.clone().into_deserializer();
        let (boxed, batched) =
            counting(|| batch_alloc::serde_boxes::btree_map_box::<_, String, u64>(de).unwrap());
        assert_eq!(batched, n);
        assert!(boxed.iter().all(|(k, v)| map[k] == **v));
    });
}

/// A deserializer that claims `claimed` elements (or entries) and yields
/// `actual` (as a map: pairs of them), like a corrupt or hostile length
/// prefix.
struct Lying {
    claimed: usize,
    actual: std::ops::Range<u64>,
}

impl<'de> serde::de::SeqAccess<'de> for Lying {
    type Error = serde_json::Error;

    fn next_element_seed<T: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, serde_json::Error> {
        match self.actual.next() {
            Some(v) => seed.deserialize(serde_json::Value::from(v)).map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.claimed)
    }
}

impl<'de> serde::de::MapAccess<'de> for Lying {
    type Error = serde_json::Error;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, serde_json::Error> {
        match self.actual.next() {
            Some(v) => seed.deserialize(serde_json::Value::from(v)).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, serde_json::Error> {
        let v = self.actual.next().expect("an even number of values");
        seed.deserialize(serde_json::Value::from(v))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.claimed)
    }
}

impl<'de> Deserializer<'de> for Lying {
    type Error = serde_json::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(
        self,
        v: V,
    ) -> Result<V::Value, serde_json::Error> {
        v.visit_seq(self)
    }

    fn deserialize_map<V: serde::de::Visitor<'de>>(
        self,
        v: V,
    ) -> Result<V::Value, serde_json::Error> {
        v.visit_map(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct struct enum identifier ignored_any
    }
}

#[test]
fn a_length_from_the_input_is_not_trusted() {
    serially(|| {
        let live = stats().live_slots;
        // serde's own limit: 1 MiB of elements.
        let most = (1 << 20) / size_of::<Box<u64>>();
        for claimed in [usize::MAX, u32::MAX as usize + 7, 1 << 40, 3] {
            let lying = |actual| Lying { claimed, actual };

            let list = batch_alloc::serde_boxes::vec_box::<_, u64>(lying(0..3)).unwrap();
            assert_eq!(list.iter().map(|b| **b).collect::<Vec<_>>(), [0, 1, 2]);
            assert!(list.capacity() <= most, "claimed {claimed}");
            let deque = batch_alloc::serde_boxes::vec_deque_box::<_, u64>(lying(0..3)).unwrap();
            assert!(deque.capacity() <= most, "claimed {claimed}");
            let holes = batch_alloc::serde_boxes::vec_option_box::<_, u64>(lying(0..3)).unwrap();
            assert_eq!(holes.len(), 3);
            assert!(holes.capacity() <= most, "claimed {claimed}");

            let map =
                batch_alloc::serde_boxes::hash_map_box::<_, u64, u64, std::hash::RandomState>(
                    lying(0..6),
                )
                .unwrap();
            assert_eq!(map.len(), 3);
            assert!(map.capacity() <= 2 * (1 << 20) / size_of::<(u64, Box<u64>)>());
            let sorted =
                batch_alloc::serde_boxes::btree_map_box::<_, u64, u64>(lying(0..6)).unwrap();
            assert_eq!(sorted.len(), 3);
            assert_boxes_disjoint(&[&list, &deque, &holes, &map, &sorted]);
            drop((list, deque, holes, map, sorted));
            assert_eq!(stats().live_slots, live, "claimed {claimed}");
            assert_span_bytes_sane(&stats());
        }
    });
}

/// Malformed inputs: each fails after `good` well-formed elements.
fn malformed_lists() -> Vec<(&'static str, String, u32)> {
    let items = |n: u32| {
        (0..n)
            .map(|i| serde_json::to_string(&item(i)).unwrap())
            .collect::<Vec<_>>()
            .join(",\n")
    };
    vec![
        ("not a list", r#"{"id": 1}"#.to_string(), 0),
        ("a string", r#""items""#.to_string(), 0),
        (
            "a bad element",
            format!(r#"[{}, {{"id": "x", "name": "", "tags": []}}]"#, items(150)),
            150,
        ),
        (
            "a missing field",
            format!(r#"[{}, {{"id": 1, "tags": []}}]"#, items(40)),
            40,
        ),
        ("cut short", format!("[{}, ", items(100)), 100),
        ("a trailing comma", format!("[{},]", items(60)), 60),
        ("an unclosed list", format!("[{}", items(80)), 80),
    ]
}

/// Malformed input fails with serde's own error, position included, and
/// every slot the helper took is free again once the error is back.
fn fails_like_serde<C: DeserializeOwned + Debug>(
    helper: impl Helper<C>,
    what: &str,
    json: &str,
    good: u32,
) {
    let live = stats().live_slots;
    let (result, batched) = counting(|| through(helper, json));
    let ours = result.expect_err(what).to_string();
    let serdes = serde_json::from_str::<C>(json).expect_err(what).to_string();
    assert_eq!(ours, serdes, "{what}");
    assert_eq!(stats().live_slots, live, "{what}: slots left behind");
    assert_span_bytes_sane(&stats());
    if good > 2 {
        assert!(batched > 0, "{what}: no batch was in use when it failed");
    }
}

#[test]
fn malformed_lists_fail_like_serde_and_leak_nothing() {
    serially(|| {
        for (what, json, good) in malformed_lists() {
            fails_like_serde::<Vec<Box<Item>>>(helper!(vec_box), what, &json, good);
            fails_like_serde::<VecDeque<Box<Item>>>(helper!(vec_deque_box), what, &json, good);
            fails_like_serde::<Vec<Option<Box<Item>>>>(helper!(vec_option_box), what, &json, good);
        }
    });
}

#[test]
fn malformed_maps_fail_like_serde_and_leak_nothing() {
    serially(|| {
        let entries = |n: u32| {
            (0..n)
                .map(|i| format!("\"{i}\": {}", serde_json::to_string(&item(i)).unwrap()))
                .collect::<Vec<_>>()
                .join(",\n")
        };
        let cases = [
            ("not a map", "[1, 2, 3]".to_string(), 0),
            (
                "a bad value",
                format!(r#"{{{}, "x": {{"id": -1}}}}"#, entries(120)),
                120,
            ),
            (
                "a bad key",
                format!(r#"{{{}, "seven": {}}}"#, entries(50), "{}"),
                50,
            ),
            ("cut short", format!("{{{}, ", entries(70)), 70),
            (
                "a missing value",
                format!(r#"{{{}, "9": }}"#, entries(30)),
                30,
            ),
        ];
        for (what, json, good) in cases {
            fails_like_serde::<BTreeMap<u32, Box<Item>>>(helper!(btree_map_box), what, &json, good);
            fails_like_serde::<HashMap<u32, Box<Item>>>(helper!(hash_map_box), what, &json, good);
        }
    });
}

/// Panics in `Deserialize` after `after` values.
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
fn a_panic_halfway_leaks_nothing() {
    serially(|| {
        let before = stats();
        let json = serde_json::to_string(&(0..200).collect::<Vec<u64>>()).unwrap();
        let (result, batched) = counting(|| {
            catch_unwind(AssertUnwindSafe(|| {
                through(helper!(vec_box::<_, Fuse>), &json)
            }))
        });
        assert!(result.is_err(), "the 100th element panics");
        assert!(batched > 0);
        assert_slots_back_at(&before, &stats());
    });
}

#[test]
fn boxes_outlive_their_container_and_cross_threads() {
    serially(|| {
        let before = stats();
        let json = serde_json::to_string(&(0..500).map(item).collect::<Vec<_>>()).unwrap();
        let (mut list, batched) = counting(|| through(helper!(vec_box::<_, Item>), &json).unwrap());
        assert!(batched > 0);
        assert!(list.iter().zip(0..).all(|(b, i)| **b == item(i)));
        assert_boxes_disjoint(&[&list]);
        let kept = list.swap_remove(250);
        let dropped_elsewhere = std::thread::spawn(move || {
            let sum: u64 = list.iter().map(|i| i.id as u64).sum();
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
