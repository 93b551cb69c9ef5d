//! Property tests over generated allocator programs: allocations from several
//! batches, frees on this thread and on another, batches ended early or on
//! another thread. Every box must stay disjoint from every other live box,
//! aligned and intact, and everything must come back at the end.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::thread;

use batch_alloc_rt::stats;
use proptest::prelude::*;

use workloads::testing::{assert_back_at, assert_live, serially, Batches, Filled, Patterned};

#[derive(Clone, Debug)]
enum Op {
    /// Allocate from batch set `set`, size `kind`.
    Alloc { set: usize, kind: usize },
    /// Free the live box at `index` (modulo the live count) here.
    Free { index: usize },
    /// Free it on the other thread.
    FreeRemote { index: usize },
    /// End batch set `set` here and start a new one with this hint.
    Restart { set: usize, hint: usize },
    /// End batch set `set` on the other thread.
    EndRemote { set: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..3usize, 0..3usize).prop_map(|(set, kind)| Op::Alloc { set, kind }),
        3 => any::<usize>().prop_map(|index| Op::Free { index }),
        2 => any::<usize>().prop_map(|index| Op::FreeRemote { index }),
        1 => (0..3usize, 0..40usize).prop_map(|(set, hint)| Op::Restart { set, hint }),
        1 => (0..3usize).prop_map(|set| Op::EndRemote { set }),
    ]
}

enum Away {
    Box(Filled, u64),
    Batches(Batches),
}

/// Runs one program on a fresh thread (so that its heap retires at the end)
/// with a second thread for remote frees.
fn run(program: Vec<Op>) {
    let (to_remote, remote_inbox) = mpsc::channel::<Away>();
    let (acks, acked) = mpsc::channel::<()>();
    let remote = thread::spawn(move || {
        for away in remote_inbox {
            match away {
                Away::Box(b, id) => {
                    b.check(id);
                    drop(b);
                }
                Away::Batches(batches) => drop(batches),
            }
            acks.send(()).unwrap();
        }
    });
    let mut sets: Vec<Batches> = (0..3).map(|_| Batches::default()).collect();
    let mut live: Vec<(Filled, u64)> = Vec::new();
    let mut ranges: BTreeMap<usize, usize> = BTreeMap::new();
    let mut next_id = 0u64;
    for op in program {
        match op {
            Op::Alloc { set, kind } => {
                let b = sets[set].alloc(kind, next_id);
                let (start, end) = b.range();
                assert!(b.align_ok());
                if let Some((&s, &e)) = ranges.range(..end).next_back() {
                    assert!(
                        e <= start || s >= end,
                        "overlap: [{s:#x},{e:#x}) and [{start:#x},{end:#x})"
                    );
                }
                ranges.insert(start, end);
                live.push((b, next_id));
                next_id += 1;
            }
            Op::Free { index } | Op::FreeRemote { index } if !live.is_empty() => {
                let (b, id) = live.swap_remove(index % live.len());
                ranges.remove(&b.range().0);
                if matches!(op, Op::Free { .. }) {
                    b.check(id);
                } else {
                    to_remote.send(Away::Box(b, id)).unwrap();
                    acked.recv().unwrap();
                }
            }
            Op::Free { .. } | Op::FreeRemote { .. } => {}
            Op::Restart { set, hint } => sets[set] = Batches::with_capacity(hint),
            Op::EndRemote { set } => {
                let batches = std::mem::take(&mut sets[set]);
                to_remote.send(Away::Batches(batches)).unwrap();
                acked.recv().unwrap();
            }
        }
    }
    // The most boxes live: all intact and disjoint (as each was checked
    // against its neighbours when it was made).
    assert_eq!(assert_live(&live), ranges.len());
    for (b, id) in live.drain(..) {
        b.check(id);
    }
    drop(sets);
    drop(to_remote);
    remote.join().unwrap();
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 64 },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn generated_programs_keep_boxes_disjoint_intact_and_leak_nothing(
        program in prop::collection::vec(op(), 1..if cfg!(miri) { 60 } else { 600 })
    ) {
        assert!(batch_alloc_rt::is_active());
        // A batch serves every box from a run of its class, its first
        // included: any allocation is a batched box.
        let expect_batched = program.iter().any(|op| matches!(op, Op::Alloc { .. }));
        let (before, after) = serially(move || {
            let before = stats();
            thread::spawn(move || run(program)).join().unwrap();
            (before, stats())
        });
        assert_back_at(&before, &after);
        prop_assert!(after.batched_boxes > before.batched_boxes || !expect_batched, "nothing was batched");
    }
}
