//! Real programs, each built from one source by [`twins!`]: as written
//! (`plain`) and under `#[batch_alloc]` (`attr`), so that the two differ by
//! the attribute alone. Every binary runs both, so each program has a figure
//! for each allocator with and without the attribute (without `BatchAlloc`
//! installed, the attribute's boxes are plain boxes).
//!
//! Bench ids are `programs/PROGRAM/ALLOCATOR/VARIANT`, throughput in boxes
//! made per run, so criterion's time per element is the run's time divided
//! by its boxes.
//!
//! - `binary_trees`: the benchmarks game's binary-trees at depth 14, with
//!   each tree built bottom-up by loops (a level of leaves, then each level
//!   of parents from pairs of children) rather than by recursion, which the
//!   attribute would not see. 16-byte nodes.
//! - `json`: serde_json reads an array of 20,000 objects into
//!   `Vec<Box<Record>>` (48-byte records) through a hand-written visitor
//!   whose `visit_seq` boxes each element in a `while let` loop.
//! - `expr`: a precedence-climbing parser builds `Box<Expr>` trees for 1,000
//!   generated arithmetic statements, evaluates them and drops them. The
//!   loops of the binary-operator levels box both operands of each operator;
//!   most of them run a few times per call.

// The programs box the way the code the attribute is for does.
#![allow(clippy::vec_box)]

use std::cell::OnceCell;
use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use serde::Deserialize;

use super::Binary;

/// Emits the items twice: in `plain` as written, in `attr` under
/// `#[batch_alloc]`. Types (which the attribute does not take) go in a
/// leading `types { .. }` and are emitted in both, unannotated.
macro_rules! twins {
    (types { $($ty:item)* } $($item:item)*) => {
        pub mod plain {
            #[allow(unused_imports)]
            use super::*;
            $($ty)*
            $($item)*
        }
        pub mod attr {
            #[allow(unused_imports)]
            use super::*;
            $($ty)*
            $(#[batch_alloc::batch_alloc] $item)*
        }
    };
    ($($item:item)*) => {
        twins! { types {} $($item)* }
    };
}

pub fn register<B: Binary>(c: &mut Criterion) {
    let label = B::ALLOCATOR.label();
    let mut group = c.benchmark_group("programs/binary_trees");
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(trees::boxes(TREE_DEPTH)));
    group.bench_function(BenchmarkId::new(label, "plain"), |b| {
        b.iter(|| trees::plain::run(TREE_DEPTH))
    });
    group.bench_function(BenchmarkId::new(label, "attr"), |b| {
        b.iter(|| trees::attr::run(TREE_DEPTH))
    });
    group.finish();

    // Inputs are made at the first run of a bench that needs them, not
    // when a filter leaves the program out.
    let input = OnceCell::new();
    let json_input = || input.get_or_init(|| json::input(JSON_RECORDS)).as_str();
    let mut group = c.benchmark_group("programs/json");
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(JSON_RECORDS as u64));
    group.bench_function(BenchmarkId::new(label, "plain"), |b| {
        let input = json_input();
        b.iter(|| json::check(json::plain::parse(black_box(input)), JSON_RECORDS))
    });
    group.bench_function(BenchmarkId::new(label, "attr"), |b| {
        let input = json_input();
        b.iter(|| json::check(json::attr::parse(black_box(input)), JSON_RECORDS))
    });
    group.finish();

    let (input, boxes) = expr::input(EXPR_STATEMENTS);
    let checked = std::sync::Once::new();
    let mut group = c.benchmark_group("programs/expr");
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(boxes));
    group.bench_function(BenchmarkId::new(label, "plain"), |b| {
        checked.call_once(|| assert_eq!(expr::boxes(&input), boxes, "the count is off"));
        b.iter(|| expr::run(black_box(&input), |s| expr::plain::Parser::program(s)))
    });
    group.bench_function(BenchmarkId::new(label, "attr"), |b| {
        b.iter(|| expr::run(black_box(&input), |s| expr::attr::Parser::program(s)))
    });
    group.finish();
}

