//! `examples/stmt_parser.rs`: the front end lexes and parses what the
//! grammar says (precedence, associativity, every statement, escapes,
//! positions), its checker counts and resolves what is there, malformed
//! input and random bytes give errors and never a panic, both versions
//! agree, the annotated one takes its boxes from batch-alloc, and a small
//! run goes through.
//!
//! The allocator's counters are process-wide, and every box the annotated
//! front end makes counts, so every test that reads them or runs the front
//! end runs [`serially`].

use batch_alloc::stats;
use workloads::stmt_parser;
use workloads::stmt_parser::generate;
use workloads::stmt_parser::lang::{
    batched, plain, BinOp, Block, Expr, Field, Function, Kw, NumericFor, ParseError, Stmt, Summary,
    Sym, Tok, Token, UnOp, MAX_DEPTH,
};
use workloads::stmt_parser::{compare, parse_args, Options, Variant};
use workloads::testing::{
    assert_disjoint, assert_slots_back_at, box_range, seeded, serially, served, RngExt,
};
use workloads::timing::Clock;

/// Lexes and parses `source` with both versions, which must agree.
fn parse(source: &str) -> Result<Block, ParseError> {
    let result = plain::lex(source).and_then(|tokens| plain::parse(&tokens));
    let other = batched::lex(source).and_then(|tokens| batched::parse(&tokens));
    assert_eq!(result, other, "the versions disagree on {source:?}");
    result
}

fn chunk(source: &str) -> Block {
    parse(source).unwrap_or_else(|e| panic!("{source:?}: {e}"))
}

/// The address ranges of the boxes of trees, and of the strings of tokens.
#[derive(Default)]
struct Boxes(Vec<(usize, usize)>);

// The methods take the boxes themselves, to record where they point.
#[allow(clippy::borrowed_box)]
impl Boxes {
    fn tokens(&mut self, tokens: &[Token]) {
        for token in tokens {
            if let Tok::Name(s) | Tok::Str(s) = &token.kind {
                self.0.push(box_range(s));
            }
        }
    }

    fn block(&mut self, block: &Block) {
        for stmt in block {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Local { values: exprs, .. } | Stmt::Return(exprs) => self.exprs(exprs),
            Stmt::GenericFor { exprs, body, .. } => {
                self.exprs(exprs);
                self.block(body);
            }
            Stmt::Assign { targets, values } => {
                self.exprs(targets);
                self.exprs(values);
            }
            Stmt::Call(e) => self.expr(e),
            Stmt::LocalFunction { func, .. } | Stmt::Function { func, .. } => self.function(func),
            Stmt::If { arms, otherwise } => {
                for (cond, body) in arms {
                    self.expr(cond);
                    self.block(body);
                }
                otherwise.iter().for_each(|body| self.block(body));
            }
            Stmt::While { cond, body } => {
                self.boxed(cond);
                self.block(body);
            }
            Stmt::NumericFor(f) => {
                self.0.push(box_range(f));
                self.exprs([&f.start, &f.end].into_iter().chain(&f.step));
                self.block(&f.body);
            }
            Stmt::Do(body) => self.block(body),
            Stmt::Break => {}
        }
    }

    fn function(&mut self, f: &Box<Function>) {
        self.0.push(box_range(f));
        self.block(&f.body);
    }

    fn exprs<'a>(&mut self, exprs: impl IntoIterator<Item = &'a Expr>) {
        for e in exprs {
            self.expr(e);
        }
    }

    fn boxed(&mut self, e: &Box<Expr>) {
        self.0.push(box_range(e));
        self.expr(e);
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Nil
            | Expr::True
            | Expr::False
            | Expr::Int(_)
            | Expr::Float(_)
            | Expr::Str(_)
            | Expr::Name(_) => {}
            Expr::Function(f) => self.function(f),
            Expr::Table(fields) => {
                for field in fields {
                    match field {
                        Field::Pos(v) | Field::Named(_, v) => self.expr(v),
                        Field::Keyed(k, v) => {
                            self.boxed(k);
                            self.expr(v);
                        }
                    }
                }
            }
            Expr::Unary(_, a) | Expr::Field(a, _) => self.boxed(a),
            Expr::Binary(_, a, b) | Expr::Index(a, b) => {
                self.boxed(a);
                self.boxed(b);
            }
            Expr::Call(callee, args) | Expr::Method(callee, _, args) => {
                self.boxed(callee);
                args.iter().for_each(|a| self.boxed(a));
            }
        }
    }
}

