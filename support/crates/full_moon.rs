//! full_moon (a Lua parser: tokenizer then recursive descent into a
//! lossless tree that keeps every token, comment and whitespace): a
//! generated Lua module of functions, tables, control flow and calls,
//! parsed into an `Ast`.

mod alloc;
mod common;

use common::{digest, measure, Measured, Rng, Workload};

const OPS: &[&str] = &["+", "-", "*", "/", "..", "==", "~=", "<", ">=", "and", "or"];

/// A word and a digit: never a Lua keyword.
fn name(r: &mut Rng) -> String {
    format!("{}{}", r.word(2, 8), r.below(10))
}

fn expr(r: &mut Rng, depth: usize) -> String {
    if depth == 0 {
        return match r.below(6) {
            0 => format!("\"{} {}\"", r.word(2, 8), r.word(1, 6)),
            1 => format!("{}.{}", r.below(1000), r.below(100)),
            2 => name(r),
            3 => format!("{}.{}", name(r), name(r)),
            4 => ["true", "false", "nil"][r.below(3)].to_string(),
            _ => r.below(100_000).to_string(),
        };
    }
    match r.below(9) {
        0 => format!("{}({}, {})", name(r), expr(r, depth - 1), expr(r, depth - 1)),
        1 => format!("{}:{}({})", name(r), name(r), expr(r, depth - 1)),
        2 => {
            let fields: Vec<String> = (0..1 + r.below(5))
                .map(|i| match i % 3 {
                    0 => format!("{} = {}", name(r), expr(r, depth - 1)),
                    1 => format!("[{}] = {}", r.below(100), expr(r, 0)),
                    _ => expr(r, depth - 1),
                })
                .collect();
            format!("{{ {} }}", fields.join(", "))
        }
        3 => format!(
            "function({}, {}) return {} end",
            name(r),
            name(r),
            expr(r, depth - 1)
        ),
        4 => format!("not {}", expr(r, depth - 1)),
        5 => format!("#{}", name(r)),
        _ => format!(
            "({} {} {})",
            expr(r, depth - 1),
            r.pick(OPS),
            expr(r, depth - 1)
        ),
    }
}

/// `min` to `min + spread - 1` statements.
fn block(r: &mut Rng, out: &mut String, indent: usize, depth: usize, min: usize, spread: usize) {
    let pad = "    ".repeat(indent);
    let stmts = min + r.below(spread);
    for _ in 0..stmts {
        match r.below(if depth == 0 { 4 } else { 10 }) {
            0 => out.push_str(&format!("{pad}local {} = {}\n", name(r), expr(r, 3))),
            1 => out.push_str(&format!("{pad}{}.{} = {}\n", name(r), name(r), expr(r, 2))),
            2 => out.push_str(&format!("{pad}{}({}, {})\n", name(r), expr(r, 2), expr(r, 1))),
            3 => out.push_str(&format!("{pad}-- {} {} {}\n", r.word(2, 8), r.word(2, 8), r.word(2, 8))),
            4 => {
                out.push_str(&format!("{pad}if {} then\n", expr(r, 2)));
                block(r, out, indent + 1, depth - 1, 1, 3);
                out.push_str(&format!("{pad}elseif {} then\n", expr(r, 1)));
                block(r, out, indent + 1, depth - 1, 1, 2);
                out.push_str(&format!("{pad}else\n"));
                block(r, out, indent + 1, depth - 1, 1, 2);
                out.push_str(&format!("{pad}end\n"));
            }
            5 => {
                out.push_str(&format!("{pad}for {} = 1, {} do\n", name(r), r.below(100)));
                block(r, out, indent + 1, depth - 1, 1, 4);
                out.push_str(&format!("{pad}end\n"));
            }
            6 => {
                out.push_str(&format!("{pad}for k, v in pairs({}) do\n", name(r)));
                block(r, out, indent + 1, depth - 1, 1, 4);
                out.push_str(&format!("{pad}end\n"));
            }
            7 => {
                out.push_str(&format!("{pad}while {} do\n", expr(r, 1)));
                block(r, out, indent + 1, depth - 1, 1, 3);
                out.push_str(&format!("{pad}end\n"));
            }
            8 => {
                out.push_str(&format!("{pad}local function {}({}, {})\n", name(r), name(r), name(r)));
                block(r, out, indent + 1, depth - 1, 1, 4);
                out.push_str(&format!("{pad}    return {}\n{pad}end\n", expr(r, 2)));
            }
            _ => {
                out.push_str(&format!("{pad}repeat\n"));
                block(r, out, indent + 1, depth - 1, 1, 3);
                out.push_str(&format!("{pad}until {}\n", expr(r, 1)));
            }
        }
    }
}

fn generate(functions: usize) -> String {
    let mut r = Rng::new(11);
    let mut out = String::from("local M = {}\n\n");
    for _ in 0..functions {
        out.push_str(&format!("--[[ {} ]]\n", r.word(4, 20)));
        out.push_str(&format!("function M.{}({}, {}, ...)\n", name(&mut r), name(&mut r), name(&mut r)));
        block(&mut r, &mut out, 1, 3, 3, 6);
        out.push_str(&format!("    return {}\nend\n\n", expr(&mut r, 2)));
    }
    out.push_str("return M\n");
    out
}

fn parse(src: &str) -> full_moon::ast::Ast {
    full_moon::parse(src).expect("generated Lua parses")
}

fn run(input: &str, parses: usize) -> Measured {
    measure(input, parses, parse, |ast| ast.nodes().stmts().count() as u64)
}

fn check(input: &str) -> u64 {
    let ast = parse(input);
    let printed = ast.to_string();
    assert_eq!(printed, input, "full_moon round-trips its input");
    digest(format!("{:?}", ast.nodes()).as_bytes())
}

fn main() {
    common::main(&[Workload {
        name: "full_moon",
        size: 220,
        about: "functions of a generated Lua module",
        generate,
        run,
        check,
        threads: |input, n, parses, other| common::threads(input, n, parses, other, parse),
    }]);
}
