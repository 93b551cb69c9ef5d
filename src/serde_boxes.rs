//! serde's own impls box each element with `Box::new`, one call to the
//! allocator per element. These helpers deserialize the same input into the
//! same types, with the same errors, but take each container's boxes from
//! one [`Batch`](crate::Batch), so that a long sequence costs a few refills
//! instead of one allocation per element:
//!
//! ```
//! use batch_alloc::BatchAlloc;
//! use serde::Deserialize;
//!
//! #[global_allocator]
//! static GLOBAL: BatchAlloc = BatchAlloc::system();
//!
//! #[derive(Deserialize)]
//! struct Point {
//!     x: i32,
//!     y: i32,
//! }
//!
//! #[derive(Deserialize)]
//! struct Path {
//!     #[serde(deserialize_with = "batch_alloc::serde_boxes::vec_box")]
//!     points: Vec<Box<Point>>,
//! }
//!
//! let before = batch_alloc::stats().batched_boxes;
//! let path: Path = serde_json::from_str(
//!     r#"{"points": [{"x": 0, "y": 0}, {"x": 1, "y": 2}, {"x": 3, "y": 5}, {"x": 8, "y": 13}]}"#,
//! )?;
//! assert_eq!(path.points[3].y, 13);
//! // Every box from spans: a batch without a length takes the first two
//! // one slot at a time and reserves a run for the rest (see below).
//! assert_eq!(batch_alloc::stats().batched_boxes - before, 4);
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! | field type | helper |
//! |---|---|
//! | `Vec<Box<T>>` | [`vec_box`](crate::serde_boxes::vec_box) |
//! | `VecDeque<Box<T>>` | [`vec_deque_box`](crate::serde_boxes::vec_deque_box) |
//! | `Vec<Option<Box<T>>>` | [`vec_option_box`](crate::serde_boxes::vec_option_box) |
//! | `HashMap<K, Box<V>, S>` | [`hash_map_box`](crate::serde_boxes::hash_map_box) |
//! | `BTreeMap<K, Box<V>>` | [`btree_map_box`](crate::serde_boxes::btree_map_box) |
//!
//! Only `deserialize_with` is needed: serialization of these types is
//! serde's own, unchanged, so `#[derive(Serialize)]` on the same struct
//! writes what the helper reads back.
//!
//! The module is called `serde_boxes`, not `serde`, so that a glob import
//! of the crate root (`use batch_alloc::*`) next to `use serde::Deserialize`
//! leaves the `serde` crate, and the derives' `#[serde(...)]` attributes,
//! as they were.
//!
//! # What they promise
//!
//! - **Same result, same errors.** Each helper asks the deserializer for a
//!   sequence (`deserialize_seq`) or a map (`deserialize_map`) exactly as
//!   serde's impl for the container does, expects the same thing ("a
//!   sequence", "a map"), inserts in the same order (a repeated map key keeps
//!   the last value, as serde does), and passes every error through
//!   unchanged, position included.
//! - **Plain boxes out.** Every box is a real `Box<T>`: move it, drop it on
//!   any thread, take it out of the container. Without
//!   [`BatchAlloc`](crate::BatchAlloc) as the global allocator the helpers
//!   behave exactly like serde's impls.
//! - **Nothing kept on error.** When the input is malformed halfway, the
//!   boxes made so far are dropped and the batch gives its unused slots back
//!   before the error returns.
//!
//! # Size hints
//!
//! Binary formats that write a length first (bincode, postcard, MessagePack,
//! CBOR, and serde's own `value` deserializers) report it through
//! `size_hint()`, and the batch reserves for that many elements. Self-
//! describing text formats such as JSON do not know the length of an array
//! before its end: there the batch has no hint, takes its first two boxes
//! one slot at a time, and then reserves runs that grow geometrically
//! (see [`Batch::new`](crate::Batch::new)).
//!
//! A length read from the input is not trusted: like serde's own impls,
//! the helpers preallocate the container and size the batch for at most
//! 1 MiB of elements, however long the input claims to be, and grow from
//! there only as elements actually arrive.
//!
//! # One batch per container
//!
//! Each call of a helper makes its own batch. A helper on a field of a
//! struct that occurs once per record makes one batch per record: a list of
//! one or two elements takes a slot per box (no run, a little cheaper than
//! a system box), a longer one pays for one refill at least. The long
//! sequences, where the allocator's per-call cost adds up, are where the
//! helpers pay most.
//!
//! # Your own visitor: one attribute
//!
//! A hand-written [`Visitor`](::serde::de::Visitor) batches its boxes with
//! nothing changed but [`#[batch_alloc]`](macro@crate::batch_alloc) on the
//! method (or on the whole `impl` block): the attribute opens a batch scope
//! around each of the method's loops, and the boxes, strings and vectors
//! made while the loop runs, by the visitor or by the element's own
//! `Deserialize`, come from the thread's runs. This needs no feature of
//! this crate.
//!
//! ```
//! use std::fmt;
//!
//! use batch_alloc::{batch_alloc, BatchAlloc};
//! use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
//! use serde::Deserialize;
//!
//! #[global_allocator]
//! static GLOBAL: BatchAlloc = BatchAlloc::system();
//!
//! #[derive(Deserialize, Debug, PartialEq)]
//! struct Event {
//!     at: u64,
//!     kind: String,
//! }
//!
//! struct EventsVisitor;
//!
//! impl<'de> Visitor<'de> for EventsVisitor {
//!     type Value = Vec<Box<Event>>;
//!
//!     fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
//!         f.write_str("a list of events")
//!     }
//!
//!     #[batch_alloc]
//!     fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
//!         let mut events = Vec::new();
//!         while let Some(event) = seq.next_element()? {
//!             events.push(Box::new(event));
//!         }
//!         Ok(events)
//!     }
//! }
//!
//! struct NamedVisitor;
//!
//! impl<'de> Visitor<'de> for NamedVisitor {
//!     type Value = Vec<(String, Box<Event>)>;
//!
//!     fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
//!         f.write_str("events by name")
//!     }
//!
//!     #[batch_alloc]
//!     fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
//!         let mut named = Vec::new();
//!         while let Some((name, event)) = map.next_entry()? {
//!             named.push((name, Box::new(event)));
//!         }
//!         Ok(named)
//!     }
//! }
//!
//! let json = r#"[{"at": 1, "kind": "open"}, {"at": 2, "kind": "read"},
//!                {"at": 3, "kind": "read"}, {"at": 4, "kind": "close"}]"#;
//! let before = batch_alloc::stats().scoped_allocations;
//! let events = serde_json::Deserializer::from_str(json).deserialize_seq(EventsVisitor)?;
//! assert_eq!(events[3].kind, "close");
//! // Four boxes and four strings at least, all made inside the loop.
//! assert!(batch_alloc::stats().scoped_allocations - before >= 8);
//!
//! let json = r#"{"a": {"at": 1, "kind": "x"}, "b": {"at": 2, "kind": "y"},
//!                "c": {"at": 3, "kind": "z"}}"#;
//! let named = serde_json::Deserializer::from_str(json).deserialize_map(NamedVisitor)?;
//! assert_eq!(named[2].1.kind, "z");
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! Use the visitor from a `Deserialize` impl
//! (`deserializer.deserialize_seq(EventsVisitor)`) or through
//! `#[serde(deserialize_with = ...)]`, as usual. The scope is open while
//! the loop runs, so the visitor that loops over the long sequence is the
//! one to annotate; the nested `Deserialize` impls it calls need nothing.

