//! serde_json with serde derive: a generated JSON export of records
//! (strings, string lists, options, enums, nested structs, order lists,
//! float arrays from a few numbers to a few thousand, polygons of
//! coordinate pairs) into `#[derive(Deserialize)]` structs
//! (`serde_typed`) and into `serde_json::Value` (`serde_value`).

mod alloc;
mod common;

use common::{digest, measure, Measured, Rng, Workload};
use serde::Deserialize;

#[derive(Deserialize, Debug)]
#[allow(dead_code)]
struct Record {
    id: u64,
    name: String,
    email: String,
    active: bool,
    tags: Vec<String>,
    address: Option<Address>,
    kind: Kind,
    scores: Vec<f64>,
    polygon: Vec<[f64; 2]>,
    orders: Vec<Order>,
    note: Option<String>,
}

#[derive(Deserialize, Debug)]
#[allow(dead_code)]
struct Address {
    street: String,
    city: String,
    zip: String,
    country: Option<String>,
}

#[derive(Deserialize, Debug)]
#[allow(dead_code)]
enum Kind {
    Person,
    Company { vat: String, employees: u32 },
    Group(Vec<u64>),
}

#[derive(Deserialize, Debug)]
#[allow(dead_code)]
struct Order {
    sku: String,
    qty: u32,
    price: f64,
    status: Status,
}

#[derive(Deserialize, Debug)]
#[allow(dead_code)]
enum Status {
    Open,
    Shipped,
    Returned,
}

fn float(r: &mut Rng) -> String {
    format!("{}.{:06}", r.below(2000) as i64 - 1000, r.below(1_000_000))
}

fn strings(r: &mut Rng, n: usize) -> String {
    let v: Vec<String> = (0..n).map(|_| format!("\"{}\"", r.word(3, 12))).collect();
    v.join(",")
}

fn record(r: &mut Rng, id: usize) -> String {
    let address = if r.chance(80) {
        let country = if r.chance(50) {
            format!("\"{}\"", r.word(4, 10))
        } else {
            "null".into()
        };
        format!(
            "{{\"street\":\"{} {} {}\",\"city\":\"{}\",\"zip\":\"{:05}\",\"country\":{country}}}",
            r.below(999),
            r.word(4, 10),
            r.word(3, 6),
            r.word(4, 12),
            r.below(100_000)
        )
    } else {
        "null".into()
    };
    let kind = match r.below(3) {
        0 => "\"Person\"".to_string(),
        1 => format!(
            "{{\"Company\":{{\"vat\":\"{}{}\",\"employees\":{}}}}}",
            r.word(2, 2),
            r.below(1_000_000_000),
            r.below(5000)
        ),
        _ => {
            let ids: Vec<String> = (0..1 + r.below(20)).map(|_| r.below(1 << 40).to_string()).collect();
            format!("{{\"Group\":[{}]}}", ids.join(","))
        }
    };
    // Mostly short float arrays; one record in 16 carries a long one (up
    // to 3,000 numbers: its vector grows far past 4 KiB).
    let scores_len = if r.chance(6) { 500 + r.below(2500) } else { r.below(12) };
    let scores: Vec<String> = (0..scores_len).map(|_| float(r)).collect();
    let polygon_len = if r.chance(5) { 200 + r.below(1500) } else { r.below(8) };
    let polygon: Vec<String> = (0..polygon_len)
        .map(|_| format!("[{},{}]", float(r), float(r)))
        .collect();
    let orders: Vec<String> = (0..r.below(8))
        .map(|_| {
            format!(
                "{{\"sku\":\"{}-{}\",\"qty\":{},\"price\":{},\"status\":\"{}\"}}",
                r.word(3, 3).to_uppercase(),
                r.below(100_000),
                1 + r.below(20),
                float(r),
                ["Open", "Shipped", "Returned"][r.below(3)]
            )
        })
        .collect();
    let note = if r.chance(30) {
        format!("\"{}\"", (0..5 + r.below(30)).map(|_| r.word(1, 9)).collect::<Vec<_>>().join(" "))
    } else {
        "null".into()
    };
    let tags_len = r.below(6);
    format!(
        "{{\"id\":{id},\"name\":\"{} {}\",\"email\":\"{}@{}.com\",\"active\":{},\"tags\":[{}],\"address\":{address},\"kind\":{kind},\"scores\":[{}],\"polygon\":[{}],\"orders\":[{}],\"note\":{note}}}",
        r.word(3, 10),
        r.word(3, 12),
        r.word(3, 10),
        r.word(3, 8),
        r.chance(50),
        strings(r, tags_len),
        scores.join(","),
        polygon.join(","),
        orders.join(",")
    )
}

fn generate(records: usize) -> String {
    let mut r = Rng::new(17);
    let mut out = String::from("[\n");
    for i in 0..records {
        if i > 0 {
            out.push_str(",\n");
        }
        out.push_str(&record(&mut r, i));
    }
    out.push_str("\n]\n");
    out
}

fn parse_typed(src: &str) -> Vec<Record> {
    serde_json::from_str(src).expect("generated JSON deserializes")
}

fn parse_value(src: &str) -> serde_json::Value {
    serde_json::from_str(src).expect("generated JSON parses")
}

fn run_typed(input: &str, parses: usize) -> Measured {
    measure(input, parses, parse_typed, |v| v.len() as u64)
}

fn run_value(input: &str, parses: usize) -> Measured {
    measure(input, parses, parse_value, |v| {
        v.as_array().map_or(0, |a| a.len() as u64)
    })
}

fn check_typed(input: &str) -> u64 {
    digest(format!("{:?}", parse_typed(input)).as_bytes())
}

fn check_value(input: &str) -> u64 {
    digest(parse_value(input).to_string().as_bytes())
}

fn main() {
    common::main(&[
        Workload {
            name: "serde_typed",
            size: 4_000,
            about: "records of a generated JSON export, into derived structs",
            generate,
            run: run_typed,
            check: check_typed,
            threads: |input, n, parses, other| common::threads(input, n, parses, other, parse_typed),
        },
        Workload {
            name: "serde_value",
            size: 4_000,
            about: "records of a generated JSON export, into serde_json::Value",
            generate,
            run: run_value,
            check: check_value,
            threads: |input, n, parses, other| common::threads(input, n, parses, other, parse_value),
        },
    ]);
}
