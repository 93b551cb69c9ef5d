//! The deserialize demonstration (`examples/deserialize.rs`): its generated
//! customer export through its hand-written serde visitors, into typed
//! records (`records`) and, as its `--input` mode reads any file, into a
//! document tree that boxes every value (`tree`).

use workloads::deserialize::generate;
use workloads::deserialize::model::{Dataset, Json};
use workloads::deserialize::visitors::{batched, plain};

use super::{fnv, Outcome, Program, Variant};

pub struct Records;

impl Program for Records {
    const NAME: &'static str = "records";
    const UNIT: &'static str = "records";
    const SIZE: u64 = 30_000;
    const ABOUT: &'static str = "the deserialize demonstration: generated customer records (JSON) \
        through its serde visitors into `Vec<Box<Record>>` with boxed addresses and orders";

    type Input = String;

    /// The export of `size` generated records, as the demonstration
    /// makes it (and writes it with `--save`).
    fn input(size: u64) -> String {
        generate::json(size, |_| {})
    }

    fn run(variant: Variant, input: &String) -> Outcome {
        let dataset = match variant {
            Variant::Plain => plain::dataset(input),
            Variant::Attr => batched::dataset(input),
        }
        .expect("the generated export parses");
        Outcome {
            boxes: dataset.boxes(),
            check: digest(&dataset),
        }
    }
}

/// What a consumer of the export reads: every record's id, name, tags,
/// address and orders.
fn digest(dataset: &Dataset) -> u64 {
    fnv(dataset.records.iter().flat_map(|r| {
        let orders = r
            .orders
            .iter()
            .map(|o| o.total_cents ^ o.lines.len() as u64);
        [r.id, r.name.len() as u64, r.tags.len() as u64]
            .into_iter()
            .chain([r.address.city.len() as u64])
            .chain(orders)
    }))
}

pub struct Tree;

impl Program for Tree {
    const NAME: &'static str = "tree";
    const UNIT: &'static str = "records";
    const SIZE: u64 = 10_000;
    const ABOUT: &'static str = "the deserialize demonstration's `--input` mode: the same \
        generated JSON into a document tree that boxes every array element and object member";

    type Input = String;

    fn input(size: u64) -> String {
        Records::input(size)
    }

    fn run(variant: Variant, input: &String) -> Outcome {
        let tree = match variant {
            Variant::Plain => plain::tree(input),
            Variant::Attr => batched::tree(input),
        }
        .expect("the generated export parses");
        Outcome {
            boxes: tree.boxes(),
            check: shape(&tree),
        }
    }
}

/// A walk of the whole tree: the kind of every node and the length of
/// every string and key.
fn shape(tree: &Json) -> u64 {
    let mut words = Vec::new();
    let mut todo = vec![tree];
    while let Some(node) = todo.pop() {
        words.push(match node {
            Json::Null => 0,
            Json::Bool(b) => 1 + *b as u64,
            Json::Int(i) => *i as u64,
            Json::Uint(u) => *u,
            Json::Float(f) => f.to_bits(),
            Json::String(s) => s.len() as u64,
            Json::Array(items) => {
                todo.extend(items.iter().map(|b| &**b));
                items.len() as u64
            }
            Json::Object(members) => {
                todo.extend(members.iter().map(|(_, b)| &**b));
                members.iter().map(|(k, _)| k.len() as u64).sum()
            }
        });
    }
    fnv(words)
}