/// `instructions program:NAME:VARIANT SIZE REPS`: runs one program `reps`
/// times at `size` (tree depth, records, statements) and returns the boxes
/// one run makes. Inputs are made before the first run.
pub fn instructions(program: &str, size: usize, reps: usize) -> u64 {
    let (name, variant) = program
        .split_once(':')
        .expect("program:NAME:VARIANT, VARIANT plain or attr");
    let attr = match variant {
        "plain" => false,
        "attr" => true,
        other => panic!("variant {other}: plain or attr"),
    };
    match name {
        "binary_trees" => {
            let depth = size as u32;
            for _ in 0..reps {
                black_box(if attr {
                    trees::attr::run(depth)
                } else {
                    trees::plain::run(depth)
                });
            }
            trees::boxes(depth)
        }
        "json" => {
            let input = json::input(size);
            for _ in 0..reps {
                let parsed = if attr {
                    json::attr::parse(black_box(&input))
                } else {
                    json::plain::parse(black_box(&input))
                };
                black_box(json::check(parsed, size));
            }
            size as u64
        }
        "expr" => {
            let (input, boxes) = expr::input(size);
            for _ in 0..reps {
                black_box(if attr {
                    expr::run(black_box(&input), |s| expr::attr::Parser::program(s))
                } else {
                    expr::run(black_box(&input), |s| expr::plain::Parser::program(s))
                });
            }
            boxes
        }
        other => panic!("no program {other}"),
    }
}

const TREE_DEPTH: u32 = 14;
const JSON_RECORDS: usize = 20_000;
const EXPR_STATEMENTS: usize = 1_000;

/// binary-trees, with loops.
pub mod trees {
    pub struct Node {
        pub left: Option<Box<Node>>,
        pub right: Option<Box<Node>>,
    }

    impl Node {
        pub fn check(&self) -> u64 {
            let below = match (&self.left, &self.right) {
                (Some(l), Some(r)) => l.check() + r.check(),
                _ => 0,
            };
            1 + below
        }
    }

    const MIN_DEPTH: u32 = 4;

    /// Boxes made by one run at `max_depth`: the stretch tree, the
    /// long-lived tree and the trees of every iteration.
    pub fn boxes(max_depth: u32) -> u64 {
        let nodes = |depth: u32| (1u64 << (depth + 1)) - 1;
        let mut total = nodes(max_depth + 1) + nodes(max_depth);
        let mut depth = MIN_DEPTH;
        while depth <= max_depth {
            total += (1u64 << (max_depth - depth + MIN_DEPTH)) * nodes(depth);
            depth += 2;
        }
        total
    }

    twins! {
        /// A complete tree of `depth` levels below the root, built a level
        /// at a time from the leaves up.
        pub fn make(depth: u32) -> Box<Node> {
            let mut level: Vec<Box<Node>> = Vec::with_capacity(1 << depth);
            let mut parents: Vec<Box<Node>> = Vec::with_capacity(1 << depth.saturating_sub(1));
            for _ in 0..1usize << depth {
                level.push(Box::new(Node { left: None, right: None }));
            }
            while level.len() > 1 {
                let mut children = level.drain(..);
                for _ in 0..children.len() / 2 {
                    let left = children.next();
                    let right = children.next();
                    parents.push(Box::new(Node { left, right }));
                }
                drop(children);
                std::mem::swap(&mut level, &mut parents);
            }
            level.pop().expect("a tree has a root")
        }

        /// The benchmarks game's program, returning its checksums.
        pub fn run(max_depth: u32) -> u64 {
            let mut sum = make(max_depth + 1).check();
            let long_lived = make(max_depth);
            let mut depth = MIN_DEPTH;
            while depth <= max_depth {
                let iterations = 1u32 << (max_depth - depth + MIN_DEPTH);
                for _ in 0..iterations {
                    sum += make(depth).check();
                }
                depth += 2;
            }
            sum + long_lived.check()
        }
    }
}

/// serde_json into `Vec<Box<Record>>`.
pub mod json {
    use super::*;
    use serde::de::{Deserializer, SeqAccess, Visitor};
    use std::fmt;

