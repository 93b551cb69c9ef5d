//! A `Batch` is a run of its type's size class: its first refill asks for
//! its capacity (a few slots with none), up to a span's slots, or takes the
//! rest of the span when little more would remain there; each later refill
//! asks for twice the last request, up to a span; what it did not hand out
//! goes back when it drops.
//! (`Debug` shows the slots ready and the next refill's request; `stats()`
//! counts the refills.)

use batch_alloc_rt::{stats, Batch};

use workloads::testing::serially;

/// The batch's `Debug` fields: slots ready, and the next refill's request.
fn state<T>(batch: &Batch<T>) -> (u64, u64) {
    let seen = format!("{batch:?}");
    let field = |name: &str| -> u64 {
        let rest = seen
            .split(&format!("{name}: "))
            .nth(1)
            .unwrap_or_else(|| panic!("no {name} in {seen}"));
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().unwrap()
    };
    (field("ready_slots"), field("next_refill"))
}

#[test]
fn a_batch_reserves_its_capacity_then_doubles() {
    serially(|| {
        assert!(batch_alloc_rt::is_active());
        // The thread's heap, made first, so that the counts below see only
        // this batch.
        drop(Batch::new().alloc([0u64; 4]));
        let before = stats().reserve_calls;
        let mut batch = Batch::with_capacity(10);
        assert_eq!(
            state(&batch),
            (0, 10),
            "nothing reserved before the first box"
        );
        let mut boxes = vec![batch.alloc([1u64; 4])];
        let (ready, next) = state(&batch);
        assert!(ready >= 9, "ten slots at least, one handed out: {ready}");
        assert_eq!(next, 20, "the next refill: twice the capacity");
        assert_eq!(stats().reserve_calls, before + 1);
        boxes.extend((0..ready).map(|i| batch.alloc([i; 4])));
        assert_eq!(stats().reserve_calls, before + 1, "the capacity held");
        boxes.push(batch.alloc([2; 4]));
        let (ready, next) = state(&batch);
        assert!(ready >= 19, "outrun: twice the last request, {ready}");
        assert_eq!(next, 40);
        assert_eq!(stats().reserve_calls, before + 2);

        let mut guess = Batch::new();
        boxes.push(guess.alloc([3; 4]));
        assert_eq!(state(&guess).1, 16, "with no capacity, a few, doubling");
        assert!(state(&guess).0 >= 7, "a guess may take the rest of a span");
        for (k, b) in boxes.iter().enumerate().skip(1).take(9) {
            assert_eq!(**b, [k as u64 - 1; 4]);
        }
    });
}

#[test]
fn a_capacity_past_a_span_asks_for_a_span() {
    serially(|| {
        let mut batch = Batch::with_capacity(usize::MAX);
        let first = batch.alloc([7u64; 4]);
        let (ready, next) = state(&batch);
        let span_slots = batch_alloc_rt::testing::size_classes()
            .iter()
            .find(|class| class.size as usize >= 32)
            .unwrap()
            .slots as u64;
        assert_eq!(ready + 1, span_slots, "a span's slots at most");
        assert_eq!(next, span_slots, "then a span's again");
        assert_eq!(*first, [7; 4]);
    });
}

/// A batch dropped with slots ready gives them back, on its thread or on
/// another: every slot is back once the boxes are gone too.
#[test]
fn a_batch_gives_back_what_it_did_not_hand_out() {
    serially(|| {
        std::thread::spawn(|| {
            drop(Batch::new().alloc([0u64; 4]));
            let before = stats();
            let mut batch = Batch::with_capacity(100);
            let boxes: Vec<Box<[u64; 4]>> = (0..3).map(|i| batch.alloc([i; 4])).collect();
            let during = stats();
            let reserved = during.batched_boxes - before.batched_boxes;
            assert!(reserved >= 100, "the capacity at least: {reserved}");
            assert_eq!(during.live_slots - before.live_slots, reserved);
            drop(batch);
            assert_eq!(stats().live_slots - before.live_slots, 3);
            assert_eq!(stats().batched_boxes - before.batched_boxes, 3);

            let mut moved = Batch::with_capacity(50);
            let kept = moved.alloc([9u64; 4]);
            std::thread::spawn(move || drop(moved)).join().unwrap();
            assert_eq!(stats().live_slots - before.live_slots, 4);
            drop((boxes, kept));
            assert_eq!(stats().live_slots, before.live_slots);
        })
        .join()
        .unwrap();
    });
}
