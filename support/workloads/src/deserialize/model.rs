//! What the demonstration deserializes into: typed records that hold
//! `Vec<Box<Record>>` and boxed children, and, for any JSON at all, a
//! document tree whose arrays and objects hold boxed values.
//!
//! Both derive `Serialize` (the generator writes the input with it) and
//! `PartialEq` (the two ways of deserializing must agree); their
//! `Deserialize` side is hand-written, twice, in `visitors.rs`.

use serde::Serialize;

/// A customer export: where it came from, and one record per customer.
#[derive(Serialize, Debug, PartialEq)]
pub struct Dataset {
    pub source: String,
    pub exported_at: String,
    pub records: Vec<Box<Record>>,
}

#[derive(Serialize, Debug, PartialEq)]
pub struct Record {
    pub id: u64,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    pub active: bool,
    pub score: f64,
    pub tags: Vec<String>,
    pub address: Box<Address>,
    pub orders: Vec<Box<Order>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Serialize, serde::Deserialize, Debug, PartialEq)]
pub struct Address {
    pub street: String,
    pub city: String,
    pub postcode: String,
    pub country: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geo: Option<Geo>,
}

#[derive(Serialize, serde::Deserialize, Debug, PartialEq)]
pub struct Geo {
    pub lat: f64,
    pub lon: f64,
}

#[derive(Serialize, serde::Deserialize, Debug, PartialEq)]
pub struct Order {
    pub id: u64,
    pub placed_at: String,
    pub status: Status,
    pub total_cents: u64,
    pub lines: Vec<Line>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coupon: Option<String>,
}

#[derive(Serialize, serde::Deserialize, Debug, PartialEq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    Paid,
    Shipped,
    Delivered,
    Returned,
}

#[derive(Serialize, serde::Deserialize, Debug, PartialEq)]
pub struct Line {
    pub sku: String,
    pub qty: u32,
    pub unit_cents: u32,
}

impl Dataset {
    /// Boxes the dataset holds: one per record, its address and each of
    /// its orders.
    pub fn boxes(&self) -> u64 {
        let children: usize = self.records.iter().map(|r| 1 + r.orders.len()).sum();
        (self.records.len() + children) as u64
    }
}

/// Any JSON document, with every array element and object member boxed.
#[derive(Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    String(String),
    Array(Vec<Box<Json>>),
    /// Members in the order written, repeats kept.
    Object(Vec<(String, Box<Json>)>),
}

impl Json {
    /// Boxes the tree holds.
    pub fn boxes(&self) -> u64 {
        let mut boxes = 0;
        let mut todo = vec![self];
        while let Some(node) = todo.pop() {
            match node {
                Json::Array(items) => {
                    boxes += items.len() as u64;
                    todo.extend(items.iter().map(|b| &**b));
                }
                Json::Object(members) => {
                    boxes += members.len() as u64;
                    todo.extend(members.iter().map(|(_, b)| &**b));
                }
                _ => {}
            }
        }
        boxes
    }
}
