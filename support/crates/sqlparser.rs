//! sqlparser (recursive descent): a generated SQL script of DDL, inserts
//! with long VALUES lists, queries with joins, CTEs, subqueries, CASE and
//! function calls, updates and deletes, parsed with the generic dialect
//! into `Vec<Statement>`.

mod alloc;
mod common;

use common::{digest, measure, Measured, Rng, Workload};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

const TYPES: &[&str] = &[
    "INT",
    "BIGINT",
    "VARCHAR(255)",
    "TEXT",
    "DECIMAL(12, 2)",
    "BOOLEAN",
    "TIMESTAMP",
    "DATE",
    "DOUBLE",
];
const FUNCS: &[&str] = &["COALESCE", "UPPER", "LOWER", "ABS", "ROUND", "LENGTH", "TRIM"];
const AGGS: &[&str] = &["SUM", "COUNT", "MAX", "MIN", "AVG"];
const CMP: &[&str] = &["=", "<>", "<", ">", "<=", ">="];

fn ident(r: &mut Rng) -> String {
    format!("{}_{}", r.word(3, 8), r.below(100))
}

fn literal(r: &mut Rng) -> String {
    match r.below(5) {
        0 => format!("'{} {}'", r.word(3, 10), r.word(2, 9)),
        1 => format!("{}.{:02}", r.below(100_000), r.below(100)),
        2 => "NULL".into(),
        3 => format!("DATE '20{:02}-{:02}-{:02}'", r.below(30), 1 + r.below(12), 1 + r.below(28)),
        _ => r.below(1_000_000).to_string(),
    }
}

fn expr(r: &mut Rng, depth: usize) -> String {
    if depth == 0 {
        return match r.below(3) {
            0 => literal(r),
            1 => format!("tb_{}.{}", r.word(1, 2), ident(r)),
            _ => ident(r),
        };
    }
    match r.below(8) {
        0 => format!(
            "{}({}, {})",
            r.pick(FUNCS),
            expr(r, depth - 1),
            expr(r, depth - 1)
        ),
        1 => format!(
            "CASE WHEN {} {} {} THEN {} WHEN {} IS NULL THEN {} ELSE {} END",
            expr(r, depth - 1),
            r.pick(CMP),
            expr(r, depth - 1),
            expr(r, depth - 1),
            ident(r),
            literal(r),
            expr(r, depth - 1)
        ),
        2 => format!("({} + {}) * {}", expr(r, depth - 1), expr(r, depth - 1), expr(r, 0)),
        3 => format!("CAST({} AS {})", expr(r, depth - 1), r.pick(TYPES)),
        4 => format!("{} || '{}'", expr(r, depth - 1), r.word(2, 6)),
        _ => expr(r, depth - 1),
    }
}

fn condition(r: &mut Rng, depth: usize) -> String {
    if depth == 0 {
        return match r.below(4) {
            0 => format!("{} IN ({}, {}, {})", ident(r), literal(r), literal(r), literal(r)),
            1 => format!("{} BETWEEN {} AND {}", ident(r), r.below(100), 100 + r.below(1000)),
            2 => format!("{} LIKE '%{}%'", ident(r), r.word(2, 5)),
            _ => format!("{} {} {}", expr(r, 1), r.pick(CMP), expr(r, 1)),
        };
    }
    match r.below(3) {
        0 => format!("({} AND {})", condition(r, depth - 1), condition(r, depth - 1)),
        1 => format!("({} OR NOT {})", condition(r, depth - 1), condition(r, depth - 1)),
        _ => condition(r, depth - 1),
    }
}

