//! The deserializers: hand-written serde visitors, the kind a parser
//! author writes, whose loops box what they read.
//!
//! `deserializers!` holds the code once; it is written out twice, into
//! `plain` as it stands and into `batched` with `#[batch_alloc]` on each
//! `visit_seq` and `visit_map` method that boxes what it reads. That
//! attribute is the only difference between the two: in your own code you
//! would write the visitors once, with the attribute, and no macro.
//!
//! What serves what. Under `#[batch_alloc]`, the records list's loop is
//! the outermost annotated loop: it opens the thread's batch scope, the
//! loops of the record and order visitors join it, and until the list
//! ends every box and every other small allocation (names, tags, order
//! lines, serde's own) comes from the scope's runs.

macro_rules! deserializers {
    ($(#[$batch:meta])*) => {
        use std::fmt;
        use std::marker::PhantomData;

        use serde::de::{
            self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
        };
        use serde::Deserialize;

        use crate::deserialize::model::{Address, Dataset, Json, Order, Record};

        /// Reads a [`Dataset`] from JSON text.
        pub fn dataset(json: &str) -> serde_json::Result<Dataset> {
            let mut de = serde_json::Deserializer::from_str(json);
            let dataset = de.deserialize_struct("Dataset", DATASET_FIELDS, DatasetVisitor)?;
            de.end()?;
            Ok(dataset)
        }

        /// Reads any JSON text into a [`Json`] tree.
        pub fn tree(json: &str) -> serde_json::Result<Json> {
            let mut de = serde_json::Deserializer::from_str(json);
            let tree = TreeSeed.deserialize(&mut de)?;
            de.end()?;
            Ok(tree)
        }

        /// Reads a field's value into its slot, refusing a second one as
        /// serde's derive does. (`PhantomData::<T>` is the seed of a
        /// plain `T: Deserialize`.)
        fn put<'de, A, S>(
            map: &mut A,
            slot: &mut Option<S::Value>,
            name: &'static str,
            seed: S,
        ) -> Result<(), A::Error>
        where
            A: MapAccess<'de>,
            S: DeserializeSeed<'de>,
        {
            if slot.is_some() {
                return Err(de::Error::duplicate_field(name));
            }
            *slot = Some(map.next_value_seed(seed)?);
            Ok(())
        }

        const DATASET_FIELDS: &[&str] = &["source", "exported_at", "records"];

        #[derive(Deserialize)]
        #[serde(field_identifier, rename_all = "snake_case")]
        enum DatasetField {
            Source,
            ExportedAt,
            Records,
            #[serde(other)]
            Unknown,
        }

        struct DatasetVisitor;

        impl<'de> Visitor<'de> for DatasetVisitor {
            type Value = Dataset;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a dataset")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Dataset, A::Error> {
                let (mut source, mut exported_at, mut records) = (None, None, None);
                while let Some(field) = map.next_key()? {
                    match field {
                        DatasetField::Source => put(&mut map, &mut source, "source", PhantomData)?,
                        DatasetField::ExportedAt => {
                            put(&mut map, &mut exported_at, "exported_at", PhantomData)?
                        }
                        DatasetField::Records => {
                            put(&mut map, &mut records, "records", RecordsSeed)?
                        }
                        DatasetField::Unknown => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let missing = |name| -> A::Error { de::Error::missing_field(name) };
                Ok(Dataset {
                    source: source.ok_or_else(|| missing("source"))?,
                    exported_at: exported_at.ok_or_else(|| missing("exported_at"))?,
                    records: records.ok_or_else(|| missing("records"))?,
                })
            }
        }

        struct RecordsSeed;

        impl<'de> DeserializeSeed<'de> for RecordsSeed {
            type Value = Vec<Box<Record>>;

            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_seq(self)
            }
        }

        impl<'de> Visitor<'de> for RecordsSeed {
            type Value = Vec<Box<Record>>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of records")
            }

            $(#[$batch])*
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut records = Vec::new();
                while let Some(record) = seq.next_element_seed(RecordSeed)? {
                    records.push(Box::new(record));
                }
                Ok(records)
            }
        }

        const RECORD_FIELDS: &[&str] = &[
            "id", "name", "email", "active", "score", "tags", "address", "orders", "note",
        ];

        #[derive(Deserialize)]
        #[serde(field_identifier, rename_all = "snake_case")]
        enum RecordField {
            Id,
            Name,
            Email,
            Active,
            Score,
            Tags,
            Address,
            Orders,
            Note,
            #[serde(other)]
            Unknown,
        }

        struct RecordSeed;

        impl<'de> DeserializeSeed<'de> for RecordSeed {
            type Value = Record;

            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Record, D::Error> {
                d.deserialize_struct("Record", RECORD_FIELDS, self)
            }
        }

        impl<'de> Visitor<'de> for RecordSeed {
            type Value = Record;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a record")
            }

            $(#[$batch])*
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Record, A::Error> {
                let (mut id, mut name, mut email, mut active, mut score) =
                    (None, None, None, None, None);
                let (mut tags, mut address, mut orders, mut note) = (None, None, None, None);
                while let Some(field) = map.next_key()? {
                    match field {
                        RecordField::Id => put(&mut map, &mut id, "id", PhantomData)?,
                        RecordField::Name => put(&mut map, &mut name, "name", PhantomData)?,
                        RecordField::Email => put(&mut map, &mut email, "email", PhantomData)?,
                        RecordField::Active => put(&mut map, &mut active, "active", PhantomData)?,
                        RecordField::Score => put(&mut map, &mut score, "score", PhantomData)?,
                        RecordField::Tags => put(&mut map, &mut tags, "tags", PhantomData)?,
                        RecordField::Address => {
                            if address.is_some() {
                                return Err(de::Error::duplicate_field("address"));
                            }
                            let value: Address = map.next_value()?;
                            address = Some(Box::new(value));
                        }
                        RecordField::Orders => put(&mut map, &mut orders, "orders", OrdersSeed)?,
                        RecordField::Note => put(&mut map, &mut note, "note", PhantomData)?,
                        RecordField::Unknown => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let missing = |name| -> A::Error { de::Error::missing_field(name) };
                Ok(Record {
                    id: id.ok_or_else(|| missing("id"))?,
                    name: name.ok_or_else(|| missing("name"))?,
                    email: email.flatten(),
                    active: active.ok_or_else(|| missing("active"))?,
                    score: score.ok_or_else(|| missing("score"))?,
                    tags: tags.ok_or_else(|| missing("tags"))?,
                    address: address.ok_or_else(|| missing("address"))?,
                    orders: orders.ok_or_else(|| missing("orders"))?,
                    note: note.flatten(),
                })
            }
        }

        struct OrdersSeed;

        impl<'de> DeserializeSeed<'de> for OrdersSeed {
            type Value = Vec<Box<Order>>;

            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_seq(self)
            }
        }

        impl<'de> Visitor<'de> for OrdersSeed {
            type Value = Vec<Box<Order>>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of orders")
            }

            $(#[$batch])*
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut orders = Vec::new();
                while let Some(order) = seq.next_element::<Order>()? {
                    orders.push(Box::new(order));
                }
                Ok(orders)
            }
        }

        struct TreeSeed;

        impl<'de> DeserializeSeed<'de> for TreeSeed {
            type Value = Json;

            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
                d.deserialize_any(self)
            }
        }

        impl<'de> Visitor<'de> for TreeSeed {
            type Value = Json;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }

            fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
                Ok(Json::Bool(v))
            }

            fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Int(v))
            }

            fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
                Ok(Json::Uint(v))
            }

            fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
                Ok(Json::Float(v))
            }

            fn visit_str<E>(self, v: &str) -> Result<Json, E> {
                Ok(Json::String(v.to_string()))
            }

            fn visit_string<E>(self, v: String) -> Result<Json, E> {
                Ok(Json::String(v))
            }

            $(#[$batch])*
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element_seed(TreeSeed)? {
                    items.push(Box::new(item));
                }
                Ok(Json::Array(items))
            }

            $(#[$batch])*
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value = map.next_value_seed(TreeSeed)?;
                    members.push((key, Box::new(value)));
                }
                Ok(Json::Object(members))
            }
        }
    };
}

/// The deserializers as written.
pub mod plain {
    deserializers!();
}

/// The same deserializers under `#[batch_alloc]`.
pub mod batched {
    use batch_alloc::batch_alloc;

    deserializers!(#[batch_alloc]);
}
