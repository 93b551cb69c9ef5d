//! The statement parser (`examples/stmt_parser.rs`): a generated
//! Lua-like module bundle lexed, parsed and checked; tree and tokens
//! dropped.

use workloads::stmt_parser::{generate, lang};

use super::{fnv, Outcome, Program, Variant};

pub struct Stmt;

/// One twin of the front end.
type FrontEnd = (
    fn(&str) -> Result<Vec<lang::Token>, lang::ParseError>,
    fn(&[lang::Token]) -> Result<lang::Block, lang::ParseError>,
    fn(&[lang::Stmt]) -> lang::Summary,
);

/// The example's default program.
const SEED: u64 = 1;

impl Program for Stmt {
    const NAME: &'static str = "stmt";
    const UNIT: &'static str = "bytes";
    const SIZE: u64 = 4_000_000;
    const ABOUT: &'static str = "the statement parser example: a Lua-like front end (lexer into \
        a token vector, recursive descent, precedence climbing, a checker), every fn annotated";

    type Input = String;

    fn input(size: u64) -> String {
        generate::program(usize::try_from(size).expect("a size"), SEED)
    }

    fn run(variant: Variant, input: &String) -> Outcome {
        let (lex, parse, check): FrontEnd = match variant {
            Variant::Plain => (lang::plain::lex, lang::plain::parse, lang::plain::check),
            Variant::Attr => (
                lang::batched::lex,
                lang::batched::parse,
                lang::batched::check,
            ),
        };
        let tokens = lex(input).expect("the generated program lexes");
        let chunk = parse(&tokens).expect("the generated program parses");
        let s = check(&chunk);
        drop((chunk, tokens));
        Outcome {
            boxes: s.boxes,
            check: fnv([s.names_hash, s.strings_hash, s.folded_hash, s.heap_blocks]),
        }
    }
}
