//! `examples/expr_parser.rs`: the parser parses what it says (precedence,
//! associativity, errors with positions), both versions agree, the
//! annotated one takes its boxes from batch-alloc, and a small run goes
//! through.
//!
//! The allocator's counters are process-wide, so every test that parses
//! runs [`serially`].

use batch_alloc::stats;
use workloads::expr_parser;
use workloads::expr_parser::{
    batched, compare, generate, parse, parse_args, plain, Expr, Op, Options, ParseError, Program,
    Variant,
};
use workloads::testing::{assert_disjoint, assert_slots_back_at, box_range, serially, served};
use workloads::timing::Clock;

/// The values of a program's lines, through both parsers (which must
/// agree).
fn values(source: &str) -> Vec<i64> {
    let program = plain::parse(source).unwrap();
    assert_eq!(batched::parse(source).unwrap(), program);
    program.eval()
}

fn value(expr: &str) -> i64 {
    values(&format!("let x0 = {expr};"))[0]
}

/// The address ranges of every box of `program`'s trees.
fn box_ranges(program: &Program, out: &mut Vec<(usize, usize)>) {
    fn walk(e: &Expr, out: &mut Vec<(usize, usize)>) {
        match e {
            Expr::Num(_) | Expr::Var(_) => {}
            Expr::Neg(a) => {
                out.push(box_range(a));
                walk(a, out);
            }
            Expr::Bin(_, a, b) => {
                out.extend([box_range(a), box_range(b)]);
                walk(a, out);
                walk(b, out);
            }
        }
    }
    for line in &program.lines {
        out.push(box_range(line));
        walk(line, out);
    }
}

fn num(n: i64) -> Box<Expr> {
    Box::new(Expr::Num(n))
}

#[test]
fn precedence_and_associativity() {
    serially(|| {
        assert_eq!(value("1 + 2 * 3"), 7);
        assert_eq!(value("(1 + 2) * 3"), 9);
        assert_eq!(value("10 - 4 - 3"), 3, "`-` folds to the left");
        assert_eq!(value("100 / 10 / 5"), 2, "`/` folds to the left");
        assert_eq!(value("2 ^ 3 ^ 2"), 512, "`^` folds to the right");
        assert_eq!(value("2 * 3 ^ 2"), 18, "`^` binds tighter than `*`");
        assert_eq!(value("-2 ^ 2"), 4, "unary `-` binds tightest");
        assert_eq!(value("--3"), 3);
        assert_eq!(value("7 % 4 * 2"), 6);
        assert_eq!(
            plain::parse("let x0 = 1 - 2 - 3;").unwrap().lines[0],
            Box::new(Expr::Bin(
                Op::Sub,
                Box::new(Expr::Bin(Op::Sub, num(1), num(2))),
                num(3)
            ))
        );
    });
}

#[test]
fn every_program_has_a_value() {
    serially(|| {
        assert_eq!(value("7 / 0"), 0);
        assert_eq!(value("7 % 0"), 0);
        assert_eq!(value("2 ^ (0 - 1)"), 0);
        assert_eq!(value("9223372036854775807 + 1"), i64::MIN);
        assert_eq!(value("(0 - 9223372036854775807 - 1) / -1"), i64::MIN);
        assert_eq!(value("3 ^ 99"), 3i64.wrapping_pow(99));
        assert_eq!(
            values("let x0 = 6;\nlet x1 = x0 * 7;\n  let x2 = x1 - x0;\n"),
            [6, 42, 36]
        );
    });
}

#[test]
fn errors_name_the_line_and_column() {
    serially(|| {
        let cases = [
            (
                "let x0 = 1 +;",
                1,
                13,
                "expected a number, a variable or `(`",
            ),
            (
                "let x0 = 1;\nlet x1 = (2 * 3;",
                2,
                16,
                "expected an operator or `)`",
            ),
            ("let x0 = 1;\nlet x2 = 1;", 2, 5, "expected `x1`"),
            ("let x0 = x0;", 1, 10, "`x0` is not defined yet"),
            ("let x0 = 1 2;", 1, 12, "expected an operator or `;`"),
            ("x0 = 1;", 1, 1, "expected `let`"),
            ("letx0 = 1;", 1, 4, "expected a space after `let`"),
            ("let x0 = 99999999999999999999;", 1, 10, "number too large"),
            ("let x0 = x;", 1, 11, "expected a line number after `x`"),
            ("let x0 = 1", 1, 11, "expected an operator or `;`"),
        ];
        for (source, line, column, message) in cases {
            let expected = ParseError {
                line,
                column,
                message: message.to_string(),
            };
            assert_eq!(plain::parse(source).unwrap_err(), expected, "{source}");
            assert_eq!(batched::parse(source).unwrap_err(), expected, "{source}");
        }
        let deep = format!(
            "let x0 = {}1{};",
            "(".repeat(expr_parser::MAX_NESTING + 1),
            ")".repeat(expr_parser::MAX_NESTING + 1)
        );
        let error = plain::parse(&deep).unwrap_err();
        assert_eq!(error.message, "parentheses nested too deeply");
        let fine = deep.replacen('(', "", 1).replacen(')', "", 1);
        assert_eq!(values(&fine), [1]);
    });
}