use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;
use std::collections::{BTreeMap, HashMap, VecDeque};

use ::serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::Batch;

/// Deserializes a `Vec<Box<T>>`, every box from one batch.
///
/// ```
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Debug, PartialEq)]
/// struct Order {
///     id: u64,
///     #[serde(deserialize_with = "batch_alloc::serde_boxes::vec_box")]
///     lines: Vec<Box<Line>>,
/// }
///
/// #[derive(Serialize, Deserialize, Debug, PartialEq)]
/// struct Line {
///     sku: String,
///     qty: u32,
/// }
///
/// let json = r#"{"id": 7, "lines": [{"sku": "A-1", "qty": 2}, {"sku": "B-9", "qty": 1}]}"#;
/// let order: Order = serde_json::from_str(json)?;
/// assert_eq!(order.lines[1].sku, "B-9");
/// assert_eq!(serde_json::from_str::<Order>(&serde_json::to_string(&order)?)?, order);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn vec_box<'de, D, T>(deserializer: D) -> Result<Vec<Box<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    deserializer.deserialize_seq(SeqVisitor::<Vec<Box<T>>>(PhantomData))
}

/// Deserializes a `VecDeque<Box<T>>`, every box from one batch.
///
/// ```
/// use std::collections::VecDeque;
///
/// use serde::Deserialize;
///
/// #[derive(Deserialize)]
/// struct Queue {
///     #[serde(deserialize_with = "batch_alloc::serde_boxes::vec_deque_box")]
///     jobs: VecDeque<Box<String>>,
/// }
///
/// let mut queue: Queue = serde_json::from_str(r#"{"jobs": ["build", "test", "ship"]}"#)?;
/// assert_eq!(queue.jobs.pop_front().as_deref().map(String::as_str), Some("build"));
/// assert_eq!(queue.jobs.len(), 2);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn vec_deque_box<'de, D, T>(deserializer: D) -> Result<VecDeque<Box<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    deserializer.deserialize_seq(SeqVisitor::<VecDeque<Box<T>>>(PhantomData))
}

