//! Derived `Deserialize`, nothing hand-written: the deserialize
//! demonstration's generated customer export into types that only derive
//! (`derive`), and the same documents parsed in parallel by `rayon`, one
//! scope per task (`par_derive_1t`, `par_derive_2t`).
//!
//! The twins are how a user would write it: as written, one
//! `serde_json::from_str`; annotated, the same call inside
//! `batch_alloc::scope(|| ..)`, since the loops are serde's.

use std::sync::OnceLock;

use rayon::prelude::*;

use super::{fnv, Outcome, Program, Variant};
use workloads::deserialize::generate;

/// The export's types, derived.
pub mod derived {
    use serde::Deserialize;

    pub use workloads::deserialize::model::{Address, Order};

    #[derive(Deserialize, Debug, PartialEq)]
    pub struct Dataset {
        pub source: String,
        pub exported_at: String,
        pub records: Vec<Box<Record>>,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    pub struct Record {
        pub id: u64,
        pub name: String,
        #[serde(default)]
        pub email: Option<String>,
        pub active: bool,
        pub score: f64,
        pub tags: Vec<String>,
        pub address: Box<Address>,
        pub orders: Vec<Box<Order>>,
        #[serde(default)]
        pub note: Option<String>,
    }

    impl Dataset {
        pub fn boxes(&self) -> u64 {
            self.records.iter().map(|r| 2 + r.orders.len() as u64).sum()
        }

        pub fn digest(&self) -> u64 {
            super::fnv(self.records.iter().flat_map(|r| {
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
    }
}

/// One document, parsed by the twin `variant`: its box count and digest.
fn parse(variant: Variant, input: &str) -> Outcome {
    let (boxes, check) = match variant {
        Variant::Plain => {
            let d: derived::Dataset = serde_json::from_str(input).expect("the export parses");
            (d.boxes(), d.digest())
        }
        Variant::Attr => {
            let d: derived::Dataset =
                batch_alloc::scope(|| serde_json::from_str(input)).expect("the export parses");
            (d.boxes(), d.digest())
        }
    };
    Outcome { boxes, check }
}

pub struct Derive;

impl Program for Derive {
    const NAME: &'static str = "derive";
    const UNIT: &'static str = "records";
    const SIZE: u64 = 30_000;
    const ABOUT: &'static str = "the deserialize demonstration's export into types that only \
        derive Deserialize (no hand-written visitor), one serde_json::from_str; annotated: the \
        call inside batch_alloc::scope";

    type Input = String;

    fn input(size: u64) -> String {
        generate::json(size, |_| {})
    }

    fn run(variant: Variant, input: &String) -> Outcome {
        parse(variant, input)
    }
}

/// Documents for the parallel parse: the export cut into this many
/// documents of equal size.
const DOCUMENTS: u64 = 64;

/// The export of `size` records as [`DOCUMENTS`] documents.
pub struct Documents(Vec<String>);

impl super::Text for Documents {
    fn bytes(&self) -> usize {
        self.0.iter().map(String::len).sum()
    }
}

fn documents(size: u64) -> Documents {
    Documents(
        (0..DOCUMENTS)
            .map(|_| generate::json(size / DOCUMENTS, |_| {}))
            .collect(),
    )
}

/// Each document parsed on a pool of `threads` threads, made once per
/// process; as written, or each task in a scope of its own thread.
fn parse_all(threads: usize, variant: Variant, docs: &Documents) -> Outcome {
    static POOLS: [OnceLock<rayon::ThreadPool>; 2] = [OnceLock::new(), OnceLock::new()];
    let pool = POOLS[threads - 1].get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool")
    });
    let outcomes: Vec<Outcome> =
        pool.install(|| docs.0.par_iter().map(|doc| parse(variant, doc)).collect());
    Outcome {
        boxes: outcomes.iter().map(|o| o.boxes).sum(),
        check: fnv(outcomes.iter().map(|o| o.check)),
    }
}

macro_rules! parallel {
    ($name:ident, $label:literal, $threads:literal) => {
        pub struct $name;

        impl Program for $name {
            const NAME: &'static str = $label;
            const UNIT: &'static str = "records";
            const SIZE: u64 = 30_000;
            const ABOUT: &'static str = concat!(
                "the derive program's export as 64 documents parsed by rayon on ",
                $threads,
                " thread(s); annotated: each task's parse inside batch_alloc::scope"
            );

            type Input = Documents;

            fn input(size: u64) -> Documents {
                documents(size)
            }

            fn run(variant: Variant, docs: &Documents) -> Outcome {
                parse_all($threads, variant, docs)
            }
        }
    };
}

parallel!(ParDerive1, "par_derive_1t", 1);
parallel!(ParDerive2, "par_derive_2t", 2);