    #[derive(Deserialize)]
    pub struct Record {
        pub id: u64,
        pub user: u64,
        pub score: f64,
        pub lat: f64,
        pub lon: f64,
        pub flags: u32,
        pub kind: u16,
        pub active: bool,
    }

    const _: () = assert!(std::mem::size_of::<Record>() == 48);

    /// `n` records as a JSON array, from a fixed seed.
    pub fn input(n: usize) -> String {
        let mut rng = super::expr::Rng(0x5eed_0001);
        let mut out = String::from("[");
        for i in 0..n {
            if i > 0 {
                out.push(',');
            }
            let r = rng.next();
            out.push_str(&format!(
                "{{\"id\":{i},\"user\":{},\"score\":{:.3},\"lat\":{:.6},\"lon\":{:.6},\"flags\":{},\"kind\":{},\"active\":{}}}",
                r % 100_000,
                (r >> 20) as f64 % 1000.0 / 7.0,
                ((r >> 8) % 180_000_000) as f64 / 1e6 - 90.0,
                ((r >> 16) % 360_000_000) as f64 / 1e6 - 180.0,
                (r >> 40) % 256,
                (r >> 50) % 12,
                r % 3 == 0
            ));
        }
        out.push(']');
        out
    }

    pub fn check(records: Vec<Box<Record>>, n: usize) -> u64 {
        assert_eq!(records.len(), n);
        records
            .iter()
            .map(|r| {
                let position = (r.score + r.lat + r.lon).to_bits();
                r.id ^ r.user ^ position ^ r.flags as u64 ^ r.kind as u64 ^ r.active as u64
            })
            .fold(0, |a, b| a.wrapping_add(b))
    }

    twins! {
        types {
            pub struct Records;
        }

        impl<'de> Visitor<'de> for Records {
            type Value = Vec<Box<Record>>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of records")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(record) = seq.next_element::<Record>()? {
                    out.push(Box::new(record));
                }
                Ok(out)
            }
        }

        pub fn parse(input: &str) -> Vec<Box<Record>> {
            let mut de = serde_json::Deserializer::from_str(input);
            let records = de.deserialize_seq(Records).expect("valid input");
            de.end().expect("nothing after the array");
            records
        }
    }
}

/// A parser that builds `Box<Expr>` trees.
pub mod expr {
    /// A small fixed-seed generator (xorshift64*), so every run parses the
    /// same input.
    pub struct Rng(pub u64);

    impl Rng {
        pub fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0 = x;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    #[derive(Debug)]
    pub enum Expr {
        Num(f64),
        Var(u8),
        Neg(Box<Expr>),
        Bin(u8, Box<Expr>, Box<Expr>),
    }

    impl Expr {
        pub fn eval(&self, vars: &[f64; 26]) -> f64 {
            match self {
                Expr::Num(v) => *v,
                Expr::Var(i) => vars[*i as usize],
                Expr::Neg(e) => -e.eval(vars),
                Expr::Bin(op, l, r) => {
                    let (l, r) = (l.eval(vars), r.eval(vars));
                    match op {
                        b'+' => l + r,
                        b'-' => l - r,
                        b'*' => l * r,
                        _ => l / r,
                    }
                }
            }
        }

        fn boxes(&self) -> u64 {
            match self {
                Expr::Num(_) | Expr::Var(_) => 0,
                Expr::Neg(e) => 1 + e.boxes(),
                Expr::Bin(_, l, r) => 2 + l.boxes() + r.boxes(),
            }
        }
    }

