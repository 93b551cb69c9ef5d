//! What the attribute serves: every allocation a function makes while it
//! runs, whatever spelling its loop has (`for`, `while`, iterator chains,
//! `collect`, `extend`, `to_vec`, recursion, a library call).
//!
//! Each function is written once and compiled twice ([`twice!`]): as
//! written in `plain`, and annotated in `annotated`. Called where no scope
//! is open, the annotated copy must return what the plain one returns,
//! serve what `scope(|| plain)` serves (every allocation made while it
//! ran: at least 99% of it, see [`check`]), and so at least as many
//! allocations as it makes objects.

use std::fmt::Debug;

use batch_alloc::{batch_alloc, scope};
use serde::Deserialize;

use workloads::testing::{serially, served};

/// A trait with a default method, which takes the attribute where the
/// trait is declared: `$attr` on the method.
macro_rules! split_trait {
    ($($attr:meta)?) => {
        pub trait Split {
            fn text(&self) -> &str;
            $(#[$attr])?
            fn pieces(&self) -> Vec<String> {
                self.text().split(' ').map(String::from).collect()
            }
        }
    };
}

/// The items written once, in two modules: `plain` as written and
/// `annotated` under `#[batch_alloc]` (each function and impl block).
/// Types are declared in both, unannotated, so that each copy has its own
/// inherent impls.
macro_rules! twice {
    (types { $($ty:item)* } $($item:item)*) => {
        #[allow(clippy::vec_box, clippy::box_collection, clippy::redundant_closure)]
        mod plain {
            use super::*;
            split_trait!();
            $($ty)*
            $($item)*
        }
        #[allow(clippy::vec_box, clippy::box_collection, clippy::redundant_closure)]
        mod annotated {
            use super::*;
            split_trait!(batch_alloc);
            $($ty)*
            $(#[batch_alloc] $item)*
        }
    };
}

#[derive(Debug, PartialEq, Deserialize)]
pub struct Record {
    id: u64,
    name: String,
    tags: Vec<String>,
}

twice! {
    types {
        pub struct Words {
            pub words: Vec<String>,
        }

        #[derive(Debug, PartialEq)]
        pub struct Tree {
            pub children: Vec<Box<Tree>>,
        }
    }

    pub fn map_box_new(n: u64) -> Vec<Box<u64>> {
        (0..n).map(Box::new).collect()
    }

    pub fn to_strings(items: &[u64]) -> Vec<String> {
        items.iter().map(|x| x.to_string()).collect()
    }

    pub fn split_owned(s: &str) -> Vec<String> {
        s.split(',').map(str::to_owned).collect()
    }

    pub fn split_into(s: &str) -> Vec<Box<str>> {
        s.split(' ').map(|w| w.into()).collect::<Vec<Box<str>>>()
    }

    pub fn to_vec(items: &[String]) -> Vec<String> {
        items.to_vec()
    }

    pub fn extend(n: u64) -> Vec<Box<u64>> {
        let mut v = Vec::new();
        v.extend((0..n).map(Box::new));
        v
    }

    impl Words {
        pub fn split(s: &str) -> Vec<String> {
            s.split(' ').map(String::from).collect()
        }

        pub fn upper(&self) -> Vec<String> {
            self.words.iter().map(|w| w.to_uppercase()).collect()
        }
    }

    pub fn for_push(n: u64) -> Vec<Box<u64>> {
        let mut v = Vec::new();
        for i in 0..n {
            v.push(Box::new(i))
        }
        v
    }

    pub fn map_closure(items: &[u64]) -> Vec<Box<u64>> {
        items.iter().map(|&x| Box::new(x)).collect()
    }

    pub fn while_loop(n: u64) -> Vec<Box<u64>> {
        let (mut v, mut i) = (Vec::new(), 0);
        while i < n {
            v.push(Box::new(i));
            i += 1;
        }
        v
    }

    pub fn folded(n: u64) -> Vec<Box<u64>> {
        (0..n).fold(Vec::new(), |mut v, i| {
            v.push(Box::new(i));
            v
        })
    }

    pub fn try_collected(words: &[&str]) -> Result<Vec<Box<u64>>, std::num::ParseIntError> {
        words.iter().map(|w| w.parse().map(Box::new)).collect()
    }

    pub fn flat_mapped(n: u64) -> Vec<Box<u64>> {
        (0..n).flat_map(|i| [Box::new(i), Box::new(i + 1)]).collect()
    }

    pub fn tree(depth: u32) -> Box<Tree> {
        let children = match depth {
            0 => Vec::new(),
            _ => vec![tree(depth - 1), tree(depth - 1)],
        };
        Box::new(Tree { children })
    }

    pub fn generic<T: Clone>(value: T, n: usize) -> Vec<Box<T>> {
        std::iter::repeat_n(value, n).map(Box::new).collect()
    }

    pub fn deserialize(json: &str) -> Vec<Record> {
        serde_json::from_str(json).expect("valid JSON")
    }

    impl Split for Words {
        fn text(&self) -> &str {
            &self.words[0]
        }
    }
}

const N: u64 = 10_000;

fn plain_nodes(tree: &plain::Tree) -> u64 {
    1 + tree.children.iter().map(|c| plain_nodes(c)).sum::<u64>()
}

fn annotated_nodes(tree: &annotated::Tree) -> u64 {
    1 + tree
        .children
        .iter()
        .map(|c| annotated_nodes(c))
        .sum::<u64>()
}

/// Runs `plain` outside any scope and inside one, and `annotated` outside
/// any: the same result; nothing served as written; the annotated copy
/// served what the scope did, and at least `objects`. Returns what it
/// served.
fn check<R: PartialEq + Debug>(
    name: &str,
    objects: u64,
    plain: impl Fn() -> R,
    annotated: impl Fn() -> R,
) -> u64 {
    let (expected, as_written) = served(&plain);
    let (_, in_scope) = served(|| scope(&plain));
    let (got, by_attribute) = served(&annotated);
    assert_eq!(got, expected, "{name}: the attribute changed the result");
    assert_eq!(as_written, 0, "{name}: served as written");
    // Not always equal: a vector's growth in place, where the block after
    // it is free, is no new allocation, and what is free depends on what
    // ran before.
    assert!(
        by_attribute * 100 >= in_scope * 99,
        "{name}: the annotated function served {by_attribute}, scope(|| as written) {in_scope}"
    );
    assert!(
        by_attribute >= objects,
        "{name}: {by_attribute} of {objects} objects served"
    );
    println!("{name}: {by_attribute} allocations served for {objects} objects (scope(|| as written): {in_scope})");
    by_attribute
}

#[test]
fn every_spelling_of_a_loop_is_served() {
    serially(|| {
        let numbers: Vec<u64> = (0..N).collect();
        let strings: Vec<String> = numbers.iter().map(u64::to_string).collect();
        let csv = strings.join(",");
        let spaced = strings.join(" ");
        check(
            "map(Box::new)",
            N,
            || plain::map_box_new(N),
            || annotated::map_box_new(N),
        );
        check(
            "to_string",
            N,
            || plain::to_strings(&numbers),
            || annotated::to_strings(&numbers),
        );
        check(
            "str::to_owned",
            N,
            || plain::split_owned(&csv),
            || annotated::split_owned(&csv),
        );
        check(
            "into Box<str>",
            N,
            || plain::split_into(&spaced),
            || annotated::split_into(&spaced),
        );
        check(
            "to_vec",
            N,
            || plain::to_vec(&strings),
            || annotated::to_vec(&strings),
        );
        check("extend", N, || plain::extend(N), || annotated::extend(N));
        check(
            "impl: String::from",
            N,
            || plain::Words::split(&spaced),
            || annotated::Words::split(&spaced),
        );
        let plain_words = plain::Words {
            words: strings.clone(),
        };
        let annotated_words = annotated::Words {
            words: strings.clone(),
        };
        check(
            "impl: to_uppercase",
            N,
            || plain_words.upper(),
            || annotated_words.upper(),
        );
        check(
            "for push",
            N,
            || plain::for_push(N),
            || annotated::for_push(N),
        );
        check(
            "map(|&x| Box::new(x))",
            N,
            || plain::map_closure(&numbers),
            || annotated::map_closure(&numbers),
        );
        check(
            "while",
            N,
            || plain::while_loop(N),
            || annotated::while_loop(N),
        );
        check("fold", N, || plain::folded(N), || annotated::folded(N));
        let texts: Vec<&str> = strings.iter().map(String::as_str).collect();
        check(
            "collect into Result",
            N,
            || plain::try_collected(&texts),
            || annotated::try_collected(&texts),
        );
        check(
            "flat_map",
            2 * N,
            || plain::flat_mapped(N),
            || annotated::flat_mapped(N),
        );
        check(
            "generic",
            N,
            || plain::generic(7u32, N as usize),
            || annotated::generic(7u32, N as usize),
        );
    });
}

#[test]
fn recursion_trait_defaults_and_library_calls_are_served() {
    serially(|| {
        // 2^11 - 1 nodes, each a box and (but the leaves) a vector.
        let nodes = (1 << 11) - 1;
        let count = |tree: Box<plain::Tree>| plain_nodes(&tree);
        let count_annotated = |tree: Box<annotated::Tree>| annotated_nodes(&tree);
        check(
            "recursion",
            nodes,
            || count(plain::tree(10)),
            || count_annotated(annotated::tree(10)),
        );
        let text = (0..N).map(|i| i.to_string()).collect::<Vec<_>>().join(" ");
        let plain_words = plain::Words {
            words: vec![text.clone()],
        };
        let annotated_words = annotated::Words { words: vec![text] };
        use annotated::Split as _;
        use plain::Split as _;
        check(
            "trait default method",
            N,
            || plain_words.pieces(),
            || annotated_words.pieces(),
        );
        let json = serde_json::to_string(
            &(0..1000u64)
                .map(|id| serde_json::json!({"id": id, "name": format!("n{id}"), "tags": ["a", "b"]}))
                .collect::<Vec<_>>(),
        )
        .expect("JSON");
        // Per record: its name and two tags, and the tags' vector.
        check(
            "derived Deserialize",
            4 * 1000,
            || plain::deserialize(&json),
            || annotated::deserialize(&json),
        );
    });
}
