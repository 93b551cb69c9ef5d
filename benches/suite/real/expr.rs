//! The expression parser (`examples/expr_parser.rs`): generated `let`
//! lines parsed into `Box<Expr>` trees, evaluated, dropped.

use workloads::expr_parser::lang;

use super::{fnv, Outcome, Program, Variant};

pub struct Expr;

impl Program for Expr {
    const NAME: &'static str = "expr";
    const UNIT: &'static str = "lines";
    const SIZE: u64 = 12_000;
    const ABOUT: &'static str = "the expression parser example: precedence climbing into \
        `Box<Expr>` trees, every line evaluated";

    type Input = String;

    fn input(size: u64) -> String {
        lang::generate::program(size)
    }

    fn run(variant: Variant, input: &String) -> Outcome {
        let program = match variant {
            Variant::Plain => lang::plain::parse(input),
            Variant::Attr => lang::batched::parse(input),
        }
        .expect("the generated program parses");
        let values = program.eval();
        Outcome {
            boxes: program.boxes(),
            check: fnv(values.iter().map(|&v| v as u64)),
        }
    }
}