    /// `statements` lines of arithmetic: sums of 1 to 16 terms, products of
    /// 1 to 4 factors, a factor a number, a variable, a negated variable,
    /// or (one time in twenty, at most three deep) a parenthesised sum. Also
    /// returns the boxes parsing it makes: two per operator, one per
    /// negation.
    pub fn input(statements: usize) -> (String, u64) {
        fn sum(rng: &mut Rng, depth: u32, out: &mut String) -> u64 {
            let mut boxes = 0;
            for t in 0..1 + rng.below(16) {
                if t > 0 {
                    out.push_str(if rng.below(2) == 0 { " + " } else { " - " });
                    boxes += 2;
                }
                for f in 0..1 + rng.below(4) {
                    if f > 0 {
                        out.push_str(if rng.below(3) == 0 { " / " } else { " * " });
                        boxes += 2;
                    }
                    match rng.below(20) {
                        0 if depth < 3 => {
                            out.push('(');
                            boxes += sum(rng, depth + 1, out);
                            out.push(')');
                        }
                        1 => {
                            out.push('-');
                            out.push((b'a' + rng.below(26) as u8) as char);
                            boxes += 1;
                        }
                        2..=8 => out.push((b'a' + rng.below(26) as u8) as char),
                        _ => out.push_str(&format!("{}.{}", rng.below(1000), rng.below(100))),
                    }
                }
            }
            boxes
        }
        let mut rng = Rng(0x5eed_0002);
        let mut out = String::new();
        let mut boxes = 0;
        for _ in 0..statements {
            boxes += sum(&mut rng, 0, &mut out);
            out.push_str(";\n");
        }
        (out, boxes)
    }

    /// Boxes made by parsing `input`.
    pub fn boxes(input: &str) -> u64 {
        plain::Parser::program(input)
            .iter()
            .map(|e| e.boxes())
            .sum()
    }

    /// Parses, evaluates and drops.
    pub fn run(input: &str, parse: fn(&str) -> Vec<Expr>) -> f64 {
        let vars: [f64; 26] = std::array::from_fn(|i| i as f64 + 0.5);
        let program = parse(input);
        program.iter().map(|e| e.eval(&vars)).sum()
    }

    twins! {
        types {
            pub struct Parser<'a> {
                bytes: &'a [u8],
                at: usize,
            }
        }

        impl<'a> Parser<'a> {
            pub fn program(input: &'a str) -> Vec<Expr> {
                let mut parser = Parser { bytes: input.as_bytes(), at: 0 };
                let mut out = Vec::new();
                while parser.peek().is_some() {
                    out.push(parser.sum());
                    parser.expect(b';');
                }
                out
            }

            fn sum(&mut self) -> Expr {
                let mut lhs = self.product();
                while let Some(op) = self.eat_op(b'+', b'-') {
                    let rhs = self.product();
                    lhs = Expr::Bin(op, Box::new(lhs), Box::new(rhs));
                }
                lhs
            }

            fn product(&mut self) -> Expr {
                let mut lhs = self.factor();
                while let Some(op) = self.eat_op(b'*', b'/') {
                    let rhs = self.factor();
                    lhs = Expr::Bin(op, Box::new(lhs), Box::new(rhs));
                }
                lhs
            }

            fn factor(&mut self) -> Expr {
                match self.peek() {
                    Some(b'(') => {
                        self.at += 1;
                        let inner = self.sum();
                        self.expect(b')');
                        inner
                    }
                    Some(b'-') => {
                        self.at += 1;
                        Expr::Neg(Box::new(self.factor()))
                    }
                    Some(c) if c.is_ascii_lowercase() => {
                        self.at += 1;
                        Expr::Var(c - b'a')
                    }
                    _ => {
                        let start = self.at;
                        while self.at < self.bytes.len()
                            && (self.bytes[self.at].is_ascii_digit() || self.bytes[self.at] == b'.')
                        {
                            self.at += 1;
                        }
                        let text = std::str::from_utf8(&self.bytes[start..self.at]).expect("ascii");
                        Expr::Num(text.parse().expect("a number"))
                    }
                }
            }

            fn peek(&mut self) -> Option<u8> {
                while self.at < self.bytes.len() && self.bytes[self.at].is_ascii_whitespace() {
                    self.at += 1;
                }
                self.bytes.get(self.at).copied()
            }

            fn eat_op(&mut self, a: u8, b: u8) -> Option<u8> {
                match self.peek() {
                    Some(c) if c == a || c == b => {
                        self.at += 1;
                        Some(c)
                    }
                    _ => None,
                }
            }

            fn expect(&mut self, c: u8) {
                assert_eq!(self.peek(), Some(c), "expected {:?} at {}", c as char, self.at);
                self.at += 1;
            }
        }
    }
}
