//! One field of a derived `Deserialize`, read inside a batch scope.
//!
//! Where you make the call that deserializes, wrap it:
//! `batch_alloc::scope(|| serde_json::from_str(json))` serves every box,
//! string and vector of the value from runs, and needs no feature. Where
//! the call is not yours (a web framework's extractor, a config loader),
//! name this module on the field whose value holds the many small
//! allocations, and that field is read inside [`scope`](crate::scope):
//!
//! ```
//! use batch_alloc::BatchAlloc;
//! use serde::{Deserialize, Serialize};
//!
//! #[global_allocator]
//! static GLOBAL: BatchAlloc = BatchAlloc::system();
//!
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! struct Point {
//!     x: i32,
//!     y: i32,
//! }
//!
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! struct Path {
//!     name: String,
//!     #[serde(with = "batch_alloc::serde_scope")]
//!     points: Vec<Box<Point>>,
//! }
//!
//! let json = r#"{"name": "fib", "points": [{"x": 0, "y": 0}, {"x": 1, "y": 2}, {"x": 3, "y": 5}]}"#;
//! let before = batch_alloc::stats().scoped_allocations;
//! let path: Path = serde_json::from_str(json)?;
//! assert_eq!(path.points[2].y, 5);
//! // Three boxes at least, from the scope's runs; `name` was read outside.
//! assert!(batch_alloc::stats().scoped_allocations - before >= 3);
//! // Serialization is the field's own: what is written reads back.
//! assert_eq!(serde_json::from_str::<Path>(&serde_json::to_string(&path)?)?, path);
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! `#[serde(deserialize_with = "batch_alloc::serde_scope::deserialize")]`
//! does the same for a field that only deserializes.
//!
//! The field's type can be anything that implements `Deserialize`: the
//! value is the one its own impl makes, with the same errors, and its
//! allocations are ordinary ones (move them, free them on any thread). A
//! scope opened inside another joins it, so a field nested in a field that
//! is already scoped costs a thread-local read and a test. When the input
//! is malformed halfway, what was made so far is dropped as serde drops it.
//!
//! A hand-written `Visitor` needs no feature: put
//! [`#[batch_alloc]`](macro@crate::batch_alloc) on its `visit_seq` or
//! `visit_map` (docs/serde.md has an example).
//!
//! The module is called `serde_scope`, not `serde`, so that a glob import
//! of the crate root (`use batch_alloc::*`) next to `use serde::Deserialize`
//! leaves the `serde` crate, and the derives' `#[serde(...)]` attributes,
//! as they were.

use ::serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Deserializes a `T` with its own `Deserialize` impl, inside a batch
/// scope: `scope(|| T::deserialize(deserializer))`. With the `report`
/// feature, the scope is reported at the field's `#[serde(with)]`
/// attribute, where serde's generated code calls this.
#[track_caller]
pub fn deserialize<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    crate::scope(|| T::deserialize(deserializer))
}

/// Serializes a `T` with its own `Serialize` impl, unchanged; here so that
/// `#[serde(with = "batch_alloc::serde_scope")]` names one module for both.
pub fn serialize<T, S>(value: &T, serializer: S) -> Result<S::Ok, S::Error>
where
    T: Serialize + ?Sized,
    S: Serializer,
{
    value.serialize(serializer)
}
