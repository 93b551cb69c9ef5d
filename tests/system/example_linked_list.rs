//! `examples/linked_list.rs`: the reader builds the lists it says, both
//! versions agree, the annotated one's batch scope serves every box, boxes
//! dropped on the other thread all come back, and bad input is reported by
//! line.
//!
//! The allocator's counters are process-wide, so every test that reads
//! edges runs [`serially`].

use batch_alloc::stats;
use workloads::linked_list;
use workloads::linked_list::{
    batched, compare, edge_list, parse_args, plain, read, Dropper, Graph, Options, ReadError,
    Variant,
};
use workloads::testing::{assert_disjoint, assert_slots_back_at, box_range, serially, served};
use workloads::timing::Clock;

/// Panics if any two edges of `graph` overlap.
fn assert_edges_disjoint(graph: &Graph) {
    let mut ranges: Vec<_> = graph
        .lists
        .iter()
        .flat_map(|l| std::iter::successors(l.head.as_ref(), |e| e.next.as_ref()))
        .map(box_range)
        .collect();
    assert_eq!(ranges.len() as u64, graph.edges());
    assert_disjoint(&mut ranges);
}

#[test]
fn lists_hold_each_vertex_edges_newest_first() {
    serially(|| {
        let text = "4\n0 1\n0 2\n2 3\n0 3\n3 3\n";
        for variant in [Variant::Plain, Variant::Batched] {
            let graph = read(variant, text).unwrap();
            let lists: Vec<Vec<u32>> = graph.lists.iter().map(|l| l.iter().collect()).collect();
            assert_eq!(lists, [vec![3, 2, 1], vec![], vec![3], vec![3]]);
            assert_eq!(graph.edges(), 5);
        }
        assert_eq!(read(Variant::Plain, "").unwrap().lists.len(), 0);
        assert_eq!(read(Variant::Batched, "7").unwrap().lists.len(), 7);
    });
}

#[test]
fn bad_input_is_reported_by_line() {
    serially(|| {
        let cases = [
            ("3\n0 1\n1 3\n", 3, "no such vertex"),
            ("3\n0 1\n2\n", 3, "an edge needs two ends"),
            ("3\n0 1\n1 -2\n", 3, "expected a number"),
            ("3\n\n\n0 99999999999\n", 4, "number too large"),
            ("x", 1, "expected a number"),
        ];
        for (text, line, message) in cases {
            let expected = ReadError {
                line,
                message: message.to_string(),
            };
            assert_eq!(plain::read(text).unwrap_err(), expected, "{text:?}");
            assert_eq!(batched::read(text).unwrap_err(), expected, "{text:?}");
        }
    });
}

#[test]
fn the_scope_serves_every_box() {
    serially(|| {
        let text = edge_list(1000, 20_000);
        let (plain_graph, plain_count) = served(|| plain::read(&text).unwrap());
        let (batched_graph, batched_count) = served(|| batched::read(&text).unwrap());
        assert_eq!(plain_graph, batched_graph);
        assert_eq!(plain_graph.checksum(), batched_graph.checksum());
        assert_eq!(plain_count, 0);
        // The annotated reader's scope serves every box; the vector of
        // lists it makes first (8 KiB, a medium block) is the inner
        // allocator's.
        assert_eq!(batched_count, 20_000);
    });
}

#[test]
fn boxes_dropped_on_the_other_thread_all_come_back() {
    serially(|| {
        let dropper = Dropper::start();
        let text = edge_list(500, 50_000);
        let expected = plain::read(&text).unwrap().checksum();
        let before = stats();
        let graph = batched::read(&text).unwrap();
        assert!(stats().live_slots >= before.live_slots + 49_000);
        // Every edge holds what it should, and no two overlap.
        assert_eq!(graph.checksum(), expected);
        assert_edges_disjoint(&graph);
        let time = dropper.drop_elsewhere(graph);
        assert!(!time.is_zero());
        assert_slots_back_at(&before, &stats());
    });
}

#[test]
fn a_long_list_drops_without_recursion() {
    serially(|| {
        // Every edge in one list: a million nodes deep.
        let mut text = String::from("1\n");
        for _ in 0..1_000_000 {
            text.push_str("0 0\n");
        }
        let graph = batched::read(&text).unwrap();
        assert_eq!(graph.lists[0].iter().count(), 1_000_000);
        drop(graph);
    });
}

#[test]
fn the_generated_edge_list() {
    let text = edge_list(100, 5000);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("100"));
    let edges: Vec<(u32, u32)> = lines
        .map(|l| {
            let (a, b) = l.split_once(' ').unwrap();
            (a.parse().unwrap(), b.parse().unwrap())
        })
        .collect();
    assert_eq!(edges.len(), 5000);
    assert!(edges.iter().all(|&(a, b)| a < 100 && b < 100));
    // Spread over the vertices.
    for v in 0..100 {
        assert!(edges.iter().any(|&(a, _)| a == v), "{v}");
    }
    assert_eq!(edge_list(100, 5000), text);
}

#[test]
fn the_comparison_and_a_small_run() {
    serially(|| {
        let dropper = Dropper::start();
        let text = edge_list(300, 10_000);
        let mut lines = Vec::new();
        let c = compare(&text, 3, &dropper, &Clock::start(), |l| {
            lines.push(l.to_string())
        })
        .unwrap();
        assert_eq!(lines.len(), 4);
        for phase in [&c.plain, &c.batched] {
            assert_eq!(phase.times.runs.len(), 3);
            assert_eq!(phase.boxes, 10_000);
            assert!(phase.times.phase(2).iter().all(|t| !t.is_zero()));
        }
        assert_eq!(c.plain.from_batches, 0);
        // Every box, and the vector of lists the annotated reader makes
        // before its loop.
        assert_eq!(c.batched.from_batches, 10_001);
        assert_eq!(c.checksum, plain::read(&text).unwrap().checksum());
        let table = linked_list::table(&c);
        assert!(table.contains("10,001 (100%)"), "{table}");
        assert!(compare("2\n0 5\n", 1, &dropper, &Clock::start(), |_| {}).is_err());

        let options = Options {
            vertices: 50,
            edges: 1000,
            reps: 1,
        };
        linked_list::run(&options, &dropper).unwrap();
    });
}

#[test]
fn the_command_line() {
    assert_eq!(
        parse_args(Vec::<&str>::new()).unwrap(),
        Some(Options {
            vertices: linked_list::DEFAULT_VERTICES,
            edges: linked_list::DEFAULT_EDGES,
            reps: linked_list::DEFAULT_REPS,
        })
    );
    assert_eq!(
        parse_args(["--edges=2_000", "--vertices", "10", "--reps", "3"]).unwrap(),
        Some(Options {
            vertices: 10,
            edges: 2000,
            reps: 3
        })
    );
    assert_eq!(parse_args(["-h"]).unwrap(), None);
    assert_eq!(
        parse_args(["--vertices", "5000000000"]).map_err(|e| e.to_string()),
        Err("--vertices takes at most 4294967295".to_string())
    );
    assert!(parse_args(["--edges", "many"]).is_err());
    assert!(parse_args(["--lines", "5"]).is_err());
}