/// Deserializes a `Vec<Option<Box<T>>>` (a list with holes, `null` in
/// JSON), every box from one batch. A `None` takes no slot.
///
/// ```
/// use serde::Deserialize;
///
/// #[derive(Deserialize)]
/// struct Row {
///     #[serde(deserialize_with = "batch_alloc::serde_boxes::vec_option_box")]
///     cells: Vec<Option<Box<f64>>>,
/// }
///
/// let row: Row = serde_json::from_str(r#"{"cells": [1.5, null, 2.5]}"#)?;
/// assert_eq!(row.cells[0].as_deref(), Some(&1.5));
/// assert!(row.cells[1].is_none());
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn vec_option_box<'de, D, T>(deserializer: D) -> Result<Vec<Option<Box<T>>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    deserializer.deserialize_seq(SeqVisitor::<Vec<Option<Box<T>>>>(PhantomData))
}

/// Deserializes a `HashMap<K, Box<V>, S>` (any hasher with a `Default`),
/// every value's box from one batch. A repeated key keeps the last value,
/// as with serde's impl; the box of the value it replaces is freed.
///
/// ```
/// use std::collections::HashMap;
///
/// use serde::Deserialize;
///
/// #[derive(Deserialize)]
/// struct User {
///     name: String,
/// }
///
/// #[derive(Deserialize)]
/// struct Directory {
///     #[serde(deserialize_with = "batch_alloc::serde_boxes::hash_map_box")]
///     users: HashMap<u32, Box<User>>,
/// }
///
/// let dir: Directory = serde_json::from_str(
///     r#"{"users": {"17": {"name": "ada"}, "42": {"name": "grace"}}}"#,
/// )?;
/// assert_eq!(dir.users[&42].name, "grace");
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn hash_map_box<'de, D, K, V, S>(deserializer: D) -> Result<HashMap<K, Box<V>, S>, D::Error>
where
    D: Deserializer<'de>,
    K: Deserialize<'de> + Eq + Hash,
    V: Deserialize<'de>,
    S: BuildHasher + Default,
{
    deserializer.deserialize_map(MapVisitor::<HashMap<K, Box<V>, S>>(PhantomData))
}

/// Deserializes a `BTreeMap<K, Box<V>>`, every value's box from one batch.
/// A repeated key keeps the last value, as with serde's impl.
///
/// ```
/// use std::collections::BTreeMap;
///
/// use serde::Deserialize;
///
/// #[derive(Deserialize)]
/// struct Config {
///     #[serde(deserialize_with = "batch_alloc::serde_boxes::btree_map_box")]
///     sections: BTreeMap<String, Box<Vec<String>>>,
/// }
///
/// let config: Config = serde_json::from_str(
///     r#"{"sections": {"paths": ["/usr", "/opt"], "users": ["root"]}}"#,
/// )?;
/// assert_eq!(config.sections["paths"][1], "/opt");
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn btree_map_box<'de, D, K, V>(deserializer: D) -> Result<BTreeMap<K, Box<V>>, D::Error>
where
    D: Deserializer<'de>,
    K: Deserialize<'de> + Ord,
    V: Deserialize<'de>,
{
    deserializer.deserialize_map(MapVisitor::<BTreeMap<K, Box<V>>>(PhantomData))
}

/// How many `Element`s to make room for when the input claims `hint`: no
/// more than 1 MiB of them, however long the input says it is (serde's own
/// rule for its impls, which it does not export).
fn cautious<Element>(hint: Option<usize>) -> usize {
    const MAX_PREALLOC_BYTES: usize = 1024 * 1024;
    match size_of::<Element>() {
        0 => 0,
        size => hint.unwrap_or(0).min(MAX_PREALLOC_BYTES / size),
    }
}