/// The value of `x = <expr>`.
fn expr(text: &str) -> Expr {
    match chunk(&format!("x = {text}")).pop() {
        Some(Stmt::Assign { mut values, .. }) if values.len() == 1 => values.pop().unwrap(),
        other => panic!("{other:?}"),
    }
}

fn name(n: &str) -> Expr {
    Expr::Name(n.to_string())
}

fn int(n: i64) -> Expr {
    Expr::Int(n)
}

fn string(s: &str) -> Expr {
    Expr::Str(s.to_string())
}

fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::Binary(op, Box::new(a), Box::new(b))
}

fn call(callee: Expr, args: Vec<Expr>) -> Expr {
    Expr::Call(Box::new(callee), args.into_iter().map(Box::new).collect())
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn precedence_and_associativity() {
    serially(|| {
        use BinOp::*;
        let (a, b, c) = (|| name("a"), || name("b"), || name("c"));
        assert_eq!(
            expr("1 + 2 * 3"),
            bin(Add, int(1), bin(Mul, int(2), int(3)))
        );
        assert_eq!(
            expr("(1 + 2) * 3"),
            bin(Mul, bin(Add, int(1), int(2)), int(3))
        );
        assert_eq!(expr("a - b - c"), bin(Sub, bin(Sub, a(), b()), c()));
        assert_eq!(expr("a .. b .. c"), bin(Concat, a(), bin(Concat, b(), c())));
        assert_eq!(expr("a ^ b ^ c"), bin(Pow, a(), bin(Pow, b(), c())));
        assert_eq!(expr("a or b and c"), bin(Or, a(), bin(And, b(), c())));
        assert_eq!(expr("a < b == c"), bin(Eq, bin(Lt, a(), b()), c()));
        assert_eq!(expr("a + b .. c"), bin(Concat, bin(Add, a(), b()), c()));
        assert_eq!(expr("a // b % c"), bin(Mod, bin(IDiv, a(), b()), c()));
        assert_eq!(
            expr("not a == b"),
            bin(Eq, Expr::Unary(UnOp::Not, Box::new(a())), b()),
            "a unary operator binds tighter than `==`"
        );
        assert_eq!(
            expr("-a ^ 2"),
            Expr::Unary(UnOp::Neg, Box::new(bin(Pow, a(), int(2)))),
            "`^` binds tighter than a unary operator on its left"
        );
        assert_eq!(
            expr("2 ^ -a"),
            bin(Pow, int(2), Expr::Unary(UnOp::Neg, Box::new(a())))
        );
        assert_eq!(
            expr("#a.b + 1"),
            bin(
                Add,
                Expr::Unary(UnOp::Len, Box::new(Expr::Field(Box::new(a()), "b".into()))),
                int(1)
            )
        );
    });
}

#[test]
fn suffixes_tables_and_literals() {
    serially(|| {
        assert_eq!(
            expr("a.b[1](x, 2):m()"),
            Expr::Method(
                Box::new(call(
                    Expr::Index(
                        Box::new(Expr::Field(Box::new(name("a")), "b".into())),
                        Box::new(int(1))
                    ),
                    vec![name("x"), int(2)]
                )),
                "m".into(),
                Vec::new()
            )
        );
        assert_eq!(
            expr("{ 1, k = 'v'; [f()] = {}, }"),
            Expr::Table(vec![
                Field::Pos(int(1)),
                Field::Named("k".into(), string("v")),
                Field::Keyed(Box::new(call(name("f"), vec![])), Expr::Table(vec![])),
            ])
        );
        assert_eq!(
            expr("{ k == 1 }"),
            Expr::Table(vec![Field::Pos(bin(BinOp::Eq, name("k"), int(1)))])
        );
        assert_eq!(expr("0x1F"), int(31));
        assert_eq!(expr("2.5e1"), Expr::Float(25.0));
        assert_eq!(expr("1e-1"), Expr::Float(0.1));
        assert_eq!(expr("9223372036854775807"), int(i64::MAX));
        assert_eq!(expr("nil"), Expr::Nil);
        assert_eq!(expr("true"), Expr::True);
        assert_eq!(
            expr(r#""a\tb\65\x41\\\"\'\0 é""#),
            string("a\tbAA\\\"'\0 é")
        );
        assert_eq!(expr(r"'say \'hi\''"), string("say 'hi'"));
        assert_eq!(expr("\"line\\\nnext\""), string("line\nnext"));
        assert_eq!(
            expr("function(a, b) return a end"),
            Expr::Function(Box::new(Function {
                params: names(&["a", "b"]),
                body: vec![Stmt::Return(vec![name("a")])],
            }))
        );
    });
}

#[test]
fn every_statement() {
    serially(|| {
        let source = "\
    -- a comment
    local a, b = 1
    local c
    x, t.y, t[1] = a, b
    print('hi');
    local function f(p) return end
    function m.n.o:p() while true do break end end
    if a then x = 1 elseif b then x = 2 else x = 3 end
    if a then end
    for i = 1, 10, 2 do end
    for k, v in pairs(t), nil do end
    do end
    return a, b;
    ";
        let expected = vec![
            Stmt::Local {
                names: names(&["a", "b"]),
                values: vec![int(1)],
            },
            Stmt::Local {
                names: names(&["c"]),
                values: vec![],
            },
            Stmt::Assign {
                targets: vec![
                    name("x"),
                    Expr::Field(Box::new(name("t")), "y".into()),
                    Expr::Index(Box::new(name("t")), Box::new(int(1))),
                ],
                values: vec![name("a"), name("b")],
            },
            Stmt::Call(call(name("print"), vec![string("hi")])),
            Stmt::LocalFunction {
                name: "f".into(),
                func: Box::new(Function {
                    params: names(&["p"]),
                    body: vec![Stmt::Return(vec![])],
                }),
            },
            Stmt::Function {
                path: names(&["m", "n", "o"]),
                method: Some("p".into()),
                func: Box::new(Function {
                    params: vec![],
                    body: vec![Stmt::While {
                        cond: Box::new(Expr::True),
                        body: vec![Stmt::Break],
                    }],
                }),
            },
            Stmt::If {
                arms: vec![
                    (
                        name("a"),
                        vec![Stmt::Assign {
                            targets: vec![name("x")],
                            values: vec![int(1)],
                        }],
                    ),
                    (
                        name("b"),
                        vec![Stmt::Assign {
                            targets: vec![name("x")],
                            values: vec![int(2)],
                        }],
                    ),
                ],
                otherwise: Some(vec![Stmt::Assign {
                    targets: vec![name("x")],
                    values: vec![int(3)],
                }]),
            },
            Stmt::If {
                arms: vec![(name("a"), vec![])],
                otherwise: None,
            },
            Stmt::NumericFor(Box::new(NumericFor {
                var: "i".into(),
                start: int(1),
                end: int(10),
                step: Some(int(2)),
                body: vec![],
            })),
            Stmt::GenericFor {
                names: names(&["k", "v"]),
                exprs: vec![call(name("pairs"), vec![name("t")]), Expr::Nil],
                body: vec![],
            },
            Stmt::Do(vec![]),
            Stmt::Return(vec![name("a"), name("b")]),
        ];
        assert_eq!(chunk(source), expected);
        assert_eq!(chunk(""), vec![]);
        assert_eq!(chunk(";;\n"), vec![]);
    });
}

#[test]
fn tokens_and_their_positions() {
    serially(|| {
        let tokens = plain::lex("local s = 'x' -- note\n  s = s .. 1.5 ~= #t").unwrap();
        let at = |kind: Tok, line, column| Token { kind, line, column };
        assert_eq!(
            tokens,
            [
                at(Tok::Kw(Kw::Local), 1, 1),
                at(Tok::Name("s".into()), 1, 7),
                at(Tok::Sym(Sym::Assign), 1, 9),
                at(Tok::Str("x".into()), 1, 11),
                at(Tok::Name("s".into()), 2, 3),
                at(Tok::Sym(Sym::Assign), 2, 5),
                at(Tok::Name("s".into()), 2, 7),
                at(Tok::Sym(Sym::DotDot), 2, 9),
                at(Tok::Float(1.5), 2, 12),
                at(Tok::Sym(Sym::Ne), 2, 16),
                at(Tok::Sym(Sym::Hash), 2, 19),
                at(Tok::Name("t".into()), 2, 20),
                at(Tok::Eof, 2, 21),
            ]
        );
        assert_eq!(
            batched::lex("local s = 'x' -- note\n  s = s .. 1.5 ~= #t").unwrap(),
            tokens
        );
    });
}

#[test]
fn errors_name_the_line_and_column() {
    serially(|| {
        let cases = [
            (
                "x = 1 +",
                1,
                8,
                "expected an expression, found the end of the input",
            ),
            (
                "x = (1\ny = 2",
                2,
                1,
                "expected `)` to close `(` at line 1, found `y`",
            ),
            (
                "if a then\nx = 1\n",
                3,
                1,
                "expected `end` to close `if` at line 1, found the end of the input",
            ),
            (
                "local function f()\n  x = 1",
                2,
                8,
                "expected `end` to close `function` at line 1, found the end of the input",
            ),
            (
                "f(1, 2",
                1,
                7,
                "expected `)` to close `(` at line 1, found the end of the input",
            ),
            (
                "t = { 1, 2",
                1,
                11,
                "expected `}` to close `{` at line 1, found the end of the input",
            ),
            (
                "x",
                1,
                2,
                "expected `=` or a call, found the end of the input",
            ),
            ("f() = 1", 1, 1, "cannot assign to this expression"),
            ("x, f() = 1, 2", 1, 4, "cannot assign to this expression"),
            (
                "return 1\nx = 2",
                2,
                1,
                "expected the end of the block after `return`, found `x`",
            ),
            ("end", 1, 1, "expected a statement, found `end`"),
            ("for i do end", 1, 7, "expected `=` or `in`, found `do`"),
            ("local 1 = 2", 1, 7, "expected a name, found a number"),
            ("while x end", 1, 9, "expected `do`, found `end`"),
            ("x = 'abc", 1, 5, "unfinished string"),
            ("x = \"ab\ncd\"", 1, 5, "unfinished string"),
            ("x = '\\q'", 1, 6, "invalid escape"),
            ("x = '\\256'", 1, 6, "escape too large"),
            ("x = '\\x4'", 1, 6, "`\\x` needs two hex digits"),
            ("x = 12ab", 1, 5, "malformed number"),
            ("x = 1e+", 1, 5, "malformed number"),
            ("x = 0x", 1, 5, "malformed number"),
            ("x = 99999999999999999999", 1, 5, "number too large"),
            ("x = 0x10000000000000000", 1, 5, "number too large"),
            ("x = 1 ! 2", 1, 7, "unexpected character '!'"),
            ("x = é", 1, 5, "unexpected character 'é'"),
        ];
        for (source, line, column, message) in cases {
            let expected = ParseError {
                line,
                column,
                message: message.to_string(),
            };
            assert_eq!(parse(source), Err(expected), "{source:?}");
        }
    });
}

/// Runs `f` on a thread with a main thread's stack (8 MiB), and waits.
fn with_main_stack(f: impl FnOnce() + Send + 'static) {
    let thread = std::thread::Builder::new().stack_size(8 << 20);
    thread.spawn(f).unwrap().join().unwrap();
}

#[test]
fn nesting_is_bounded() {
    // On a main thread's stack, as a program's parser would run: the
    // spawned-thread case is `annotated_nesting_fits_where_plain_nesting_does`.
    serially(|| {
        with_main_stack(|| {
            let depth = MAX_DEPTH as usize;
            // The chunk is one level and the statement's expression another.
            let parens = |n| format!("x = {}1{}", "(".repeat(n), ")".repeat(n));
            assert!(parse(&parens(depth - 2)).is_ok());
            assert!(parse(&parens(depth - 1))
                .unwrap_err()
                .message
                .starts_with("nested too deeply"));
            for deep in [
                format!("x = {}1", "- ".repeat(depth)),
                format!("{}{}", "do ".repeat(depth), "end ".repeat(depth)),
                format!("x = {}{}", "{".repeat(depth), "}".repeat(depth)),
                format!("x = {}1", "2 .. ".repeat(depth)),
                format!("{}1", "f(function() return ".repeat(depth)),
            ] {
                let error = parse(&deep).unwrap_err();
                assert!(error.message.starts_with("nested too deeply"), "{error}");
            }
            // What parses at the limit, the checker walks and drop frees.
            let tree = chunk(&parens(depth - 2));
            assert_eq!(plain::check(&tree).expressions[6], 1);
        })
    });
}

/// On a spawned thread's default stack, in an unoptimised build too: the
/// attribute's calls are always inlined only in optimised builds, so that
/// their locals do not join each caller's frame (which once made the
/// annotated parser need twice the plain one's stack here).
#[test]
fn annotated_nesting_fits_where_plain_nesting_does() {
    // Serially too: the annotated front end's scope serves allocations
    // that a test counting the process-wide `stats()` meanwhile would see.
    serially(|| {
        let depth = MAX_DEPTH as usize - 2;
        let source = format!("x = {}1{}", "(".repeat(depth), ")".repeat(depth));
        // A thread of the default size, as `std::thread::spawn` gives.
        let thread = std::thread::Builder::new().stack_size(2 << 20);
        let parsed = thread
            .spawn(move || {
                batched::lex(&source)
                    .and_then(|tokens| batched::parse(&tokens))
                    .is_ok()
            })
            .unwrap();
        assert!(parsed.join().unwrap());
    });
}

/// Whatever it is given, the front end returns: a tree or an error, the
/// same from both versions.
#[test]
fn malformed_input_gives_errors_not_panics() {
    serially(|| {
        let mut rng = seeded(0x5eed);
        let alphabet =
            b"abcxyz019_.:,;=~<>+-*/%^#()[]{}'\"\\ \n\tlocal function end if then else do";
        for _ in 0..300 {
            let len = rng.random_range(0..120);
            let bytes: Vec<u8> = (0..len)
                .map(|_| match rng.random_range(0..4) {
                    0 => rng.random_range(0..256) as u8,
                    _ => alphabet[rng.random_range(0..alphabet.len())],
                })
                .collect();
            let _ = parse(&String::from_utf8_lossy(&bytes));
        }

        // Programs that are nearly right: a valid one with a few bytes
        // deleted, duplicated or replaced, or cut short.
        let source = generate::program(6_000, 3);
        chunk(&source);
        let keywords = [
            "end", "(", ")", "=", ",", "then", "do", "{", "}", "'", "\\", ".",
        ];
        let mut errors = 0;
        for _ in 0..300 {
            let mut text = source.clone().into_bytes();
            for _ in 0..1 + rng.random_range(0..3) {
                let at = rng.random_range(0..text.len());
                match rng.random_range(0..4) {
                    0 => {
                        text.remove(at);
                    }
                    1 => text.insert(at, text[at]),
                    2 => text
                        .splice(
                            at..at,
                            keywords[rng.random_range(0..keywords.len())].bytes(),
                        )
                        .for_each(drop),
                    _ => text.truncate(at),
                }
            }
            errors += parse(&String::from_utf8_lossy(&text)).is_err() as usize;
        }
        assert!(errors > 200, "{errors} of 300 mutants were errors");

        // Token lists that stop anywhere, without their end-of-input token.
        let tokens = plain::lex(&source[..1_500]).unwrap();
        for end in 0..tokens.len() {
            let result = plain::parse(&tokens[..end]);
            assert_eq!(batched::parse(&tokens[..end]), result);
        }
    });
}

#[test]
fn the_checker_resolves_counts_and_folds() {
    serially(|| {
        let source = "\
    local a = 1 + 2 * 3
    local function f(p, q) return p .. 'x' .. 1, g end
    function obj:m() return self, a end
    for i = 1, #a do print(i, 2 // 0, -7 // 2, -7 % 3, 7 / 2, 'a' < 'b') end
    print(i, not nil, 1 == 1.0, 'ab' .. 'cd', 'x' and 2 or 3, #'four')
    t = { 1, k = a, [a] = 2 }
    ";
        let tree = chunk(source);
        let summary = plain::check(&tree);
        assert_eq!(batched::check(&tree), summary);
        let Summary {
            statements,
            expressions,
            fields,
            functions,
            locals,
            local_refs,
            global_refs,
            max_depth,
            folded,
            string_bytes,
            boxes,
            ..
        } = summary;
        assert_eq!(statements, [1, 1, 2, 1, 1, 0, 0, 1, 0, 0, 0, 2]);
        assert_eq!((fields, functions, max_depth), (3, 2, 2));
        // a, f, p, q, self, i.
        assert_eq!(locals, 6);
        // p; self, a; a, i (in the loop); a, a (in the table).
        assert_eq!(local_refs, 7);
        // g, obj, print, print, i (after the loop), t.
        assert_eq!(global_refs, 6);
        // 2 * 3, 1 + 6; 'x' .. 1 (`..` is right-associative); -7, -7 // 2,
        // -7 (again), -7 % 3, 7 / 2, 'a' < 'b'; not nil, 1 == 1.0,
        // 'ab' .. 'cd', 'x' and 2, ... or 3, #'four'. Not 2 // 0, nor #a,
        // nor p .. 'x1' (p is not known).
        assert_eq!(folded, 15);
        assert_eq!((expressions[9], expressions[10]), (5, 13), "unary, binary");
        assert_eq!(string_bytes, 1 + 1 + 1 + 2 + 2 + 1 + 4);
        // Two for each binary operator, one for each unary one, one for each
        // callee and argument, the keyed field's key, the two functions and
        // the numeric `for`.
        assert_eq!(boxes, 2 * 13 + 5 + (1 + 6) * 2 + 1 + 2 + 1);

        // Folded values show in the hash: another constant, another hash.
        let other = plain::check(&chunk(&source.replace("1 + 2 * 3", "1 + 2 * 4")));
        assert_ne!(other.folded_hash, summary.folded_hash);
        assert_eq!(other.folded, summary.folded);
    });
}

#[test]
fn generated_programs_are_deterministic_and_varied() {
    serially(|| {
        let source = generate::program(60_000, 1);
        assert_eq!(generate::program(60_000, 1), source, "the same every time");
        assert_ne!(generate::program(60_000, 2), source, "another seed");
        // Whole modules, the last one past the size asked for.
        assert!(
            (60_000..120_000).contains(&source.len()),
            "{}",
            source.len()
        );
        for needle in [
            "local function",
            "function M:",
            "elseif",
            "else\n",
            "while ",
            " in pairs(",
            "for ",
            "return",
            "break",
            "do\n",
            "{}",
            "= {",
            "[",
            "\\n",
            "'",
            "0x",
            " .. ",
            " // ",
            "not ",
            "#",
            "-- ",
            "function(",
            ":",
        ] {
            assert!(source.contains(needle), "{needle:?}");
        }
        let tree = chunk(&source);
        let summary = plain::check(&tree);
        assert!(
            summary.statements.iter().all(|&n| n > 0),
            "{:?}",
            summary.statements
        );
        assert!(
            summary.expressions.iter().all(|&n| n > 0),
            "{:?}",
            summary.expressions
        );
        // A few nodes an expression, a few statements a block.
        let expressions: u64 = summary.expressions.iter().sum();
        let statements: u64 = summary.statements.iter().sum();
        let per_statement = expressions as f64 / statements as f64;
        assert!((2.0..8.0).contains(&per_statement), "{per_statement}");
        assert!(
            (3..=7).contains(&summary.max_depth),
            "{}",
            summary.max_depth
        );
    });
}

#[test]
fn both_versions_agree_and_the_annotated_one_takes_its_boxes_from_batch_alloc() {
    // Every box of the tree, and more.
    serially(|| {
        let source = generate::program(40_000, 7);
        let baseline = stats();
        let ((tokens, tree, summary), plain_count) =
            served(|| stmt_parser::front(Variant::Plain, &source).unwrap());
        let (batched, batched_count) =
            served(|| stmt_parser::front(Variant::Batched, &source).unwrap());
        assert_eq!(batched.0, tokens);
        assert_eq!(batched.1, tree);
        assert_eq!(batched.2, summary);
        assert_eq!(plain_count, 0);
        assert!(batched_count >= summary.boxes, "{batched_count}");
        // Both versions' tokens and trees live, equal (so every box holds
        // what it should), and no two of their boxes overlap.
        let mut boxes = Boxes::default();
        boxes.block(&tree);
        assert_eq!(boxes.0.len() as u64, summary.boxes, "every box reached");
        boxes.block(&batched.1);
        boxes.tokens(&tokens);
        boxes.tokens(&batched.0);
        assert_disjoint(&mut boxes.0);
        let live = stats().live_slots;
        drop(batched);
        assert!(
            live - stats().live_slots >= summary.boxes,
            "the boxes were slots"
        );
        drop((tokens, tree));
        assert_slots_back_at(&baseline, &stats());
    });
}

#[test]
fn the_comparison_and_a_small_run() {
    serially(|| {
        let source = generate::program(20_000, 1);
        let mut lines = Vec::new();
        let c = compare(&source, 2, &Clock::start(), |l| lines.push(l.to_string())).unwrap();
        assert_eq!(lines.len(), 3);
        assert_eq!(c.plain.times.runs.len(), 2);
        assert_eq!(c.plain.boxes, c.batched.boxes);
        assert_eq!(c.plain.boxes, c.summary.boxes);
        assert_eq!(c.plain.from_batches, 0);
        assert!(c.batched.from_batches > c.batched.boxes);
        let table = stmt_parser::table(&c);
        assert!(table.contains("#[batch_alloc]") && table.contains("speedup"));
        let described = stmt_parser::describe(&c.summary, c.tokens);
        assert!(described.contains("local function"), "{described}");

        for only in [None, Some(Variant::Batched)] {
            stmt_parser::run(&Options {
                bytes: 5_000,
                seed: 2,
                reps: 1,
                only,
                emit: false,
            })
            .unwrap();
        }
        assert!(compare("x = 1 +", 1, &Clock::start(), |_| {}).is_err());
    });
}

#[test]
fn the_command_line() {
    let defaults = Options {
        bytes: stmt_parser::DEFAULT_BYTES,
        seed: stmt_parser::DEFAULT_SEED,
        reps: stmt_parser::DEFAULT_REPS,
        only: None,
        emit: false,
    };
    assert_eq!(parse_args(Vec::<&str>::new()).unwrap(), Some(defaults));
    assert_eq!(
        parse_args(["--bytes", "1_000", "--seed=0", "--reps", "2", "--only", "plain", "--emit"])
            .unwrap(),
        Some(Options {
            bytes: 1000,
            seed: 0,
            reps: 2,
            only: Some(Variant::Plain),
            emit: true,
        })
    );
    assert_eq!(parse_args(["--help"]).unwrap(), None);
    assert!(parse_args(["--bytes", "0"]).is_err());
    assert!(parse_args(["--seed", "x"]).is_err());
    assert!(parse_args(["--only", "both"]).is_err());
    assert!(parse_args(["--lines", "5"]).is_err());
}
