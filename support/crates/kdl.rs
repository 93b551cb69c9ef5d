//! kdl (a parser built from winnow's combinators, with error recovery,
//! keeping each entry's formatting and span): a generated KDL v2 document
//! of nested nodes with arguments, properties, type annotations, strings,
//! numbers and comments, parsed into a `KdlDocument`.

mod alloc;
mod common;

use common::{digest, measure, Measured, Rng, Workload};
use kdl::KdlDocument;

fn name(r: &mut Rng) -> String {
    format!("{}-{}", r.word(2, 8), r.below(10))
}

fn value(r: &mut Rng) -> String {
    match r.below(8) {
        0 => format!("\"{} {}\"", r.word(1, 10), r.word(1, 10)),
        1 => format!("{}.{}", r.below(100_000), r.below(1000)),
        2 => ["#true", "#false", "#null"][r.below(3)].to_string(),
        3 => format!("(u8){}", r.below(256)),
        4 => format!("0x{:x}", r.next() >> 40),
        5 => format!("{}e{}", r.below(100), r.below(10)),
        6 => name(r),
        _ => (r.below(10_000_000) as i64 - 5_000_000).to_string(),
    }
}

fn node(r: &mut Rng, out: &mut String, indent: usize, depth: usize) {
    let pad = "    ".repeat(indent);
    if r.chance(10) {
        out.push_str(&format!("{pad}// {} {}\n", r.word(2, 9), r.word(2, 9)));
    }
    out.push_str(&pad);
    if r.chance(10) {
        out.push_str(&format!("({})", r.word(2, 6)));
    }
    out.push_str(&name(r));
    for _ in 0..r.below(4) {
        out.push(' ');
        out.push_str(&value(r));
    }
    for _ in 0..r.below(4) {
        out.push_str(&format!(" {}={}", name(r), value(r)));
    }
    if r.chance(5) {
        out.push_str(" /-");
        out.push_str(&value(r));
    }
    if depth > 0 && r.chance(45) {
        out.push_str(" {\n");
        for _ in 0..1 + r.below(5) {
            node(r, out, indent + 1, depth - 1);
        }
        out.push_str(&pad);
        out.push_str("}\n");
    } else {
        out.push('\n');
    }
}

fn generate(nodes: usize) -> String {
    let mut r = Rng::new(13);
    let mut out = String::new();
    for _ in 0..nodes {
        node(&mut r, &mut out, 0, 3);
    }
    out
}

fn parse(src: &str) -> KdlDocument {
    src.parse().expect("generated KDL parses")
}

fn count(doc: &KdlDocument) -> u64 {
    doc.nodes()
        .iter()
        .map(|n| 1 + n.children().map_or(0, count))
        .sum()
}

fn run(input: &str, parses: usize) -> Measured {
    measure(input, parses, parse, count)
}

fn check(input: &str) -> u64 {
    let doc = parse(input);
    assert_eq!(doc.to_string(), input, "kdl round-trips its input");
    digest(format!("{doc:?}").as_bytes())
}

fn main() {
    common::main(&[Workload {
        name: "kdl",
        size: 600,
        about: "top-level nodes of a generated KDL document",
        generate,
        run,
        check,
        threads: |input, n, parses, other| common::threads(input, n, parses, other, parse),
    }]);
}