/// A sequence container whose elements hold boxes of `Boxed`.
trait BoxSeq<'de>: Sized {
    /// What one element of the input deserializes to before it is boxed.
    type Element: Deserialize<'de>;
    /// The type inside the boxes.
    type Boxed;

    fn with_capacity(capacity: usize) -> Self;
    fn push(&mut self, element: Self::Element, batch: &mut Batch<Self::Boxed>);
}

impl<'de, T: Deserialize<'de>> BoxSeq<'de> for Vec<Box<T>> {
    type Element = T;
    type Boxed = T;

    fn with_capacity(capacity: usize) -> Self {
        Vec::with_capacity(capacity)
    }

    #[inline]
    fn push(&mut self, element: T, batch: &mut Batch<T>) {
        self.push(batch.alloc(element));
    }
}

impl<'de, T: Deserialize<'de>> BoxSeq<'de> for VecDeque<Box<T>> {
    type Element = T;
    type Boxed = T;

    fn with_capacity(capacity: usize) -> Self {
        VecDeque::with_capacity(capacity)
    }

    #[inline]
    fn push(&mut self, element: T, batch: &mut Batch<T>) {
        self.push_back(batch.alloc(element));
    }
}

impl<'de, T: Deserialize<'de>> BoxSeq<'de> for Vec<Option<Box<T>>> {
    type Element = Option<T>;
    type Boxed = T;

    fn with_capacity(capacity: usize) -> Self {
        Vec::with_capacity(capacity)
    }

    #[inline]
    fn push(&mut self, element: Option<T>, batch: &mut Batch<T>) {
        self.push(element.map(|value| batch.alloc(value)));
    }
}

struct SeqVisitor<C>(PhantomData<fn() -> C>);

impl<'de, C: BoxSeq<'de>> Visitor<'de> for SeqVisitor<C> {
    type Value = C;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<C, A::Error> {
        let hint = seq.size_hint();
        let mut batch = Batch::with_capacity(cautious::<C::Boxed>(hint));
        // The container holds one pointer per element (`Box` or
        // `Option<Box>`, the same size).
        let mut out = C::with_capacity(cautious::<Box<C::Boxed>>(hint));
        while let Some(element) = seq.next_element()? {
            out.push(element, &mut batch);
        }
        Ok(out)
    }
}

/// A map container whose values are boxes of `V`.
trait BoxMap<'de>: Sized {
    type Key: Deserialize<'de>;
    type Value: Deserialize<'de>;

    fn with_capacity(capacity: usize) -> Self;
    fn insert(&mut self, key: Self::Key, value: Box<Self::Value>);
}

impl<'de, K, V, S> BoxMap<'de> for HashMap<K, Box<V>, S>
where
    K: Deserialize<'de> + Eq + Hash,
    V: Deserialize<'de>,
    S: BuildHasher + Default,
{
    type Key = K;
    type Value = V;

    fn with_capacity(capacity: usize) -> Self {
        HashMap::with_capacity_and_hasher(capacity, S::default())
    }

    #[inline]
    fn insert(&mut self, key: K, value: Box<V>) {
        self.insert(key, value);
    }
}

impl<'de, K, V> BoxMap<'de> for BTreeMap<K, Box<V>>
where
    K: Deserialize<'de> + Ord,
    V: Deserialize<'de>,
{
    type Key = K;
    type Value = V;

    // A B-tree has nothing to preallocate.
    fn with_capacity(_: usize) -> Self {
        BTreeMap::new()
    }

    #[inline]
    fn insert(&mut self, key: K, value: Box<V>) {
        self.insert(key, value);
    }
}

struct MapVisitor<M>(PhantomData<fn() -> M>);

impl<'de, M: BoxMap<'de>> Visitor<'de> for MapVisitor<M> {
    type Value = M;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<M, A::Error> {
        let hint = map.size_hint();
        let mut batch = Batch::with_capacity(cautious::<M::Value>(hint));
        let mut out = M::with_capacity(cautious::<(M::Key, Box<M::Value>)>(hint));
        while let Some((key, value)) = map.next_entry()? {
            out.insert(key, batch.alloc(value));
        }
        Ok(out)
    }
}
