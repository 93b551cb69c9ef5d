//! The graph of `examples/linked_list.rs` as adjacency lists of
//! `Box<Edge>`, the scanner, the reader written once (`reader!`) and out
//! twice, [`plain`] as it stands and [`batched`] under `#[batch_alloc]`,
//! the generated edge list, and the thread that drops graphs elsewhere.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread;
use std::time::Duration;

use crate::rng::SplitMix64;
use crate::timing::Clock;

/// One edge in its source vertex's list.
#[derive(Debug)]
pub struct Edge {
    pub to: u32,
    pub next: Option<Box<Edge>>,
}

/// A singly linked list of edges, newest first.
#[derive(Debug, Default)]
pub struct List {
    pub head: Option<Box<Edge>>,
}

impl List {
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(self.head.as_deref(), |e| e.next.as_deref()).map(|e| e.to)
    }
}

impl PartialEq for List {
    fn eq(&self, other: &List) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Drop for List {
    /// One node at a time, without recursion.
    fn drop(&mut self) {
        let mut next = self.head.take();
        while let Some(mut edge) = next {
            next = edge.next.take();
        }
    }
}

/// A graph as adjacency lists: `lists[v]` holds the edges out of `v`.
#[derive(Debug, PartialEq)]
pub struct Graph {
    pub lists: Vec<List>,
}

impl Graph {
    /// Edges (one box each).
    pub fn edges(&self) -> u64 {
        self.lists.iter().map(|l| l.iter().count() as u64).sum()
    }

    /// Walks every list: a checksum of where each edge goes, by position.
    pub fn checksum(&self) -> u64 {
        let mut sum = 0u64;
        for (from, list) in self.lists.iter().enumerate() {
            for (i, to) in list.iter().enumerate() {
                sum = sum
                    .wrapping_mul(31)
                    .wrapping_add((from as u64) << 32 | to as u64)
                    .wrapping_add(i as u64);
            }
        }
        sum
    }
}

/// What is wrong with an edge list, and on which line.
#[derive(Debug, PartialEq)]
pub struct ReadError {
    pub line: usize,
    pub message: String,
}

/// Reads numbers from text, one at a time, the way a hand-written reader
/// does.
pub struct Scanner<'a> {
    text: &'a [u8],
    pos: usize,
    line: usize,
}

impl<'a> Scanner<'a> {
    pub fn new(text: &'a str) -> Scanner<'a> {
        Scanner {
            text: text.as_bytes(),
            pos: 0,
            line: 1,
        }
    }

    /// The next number, `None` at the end of the text.
    pub fn next_number(&mut self) -> Result<Option<u32>, ReadError> {
        while let Some(&byte) = self.text.get(self.pos) {
            match byte {
                b'\n' => self.line += 1,
                b' ' | b'\t' | b'\r' => {}
                _ => break,
            }
            self.pos += 1;
        }
        if self.pos == self.text.len() {
            return Ok(None);
        }
        let mut n: u32 = 0;
        let start = self.pos;
        while let Some(&byte @ b'0'..=b'9') = self.text.get(self.pos) {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add((byte - b'0') as u32))
                .ok_or_else(|| self.error("number too large"))?;
            self.pos += 1;
        }
        match self.pos == start {
            true => Err(self.error("expected a number")),
            false => Ok(Some(n)),
        }
    }

    /// The next edge: two numbers, both below `vertices`. Errors name the
    /// line the edge starts on.
    pub fn next_edge(&mut self, vertices: u32) -> Result<Option<(u32, u32)>, ReadError> {
        let Some(from) = self.next_number()? else {
            return Ok(None);
        };
        let line = self.line;
        let error = |message: &str| ReadError {
            line,
            message: message.to_string(),
        };
        let to = self
            .next_number()?
            .ok_or_else(|| error("an edge needs two ends"))?;
        match from < vertices && to < vertices {
            true => Ok(Some((from, to))),
            false => Err(error("no such vertex")),
        }
    }

    fn error(&self, message: &str) -> ReadError {
        ReadError {
            line: self.line,
            message: message.to_string(),
        }
    }
}

/// The reader, written once; `plain` and `batched` differ only by the
/// attribute.
macro_rules! reader {
    ($(#[$batch:meta])*) => {
        use super::{Edge, Graph, List, ReadError, Scanner};

        /// Reads an edge list (the number of vertices, then `from to` per
        /// line) into adjacency lists.
        $(#[$batch])*
        pub fn read(text: &str) -> Result<Graph, ReadError> {
            let mut scanner = Scanner::new(text);
            let vertices = scanner.next_number()?.unwrap_or(0);
            let mut lists: Vec<List> = (0..vertices).map(|_| List::default()).collect();
            while let Some((from, to)) = scanner.next_edge(vertices)? {
                let list = &mut lists[from as usize];
                list.head = Some(Box::new(Edge {
                    to,
                    next: list.head.take(),
                }));
            }
            Ok(Graph { lists })
        }
    };
}

/// The reader as written.
pub mod plain {
    reader!();
}

/// The same reader under `#[batch_alloc]`.
pub mod batched {
    use batch_alloc::batch_alloc;

    reader!(#[batch_alloc]);
}

/// An edge list of `edges` random edges between `vertices` vertices, the
/// same on every machine.
pub fn edge_list(vertices: u32, edges: u64) -> String {
    let mut rng = SplitMix64::new(0x5eed_9a4b);
    let mut next = || rng.below(vertices as u64);
    let mut out = String::with_capacity(edges as usize * 14 + 16);
    out.push_str(&format!("{vertices}\n"));
    for _ in 0..edges {
        let (from, to) = (next(), next());
        out.push_str(&format!("{from} {to}\n"));
    }
    out
}

/// A thread that drops what it is sent and answers how long that took.
/// Started once, before anything is timed, so that every timing is taken
/// in a process that already has two threads.
pub struct Dropper {
    graphs: Sender<Graph>,
    times: Receiver<Duration>,
}

impl Dropper {
    pub fn start() -> Dropper {
        let (graphs, inbox) = channel::<Graph>();
        let (answers, times) = channel();
        thread::spawn(move || {
            let clock = Clock::start();
            for graph in inbox {
                let ((), time) = clock.time(|| drop(graph));
                if answers.send(time).is_err() {
                    return;
                }
            }
        });
        Dropper { graphs, times }
    }

    /// Drops `graph` on the dropping thread; returns the time it took there.
    pub fn drop_elsewhere(&self, graph: Graph) -> Duration {
        self.graphs.send(graph).expect("the dropping thread runs");
        self.times.recv().expect("the dropping thread answers")
    }
}