#[test]
fn printing_and_parsing_again_gives_the_same_trees() {
    serially(|| {
        let source = generate::program(300);
        let program = plain::parse(&source).unwrap();
        let printed: String = program
            .lines
            .iter()
            .enumerate()
            .map(|(n, e)| format!("let x{n} = {e};\n"))
            .collect();
        assert_eq!(batched::parse(&printed).unwrap(), program);
    });
}

#[test]
fn the_annotated_parser_takes_its_boxes_from_batch_alloc() {
    // Every box, each made inside an annotated function, and more (the
    // vectors and strings the parser allocates).
    serially(|| {
        let source = generate::program(500);
        let baseline = stats();
        let (plain_program, plain_count) = served(|| parse(Variant::Plain, &source).unwrap());
        let (batched_program, batched_count) = served(|| parse(Variant::Batched, &source).unwrap());
        assert_eq!(plain_program, batched_program);
        assert_eq!(plain_count, 0);
        assert!(batched_count >= batched_program.boxes(), "{batched_count}");
        // Both trees live, equal (so every box holds what it should) and no
        // two of their boxes overlap.
        let mut ranges = Vec::new();
        box_ranges(&plain_program, &mut ranges);
        box_ranges(&batched_program, &mut ranges);
        assert_eq!(ranges.len() as u64, 2 * batched_program.boxes());
        assert_disjoint(&mut ranges);
        let (live, boxes) = (stats().live_slots, batched_program.boxes());
        drop(batched_program);
        assert!(live - stats().live_slots >= boxes, "the boxes were slots");
        drop(plain_program);
        assert_slots_back_at(&baseline, &stats());
    });
}

#[test]
fn the_generated_program_has_the_promised_shape() {
    serially(|| {
        let source = generate::program(2000);
        let program = plain::parse(&source).unwrap();
        assert_eq!(program.lines.len(), 2000);
        let per_line = source.len() as f64 / 2000.0;
        assert!(
            (400.0..550.0).contains(&per_line),
            "{per_line} bytes a line"
        );
        let boxes = program.boxes() as f64 / 2000.0;
        assert!((110.0..170.0).contains(&boxes), "{boxes} boxes a line");
        for needle in [" ^ ", "(", "-x", " % ", " / ", "x1999"] {
            assert!(source.contains(needle), "{needle}");
        }
        assert_eq!(generate::program(2000), source, "the same every time");
    });
}

#[test]
fn the_comparison_and_a_small_run() {
    serially(|| {
        let source = generate::program(200);
        let mut lines = Vec::new();
        let c = compare(&source, 2, &Clock::start(), |l| lines.push(l.to_string())).unwrap();
        assert_eq!(lines.len(), 3);
        assert_eq!(c.plain.times.runs.len(), 2);
        assert_eq!(c.plain.boxes, c.batched.boxes);
        assert_eq!(c.plain.from_batches, 0);
        assert!(c.batched.from_batches > c.batched.boxes);
        let expected: i64 = values(&source).iter().fold(0, |a, v| a.wrapping_add(*v));
        assert_eq!(c.checksum, expected);
        let table = expr_parser::table(&c);
        assert!(table.contains("#[batch_alloc]") && table.contains("speedup"));

        expr_parser::run(&Options {
            lines: 100,
            reps: 1,
        })
        .unwrap();
        assert!(compare("let x0 = 1 +;", 1, &Clock::start(), |_| {}).is_err());
    });
}

#[test]
fn the_command_line() {
    assert_eq!(
        parse_args(Vec::<&str>::new()).unwrap(),
        Some(Options {
            lines: expr_parser::DEFAULT_LINES,
            reps: expr_parser::DEFAULT_REPS
        })
    );
    assert_eq!(
        parse_args(["--lines", "5_000", "--reps=2"]).unwrap(),
        Some(Options {
            lines: 5000,
            reps: 2
        })
    );
    assert_eq!(parse_args(["--help"]).unwrap(), None);
    assert!(parse_args(["--lines", "0"]).is_err());
    assert!(parse_args(["--lines"]).is_err());
    assert!(parse_args(["--records", "5"]).is_err());
}
