//! An iterator-chain program, written as idiomatic Rust with adapters and
//! no `for`: a web server's access log parsed into entries, grouped by
//! host, indexed by path into a tree of segments, and summarised, then
//! dropped. Written out twice: as written, and with `#[batch_alloc]` on
//! each function.

use super::{fnv, Outcome, Program, Variant};
use workloads::rng::SplitMix64 as Rng;

const HOSTS: &[&str] = &[
    "api", "www", "static", "auth", "search", "img", "mail", "admin",
];
const METHODS: &[&str] = &["GET", "GET", "GET", "POST", "PUT", "DELETE"];
const SEGMENTS: &[&str] = &[
    "v1", "v2", "items", "users", "orders", "search", "assets", "img", "css", "login", "cart",
    "reviews",
];
const AGENTS: &[&str] = &[
    "curl/8.5",
    "Mozilla/5.0",
    "python-requests/2.31",
    "Go-http-client/1.1",
    "okhttp/4.12",
];

/// `lines` lines of access log, the same on every machine.
fn log(lines: u64) -> String {
    let mut rng = Rng::new(0x10_9a7e);
    (0..lines)
        .map(|i| {
            let depth = 1 + rng.below(4) as usize;
            let path: Vec<&str> = (0..depth).map(|_| rng.pick(SEGMENTS)).collect();
            format!(
                "{} {}-{} {} /{}/{} {} {} ua={} tags={}\n",
                1_700_000_000 + i,
                rng.pick(HOSTS),
                rng.below(16),
                rng.pick(METHODS),
                path.join("/"),
                rng.below(100_000),
                [200, 200, 200, 201, 304, 404, 500][rng.below(7) as usize],
                rng.below(1 << 20),
                rng.pick(AGENTS),
                (0..rng.below(4))
                    .map(|t| format!("t{}", rng.below(32) + t))
                    .collect::<Vec<_>>()
                    .join(","),
            )
        })
        .collect()
}

macro_rules! analytics {
    ($(#[$batch:meta])*) => {
        use std::collections::{BTreeMap, HashMap};

        pub struct Entry {
            pub time: u64,
            pub host: String,
            pub method: String,
            pub path: Vec<String>,
            pub status: u16,
            pub bytes: u64,
            pub agent: String,
            pub tags: Vec<String>,
        }

        /// A node of the path tree: requests under it, and its children.
        #[derive(Default)]
        pub struct Node {
            pub hits: u64,
            pub bytes: u64,
            pub children: BTreeMap<String, Box<Node>>,
        }

        pub struct Report {
            pub by_host: HashMap<String, Vec<Box<Entry>>>,
            pub tree: Node,
            pub top: Vec<(String, u64)>,
            pub errors: Vec<String>,
        }

        $(#[$batch])*
        pub fn parse_line(line: &str) -> Option<Entry> {
            let mut fields = line.split_whitespace();
            let time = fields.next()?.parse().ok()?;
            let host = fields.next()?.to_string();
            let method = fields.next()?.to_string();
            let path = fields
                .next()?
                .split('/')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            let status = fields.next()?.parse().ok()?;
            let bytes = fields.next()?.parse().ok()?;
            let agent = fields.next()?.strip_prefix("ua=")?.to_string();
            let tags = fields
                .next()?
                .strip_prefix("tags=")?
                .split(',')
                .filter(|t| !t.is_empty())
                .map(String::from)
                .collect();
            Some(Entry { time, host, method, path, status, bytes, agent, tags })
        }

        $(#[$batch])*
        pub fn insert(node: &mut Node, path: &[String], bytes: u64) {
            node.hits += 1;
            node.bytes += bytes;
            if let Some((first, rest)) = path.split_first() {
                let child = node.children.entry(first.clone()).or_insert_with(|| Box::new(Node::default()));
                insert(child, rest, bytes);
            }
        }

        $(#[$batch])*
        pub fn analyse(log: &str) -> Report {
            let entries: Vec<Entry> = log.lines().filter_map(parse_line).collect();
            let tree = entries.iter().fold(Node::default(), |mut tree, e| {
                insert(&mut tree, &e.path, e.bytes);
                tree
            });
            let mut counts: Vec<(String, u64)> = entries
                .iter()
                .map(|e| e.path.join("/"))
                .fold(HashMap::new(), |mut counts: HashMap<String, u64>, path| {
                    *counts.entry(path).or_default() += 1;
                    counts
                })
                .into_iter()
                .collect();
            counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            counts.truncate(20);
            let errors = entries
                .iter()
                .filter(|e| e.status >= 400)
                .map(|e| format!("{} {} {} /{}", e.time, e.host, e.status, e.path.join("/")))
                .collect();
            let by_host = entries.into_iter().fold(HashMap::new(), |mut by: HashMap<String, Vec<Box<Entry>>>, e| {
                by.entry(e.host.clone()).or_default().push(Box::new(e));
                by
            });
            Report { by_host, tree, top: counts, errors }
        }
    };
}

pub mod plain {
    analytics!();
}

pub mod attr {
    // `parse_line` is a leaf, which the attribute leaves as written (it runs
    // in `analyse`'s scope) and says so: `quiet`, as a user would write.
    analytics!(#[batch_alloc::batch_alloc]);
}

/// What a reader of the report looks at, the same for every twin.
macro_rules! summary {
    ($report:expr) => {{
        let report = $report;
        let mut hosts: Vec<_> = report.by_host.iter().collect();
        hosts.sort_by(|a, b| a.0.cmp(b.0));
        let entries: u64 = hosts.iter().map(|(_, v)| v.len() as u64).sum();
        let tree_nodes = {
            let mut todo = vec![&report.tree];
            let mut nodes = 0u64;
            while let Some(node) = todo.pop() {
                nodes += 1;
                todo.extend(node.children.values().map(|b| &**b));
            }
            nodes
        };
        let words = hosts
            .iter()
            .flat_map(|(host, entries)| {
                entries.iter().map(move |e| {
                    e.time
                        ^ e.bytes
                        ^ (host.len() as u64) << 40
                        ^ (e.tags.len() + e.agent.len() + e.method.len()) as u64
                })
            })
            .chain(report.top.iter().map(|(p, n)| p.len() as u64 ^ n << 20))
            .chain([report.errors.len() as u64, report.tree.hits, tree_nodes]);
        Outcome {
            boxes: entries + tree_nodes - 1,
            check: fnv(words),
        }
    }};
}

pub struct Chains;

impl Program for Chains {
    const NAME: &'static str = "chains";
    const UNIT: &'static str = "lines";
    const SIZE: u64 = 40_000;
    const ABOUT: &'static str = "an access log through iterator chains (lines, filter_map, fold, \
        collect into maps, a tree of path segments), no `for`: idiomatic Rust, every fn annotated";

    type Input = String;

    fn input(size: u64) -> String {
        log(size)
    }

    fn run(variant: Variant, input: &String) -> Outcome {
        match variant {
            Variant::Plain => summary!(plain::analyse(input)),
            Variant::Attr => summary!(attr::analyse(input)),
        }
    }
}