fn select(r: &mut Rng, depth: usize) -> String {
    let mut s = String::from("SELECT ");
    let cols = 2 + r.below(6);
    for c in 0..cols {
        if c > 0 {
            s.push_str(", ");
        }
        if r.chance(20) {
            s.push_str(&format!("{}({}) AS {}", r.pick(AGGS), ident(r), ident(r)));
        } else {
            s.push_str(&format!("{} AS {}", expr(r, 2), ident(r)));
        }
    }
    s.push_str(&format!(" FROM {} AS a", ident(r)));
    for j in 0..r.below(3) {
        s.push_str(&format!(
            " LEFT JOIN {} AS j{j} ON a.{} = j{j}.{}",
            ident(r),
            ident(r),
            ident(r)
        ));
    }
    if depth > 0 && r.chance(40) {
        s.push_str(&format!(
            " WHERE {} AND {} IN ({})",
            condition(r, 2),
            ident(r),
            select(r, depth - 1)
        ));
    } else {
        s.push_str(&format!(" WHERE {}", condition(r, 2)));
    }
    if r.chance(40) {
        s.push_str(&format!(" GROUP BY {}, {} HAVING COUNT(*) > {}", ident(r), ident(r), r.below(10)));
    }
    if r.chance(50) {
        s.push_str(&format!(" ORDER BY {} DESC, {} LIMIT {}", ident(r), ident(r), 1 + r.below(500)));
    }
    s
}

fn statement(r: &mut Rng) -> String {
    match r.below(10) {
        0 => {
            let cols: Vec<String> = (0..3 + r.below(10))
                .map(|i| {
                    let extra = match r.below(4) {
                        0 => " NOT NULL",
                        1 => " DEFAULT 0",
                        _ => "",
                    };
                    format!("c{i}_{} {}{}", r.word(3, 8), r.pick(TYPES), extra)
                })
                .collect();
            format!("CREATE TABLE IF NOT EXISTS {} (id BIGINT PRIMARY KEY, {})", ident(r), cols.join(", "))
        }
        1..=3 => {
            let width = 3 + r.below(6);
            let rows: Vec<String> = (0..5 + r.below(30))
                .map(|_| {
                    let vals: Vec<String> = (0..width).map(|_| literal(r)).collect();
                    format!("({})", vals.join(", "))
                })
                .collect();
            let cols: Vec<String> = (0..width).map(|_| ident(r)).collect();
            format!("INSERT INTO {} ({}) VALUES {}", ident(r), cols.join(", "), rows.join(", "))
        }
        4 => format!(
            "WITH {} AS ({}), {} AS ({}) SELECT * FROM {} JOIN {} USING ({})",
            "cte_a",
            select(r, 1),
            "cte_b",
            select(r, 1),
            "cte_a",
            "cte_b",
            ident(r)
        ),
        5 => format!(
            "UPDATE {} SET {} = {}, {} = {} WHERE {}",
            ident(r),
            ident(r),
            expr(r, 2),
            ident(r),
            literal(r),
            condition(r, 2)
        ),
        6 => format!("DELETE FROM {} WHERE {}", ident(r), condition(r, 3)),
        _ => select(r, 2),
    }
}

fn generate(statements: usize) -> String {
    let mut r = Rng::new(7);
    let mut out = String::new();
    for _ in 0..statements {
        out.push_str(&statement(&mut r));
        out.push_str(";\n");
    }
    out
}

fn parse(sql: &str) -> Vec<sqlparser::ast::Statement> {
    Parser::parse_sql(&GenericDialect {}, sql).expect("generated SQL parses")
}

fn run(input: &str, parses: usize) -> Measured {
    measure(input, parses, parse, |v| v.len() as u64)
}

fn check(input: &str) -> u64 {
    let mut text = String::new();
    for s in parse(input) {
        text.push_str(&s.to_string());
        text.push('\n');
    }
    digest(text.as_bytes())
}

fn main() {
    common::main(&[Workload {
        name: "sqlparser",
        size: 800,
        about: "statements of a generated SQL script",
        generate,
        run,
        check,
        threads: |input, n, parses, other| common::threads(input, n, parses, other, parse),
    }]);
}
