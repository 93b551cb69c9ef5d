//! The linked list (`examples/linked_list.rs`): an edge list read
//! into adjacency lists of `Box<Edge>`, walked, and dropped on another
//! thread, started before any run as the example starts it.

use workloads::linked_list::graph::{self, Dropper};

use super::{Outcome, Program, Text, Variant};

pub struct LinkedList;

/// The edge list, and the thread that drops graphs.
pub struct Input {
    text: String,
    edges: u64,
    dropper: Dropper,
}

impl Text for Input {
    fn bytes(&self) -> usize {
        self.text.len()
    }
}

/// Vertices of the generated graph: the example's default.
const VERTICES: u32 = 50_000;

impl Program for LinkedList {
    const NAME: &'static str = "linked_list";
    const UNIT: &'static str = "edges";
    const SIZE: u64 = 500_000;
    const ABOUT: &'static str = "the linked list example: an edge list read into adjacency \
        lists of `Box<Edge>` by one `while let` loop, walked, dropped on another thread";

    type Input = Input;

    fn input(size: u64) -> Input {
        Input {
            text: graph::edge_list(VERTICES, size),
            edges: size,
            dropper: Dropper::start(),
        }
    }

    fn run(variant: Variant, input: &Input) -> Outcome {
        let Input {
            text,
            edges,
            dropper,
        } = input;
        let graph = match variant {
            Variant::Plain => graph::plain::read(text),
            Variant::Attr => graph::batched::read(text),
        }
        .expect("the generated edge list reads");
        let check = graph.checksum();
        dropper.drop_elsewhere(graph);
        Outcome {
            boxes: *edges,
            check,
        }
    }
}
