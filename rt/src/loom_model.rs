//! Loom models of the cross-thread protocols: a span's remote list,
//! abandonment by an exiting owner, the notification of an owner whose
//! full span gets a remote free, a sweep of an idle owner's mailbox
//! against that owner and the frees that empty its span, and one-time
//! calls, in a process and in a child forked while a call was under way.
//!
//! The models run the real code of the protocols (`remote.rs`), of the
//! owner's side of them and of a sweep, on a region of one frame that is
//! the model's own (`region::model`, through which the owner's functions
//! find the span and its slots): the owner parks a span full with the
//! real `reserve`, frees its own slot into it with the real
//! `free_owned_rare`, drains its mailbox with the real `drain_mailbox`
//! (which moves a span off the full queue with the real `unpark`), takes
//! a span's list with the real `collect`, and exits with the real
//! `abandon_span` (what `retire_span` does to a span before releasing
//! it); a sweep is the real `sweep_heap`. Where a model reuses a frame,
//! its release resets the span with the real `Span::reset` and the reuse
//! assigns it with the real `Span::assign`, so that a thread that reads a
//! span after another has released it sees what it would see in the
//! program.
//!
//! What the models do not run, and what they do in its place:
//! - The pool, whose stacks and clock are the process's: a frame released
//!   (by the last free into an abandoned span, an exiting owner, or a
//!   sweep) is counted, not pooled; a sweep's release runs the real
//!   `unlink_full` first, as `sweep`'s does. The note a push leaves for
//!   sweeps is the pool's word, loom's in the models; what starts a sweep
//!   (the clock, `locks::SWEEP`, the walk of the records) is left out: a
//!   model's sweep is `sweep_heap` on the model's heap.
//! - `free`'s decision, which finds the thread's heap in a thread-local
//!   that loom's threads, all run on one thread, would share: a freer runs
//!   the remote free's steps (`push_plain`, else `push_to_list` and the
//!   real `notify_owner`, as `push_one` and `finish_push` do, but for a
//!   reclaim, counted), and the owner's free into its full span is
//!   `free_owned_rare` told what `free` tells it (the span is on the full
//!   queue, read from the owner word as `free` reads it).
//! - The remote list's own models take lists with the real `take`, and
//!   walk them, where `collect` splices them onto a span's free list.
//!
//! Protocol windows are marked in the code (`sync::window`), which makes
//! loom try every order of them.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 \
//!     cargo test -p batch-alloc-rt --release --lib loom_model
//! ```

use std::cell::UnsafeCell;
use std::collections::BTreeSet;
use std::sync::atomic::Ordering::Relaxed;

use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;
use loom::thread;

use crate::base::frame::Frame;
use crate::base::sync::CallOnce;
use crate::heap::free::free_owned_rare;
use crate::heap::queues::{drain_mailbox, push_front, unlink_full};
use crate::heap::remote::{
    self, notify_owner, Pushed, Take, ABANDONED, ARMED, IN_MAILBOX, NOTIFYING,
};
use crate::heap::reserve::reserve;
use crate::heap::this_thread;
use crate::heap::thread::abandon_span;
use crate::memory::cursor::Reservation;
use crate::memory::link::{read_link, write_link};
use crate::memory::pool;
use crate::memory::region::{self, Located};
use crate::memory::types::{HeapRecord, OwnedHeap, Span, Tally, NIL};

/// The size class of the models' spans: any, since a model gives its span
/// its slot size and count.
const CLASS: u8 = 0;

/// A heap and the one frame of the model's region: a span of 8-byte slots
/// and their memory.
struct Fixture {
    heap: Box<HeapRecord>,
    span: Span,
    memory: Box<[UnsafeCell<u64>]>,
    /// Times the span went back to the pool.
    releases: AtomicUsize,
    /// A heap that takes the frame from the pool once it is released.
    next_owner: Box<HeapRecord>,
}

// SAFETY: the model threads touch disjoint slots, and the span's shared
// state is atomic; the heap's owner-only state is touched by the model's
// owner thread alone, and its full queues under its lock.
unsafe impl Send for Fixture {}
// SAFETY: as above.
unsafe impl Sync for Fixture {}

impl Drop for Fixture {
    fn drop(&mut self) {
        region::model::uninstall();
    }
}

impl Fixture {
    /// A span of `slots` slots, all out, owned by the fixture's heap (on
    /// no queue, as its owner word says), installed as the model region's
    /// frame: for the models of the remote list alone.
    fn new(slots: u32) -> Arc<Fixture> {
        let mut heap = Box::new(HeapRecord::new(true));
        let owner: *mut HeapRecord = &mut *heap;
        let fixture = Arc::new(Fixture {
            heap,
            span: Span::for_model(owner, 8, slots),
            memory: (0..slots).map(|_| UnsafeCell::new(0)).collect(),
            releases: AtomicUsize::new(0),
            next_owner: Box::new(HeapRecord::new(true)),
        });
        // SAFETY: the span and memory stay in the `Arc` until the fixture
        // drops, which uninstalls them.
        unsafe { region::model::install(fixture.memory_base(), &fixture.span) };
        fixture
    }

    /// A span its owner parked full, made as the program makes one: a
    /// fresh span of `slots` slots at the front of the avail queue (what
    /// `new_span` does once it has the frame), then a refill that takes
    /// every slot (the real `reserve`), which parks it on the full queue,
    /// armed.
    fn parked(slots: u32) -> Arc<Fixture> {
        let fixture = Fixture::new(slots);
        let heap = fixture.owner_heap();
        // SAFETY: nobody else has the span yet.
        unsafe { fixture.span.assign(heap.as_ptr(), CLASS, 8, slots, 0) };
        // SAFETY: the model's thread owns the heap and the span, on no
        // queue, and holds no reference to their state.
        unsafe { push_front(heap.local(), Frame::FIRST) };
        assert_eq!(fixture.refill(slots).len(), slots as usize);
        assert!(fixture.span.owner().on_full_queue(), "parked full");
        assert!(remote::word(&fixture.span).has(ARMED), "armed");
        fixture
    }

    /// The fixture's heap, as its owner thread holds it: for the model's
    /// owner thread only.
    fn owner_heap(&self) -> OwnedHeap {
        let heap: *const HeapRecord = &*self.heap;
        // SAFETY: the heap outlives the model's threads (the fixture is
        // dropped after they are joined), and only the model's owner
        // thread calls the owner's functions with it.
        unsafe { this_thread::owned(heap.cast_mut()) }
    }

    /// The frame's memory, with provenance over every slot.
    fn memory_base(&self) -> *mut u8 {
        self.memory.as_ptr().cast_mut().cast()
    }

    fn slot(&self, index: u32) -> *mut u8 {
        assert!((index as usize) < self.memory.len(), "slot {index}");
        self.memory_base().wrapping_add(index as usize * 8)
    }

    /// The owner frees slot `index` of its span, which is on its full
    /// queue: what `free` does, case 2 (`free_owned_rare`, told the span
    /// is on the full queue).
    fn free_by_owner(&self, index: u32) {
        assert!(
            self.span.owner().on_full_queue(),
            "the models' owner frees only into a full span, which the fast free leaves out"
        );
        let at = Located {
            base: self.memory_base(),
            offset: index as usize * 8,
        };
        // SAFETY: the slot is out, the owner's to give up; the fixture's
        // heap owns the span, on its full queue, and is this thread's.
        unsafe { free_owned_rare(self.slot(index), 8, at, self.heap_ptr(), true) };
    }

    fn heap_ptr(&self) -> *mut HeapRecord {
        let heap: *const HeapRecord = &*self.heap;
        heap.cast_mut()
    }

    /// The owner's refill of up to `want` slots (the real `reserve`): the
    /// indices of the slots it hands out.
    fn refill(&self, want: u32) -> Vec<u32> {
        let reservation =
            reserve(self.owner_heap(), CLASS, want, Tally::Batch).expect("the span has slots");
        assert_eq!(reservation.frame, Frame::FIRST, "the model's one span");
        self.slots_of(&reservation)
    }

    /// The slots of a reservation: its list, then its fresh stretch.
    fn slots_of(&self, reservation: &Reservation) -> Vec<u32> {
        let mut slots = Vec::new();
        let mut offset = reservation.list_head;
        for _ in 0..reservation.list_len {
            slots.push(offset / 8);
            // SAFETY: a slot of the reservation, linked by the owner.
            offset = unsafe { read_link(self.slot(offset / 8), 0) };
        }
        slots.extend(
            (reservation.bump_start..reservation.bump_end)
                .step_by(8)
                .map(|offset| offset / 8),
        );
        assert_eq!(slots.len(), reservation.len as usize);
        slots
    }

    /// The owner's drain of its mailbox: the real `drain_mailbox`, which
    /// its refills, `trim` and its exit make first.
    fn drain(&self) {
        let heap = self.owner_heap();
        // SAFETY: the model's owner thread holds no other reference to the
        // heap's state.
        drain_mailbox(heap, unsafe { heap.local() });
    }

    /// What the owner's refill does with the head of its avail queue
    /// before it takes slots from it: the real `collect`, if frees wait.
    fn collect(&self) {
        assert!(
            !self.span.owner().on_full_queue(),
            "the owner collects only from its avail queue"
        );
        if remote::has_pending(&self.span) {
            remote::collect(Frame::FIRST, &self.span);
        }
    }

    /// The owner's exit, for the span: the real `abandon_span`, the steps
    /// `retire_span` takes before it releases the span (true: no slot is
    /// out, and the caller releases it).
    fn exit(&self) -> bool {
        abandon_span(Frame::FIRST, &self.span)
    }

    /// Whether the span waits in its owner's mailbox on the full queue with
    /// every slot out back on its list: what a note asks a sweep to take.
    fn emptied_in_mailbox(&self) -> bool {
        let word = remote::word(&self.span);
        word.has(IN_MAILBOX)
            && self.span.owner().on_full_queue()
            && word.count() == self.span.used()
    }

    /// What `release_frame` does to the span, then what `new_span` does
    /// when another thread takes the frame from the pool, and that thread
    /// handing out `reused` slots of it at once.
    fn release_and_reuse(&self, reused: u32) {
        self.releases.fetch_add(1, Relaxed);
        // SAFETY: the caller reclaimed the span, so it holds it alone; the
        // model's other threads only touch its atomics.
        unsafe {
            self.span.reset();
            let owner: *const HeapRecord = &*self.next_owner;
            self.span.assign(owner.cast_mut(), 0, 8, 64, 0);
        }
        self.span.set_used(reused);
    }

    /// A remote free of slot `index` pushed at once, as `remote::push_one`
    /// does it (an exiting thread's free, a box too short for a chain, the
    /// outbox's first free into an armed or abandoned span): a chain of
    /// one. Returns true if this free reclaimed the (abandoned) span.
    fn free_remotely(&self, index: u32) -> bool {
        let offset = index * 8;
        let owner = self.span.owner();
        // SAFETY: each thread frees its own slot once.
        let slot = self.slot(index);
        // SAFETY: the slot is this thread's to give.
        let link = |next| unsafe { write_link(slot, next, 0) };
        // SAFETY: each thread frees its own slot once.
        if !owner.is_none() && unsafe { remote::push_plain(&self.span, offset, link) } {
            return false;
        }
        // SAFETY: as above.
        let pushed = unsafe { remote::push_to_list(&self.span, offset, 1, link) };
        if pushed == Pushed::Notify {
            notify_owner(Frame::FIRST, &self.span);
        }
        // A reclaim would return the span to the region's pool; the models
        // count it instead.
        pushed == Pushed::Reclaim
    }

    /// Walks a taken remote list into slot indices.
    fn walk(&self, head: u32, n: u32, into: &mut BTreeSet<u32>) {
        if n == 0 {
            return;
        }
        let mut offset = head;
        for _ in 0..n {
            assert!(into.insert(offset / 8), "slot {} taken twice", offset / 8);
            // SAFETY: a slot on a taken list, linked by its freer.
            offset = unsafe { read_link(self.slot(offset / 8), 0) };
        }
        assert_eq!(offset, NIL, "a remote list ends in NIL");
    }
}

const PLAIN: Take = Take {
    from_mailbox: false,
    arm_if_empty: false,
};

#[test]
fn remote_frees_reach_the_owner_exactly_once() {
    loom::model(|| {
        let fixture = Fixture::new(2);
        let freers: Vec<_> = (0..2)
            .map(|i| {
                let fixture = fixture.clone();
                thread::spawn(move || assert!(!fixture.free_remotely(i)))
            })
            .collect();
        let mut taken = BTreeSet::new();
        let (head, n) = remote::take(&fixture.span, PLAIN);
        fixture.walk(head, n, &mut taken);
        for freer in freers {
            freer.join().unwrap();
        }
        let (head, n) = remote::take(&fixture.span, PLAIN);
        fixture.walk(head, n, &mut taken);
        assert_eq!(taken, BTreeSet::from([0, 1]));
    });
}

#[test]
fn an_abandoned_span_is_reclaimed_exactly_once() {
    loom::model(|| {
        let fixture = Fixture::new(2);
        let freers: Vec<_> = (0..2)
            .map(|i| {
                let fixture = fixture.clone();
                thread::spawn(move || fixture.free_remotely(i))
            })
            .collect();
        let mut reclaims = usize::from(fixture.exit());
        for freer in freers {
            reclaims += usize::from(freer.join().unwrap());
        }
        assert_eq!(reclaims, 1);
        let word = remote::word(&fixture.span);
        assert!(word.has(ABANDONED));
        assert_eq!(word.count(), 0, "no slot left out");
    });
}

/// Both slots of a span its owner parked full are freed on other threads
/// while the owner drains its mailbox: the first free into the armed
/// span notifies the owner, whose drains take the span off the full queue
/// and every slot back, once.
#[test]
fn a_full_span_notifies_its_owner_who_finds_every_free() {
    loom::model(|| {
        let fixture = Fixture::parked(2);
        let freers: Vec<_> = (0..2)
            .map(|i| {
                let fixture = fixture.clone();
                thread::spawn(move || assert!(!fixture.free_remotely(i)))
            })
            .collect();
        fixture.drain();
        for freer in freers {
            freer.join().unwrap();
        }
        fixture.drain();
        assert!(
            !fixture.span.owner().on_full_queue(),
            "the first remote free into an armed span notifies, and the drain unparks it"
        );
        fixture.collect();
        assert_eq!(fixture.span.used(), 0, "every slot back to the owner, once");
        assert!(!remote::word(&fixture.span).has(NOTIFYING));
    });
}

#[test]
fn an_exiting_owner_waits_out_a_notification() {
    loom::model(|| {
        let fixture = Fixture::new(1);
        assert!(remote::arm(&fixture.span));
        let freer = {
            let fixture = fixture.clone();
            thread::spawn(move || fixture.free_remotely(0))
        };
        // The owner exits while the free may be notifying it: disarming waits
        // until the mailbox push is done, so the heap outlives its use
        // (`abandon` aborts on a span a freer may still notify).
        let mut reclaims = usize::from(fixture.exit());
        assert!(
            !remote::word(&fixture.span).has(NOTIFYING),
            "the exit returns with no notification under way"
        );
        reclaims += usize::from(freer.join().unwrap());
        assert_eq!(reclaims, 1);
    });
}

/// The owner exits while the last slot of its span is freed on another
/// thread: whichever of them sees the span empty releases it, exactly once,
/// even when the release resets the span and the frame is reused at once.
#[test]
fn the_last_remote_free_racing_the_owner_exit_releases_once() {
    loom::model(|| {
        let fixture = Fixture::new(1);
        let freer = {
            let fixture = fixture.clone();
            thread::spawn(move || {
                if fixture.free_remotely(0) {
                    fixture.release_and_reuse(0);
                }
            })
        };
        if fixture.exit() {
            fixture.release_and_reuse(3);
        }
        freer.join().unwrap();
        assert_eq!(fixture.releases.load(Relaxed), 1, "released twice");
    });
}

/// Two remote frees of an abandoned span: the second one empties it and
/// releases it, and the frame is reused before the first one has finished.
/// The first must not take the reused span for its own to release.
#[test]
fn a_remote_free_does_not_release_a_span_reused_meanwhile() {
    loom::model(|| {
        let fixture = Fixture::new(2);
        assert!(!fixture.exit());
        let freers: Vec<_> = (0..2)
            .map(|i| {
                let fixture = fixture.clone();
                thread::spawn(move || {
                    if fixture.free_remotely(i) {
                        fixture.release_and_reuse(1);
                    }
                })
            })
            .collect();
        for freer in freers {
            freer.join().unwrap();
        }
        assert_eq!(fixture.releases.load(Relaxed), 1, "released twice");
    });
}

/// An outbox's chain of two slots is sent while the owner exits and a third
/// slot is freed on its own: `send` pushes the chain with one `push_chain`
/// of two, whose word step counts an abandoned span down by two. Exactly one of the
/// three threads releases the span, whatever the order.
#[test]
fn a_chain_sent_from_an_outbox_races_the_owner_exit() {
    loom::model(|| {
        let fixture = Fixture::new(3);
        let chain_sender = {
            let fixture = fixture.clone();
            thread::spawn(move || {
                // Posting links the chain head first, off the span: slot 1
                // links slot 0, the tail, whose link the send writes.
                // SAFETY: slots 0 and 1 are this thread's to give.
                unsafe { write_link(fixture.slot(1), 0, 0) };
                let tail = fixture.slot(0);
                // SAFETY: as above.
                let link_last = |next| unsafe { write_link(tail, next, 0) };
                // SAFETY: slots 0 and 1 are out and given up, chained 1 -> 0.
                let pushed = unsafe { remote::push_to_list(&fixture.span, 8, 2, link_last) };
                if pushed == Pushed::Notify {
                    notify_owner(Frame::FIRST, &fixture.span);
                }
                if pushed == Pushed::Reclaim {
                    fixture.release_and_reuse(1);
                }
            })
        };
        let single = {
            let fixture = fixture.clone();
            thread::spawn(move || {
                if fixture.free_remotely(2) {
                    fixture.release_and_reuse(1);
                }
            })
        };
        if fixture.exit() {
            fixture.release_and_reuse(1);
        }
        chain_sender.join().unwrap();
        single.join().unwrap();
        assert_eq!(
            fixture.releases.load(Relaxed),
            1,
            "released once, and only once"
        );
    });
}

/// A sweep of the fixture's heap: the real `sweep_heap`, after the note is
/// taken as a sweep takes it, with the fixture's span for its one frame.
/// Its release runs the real `unlink_full` and counts the release where
/// the program gives the frame to the pool, once it has checked what
/// `release_frame` asks: no slot out on the list, off the mailbox, and no
/// freer notifying (which would touch the word of a frame reused
/// meanwhile). Returns whether it released the span.
fn sweep(fixture: &Fixture) -> bool {
    pool::take_mail_note();
    let before = fixture.releases.load(Relaxed);
    crate::heap::sweep::sweep_heap(
        &fixture.heap,
        false,
        |frame| {
            assert_eq!(frame, Frame::FIRST, "the span's frame");
            &fixture.span
        },
        |full, frame| {
            let word = remote::word(&fixture.span);
            assert!(
                word.count() == 0 && !word.has(IN_MAILBOX | NOTIFYING),
                "a span released with its list, in the mailbox or while notified: {word:?}"
            );
            // SAFETY: `sweep_heap` releases a span on the full queue `full`
            // holds.
            unsafe { unlink_full(full, frame) };
            fixture.releases.fetch_add(1, Relaxed);
        },
    );
    fixture.releases.load(Relaxed) != before
}

/// A span parked full with two slots out, both freed on other threads
/// (the first free notifies the owner) while a sweep runs and the owner
/// drains its mailbox: the sweep releases the span whole and the owner
/// finds none of it, or every slot reaches the owner exactly once; a span
/// the sweep left emptied in the mailbox has a note for the next sweep.
#[test]
fn a_sweep_and_the_owner_take_an_emptied_span_exactly_once() {
    loom::model(|| {
        pool::take_mail_note();
        let fixture = Fixture::parked(2);
        let freers: Vec<_> = (0..2)
            .map(|i| {
                let fixture = fixture.clone();
                thread::spawn(move || assert!(!fixture.free_remotely(i)))
            })
            .collect();
        let sweeper = {
            let fixture = fixture.clone();
            thread::spawn(move || sweep(&fixture))
        };
        fixture.drain();
        for freer in freers {
            freer.join().unwrap();
        }
        let released = sweeper.join().unwrap();
        let word = remote::word(&fixture.span);
        assert!(!word.has(NOTIFYING), "no notification outlives the frees");
        if released {
            assert_eq!(
                fixture.span.used(),
                2,
                "the owner took slots of a released span"
            );
            assert_eq!(fixture.heap.mailbox.take_all(), 0, "released, yet mailed");
            assert_eq!(word.count(), 0);
            assert!(!word.has(IN_MAILBOX));
            return;
        }
        if fixture.emptied_in_mailbox() {
            assert!(
                pool::mail_noted(),
                "an emptied span waits in the mailbox with no note for a sweep: {word:?}"
            );
        }
        // What the owner's next refill takes: its mailbox, then the span's
        // list.
        fixture.drain();
        fixture.collect();
        assert_eq!(fixture.span.used(), 0, "every slot back to the owner, once");
        assert_eq!(fixture.releases.load(Relaxed), 0);
    });
}

/// The owner frees its own slot of its full span (which moves it to the
/// avail queue) while another thread frees the other slot and a sweep
/// runs: the sweep never releases a span with a slot out, nor one the
/// owner took back to its avail queue.
#[test]
fn a_sweep_never_takes_a_span_its_owner_still_uses() {
    loom::model(|| {
        pool::take_mail_note();
        let fixture = Fixture::parked(2);
        let freer = {
            let fixture = fixture.clone();
            thread::spawn(move || assert!(!fixture.free_remotely(0)))
        };
        let sweeper = {
            let fixture = fixture.clone();
            thread::spawn(move || sweep(&fixture))
        };
        fixture.free_by_owner(1);
        freer.join().unwrap();
        assert!(
            !sweeper.join().unwrap(),
            "a span with a slot out was released"
        );
        assert_eq!(fixture.releases.load(Relaxed), 0);
        fixture.drain();
        fixture.collect();
        assert_eq!(fixture.span.used(), 0, "every slot back to the owner, once");
    });
}

/// The owner frees its own slot of its full span while another thread's
/// free of the other slot is notifying it; the owner refills from the span
/// (taking back the slot that free pushed, if it has) and parks it full
/// again, still in the mailbox and not armed, and hands its slots to a
/// thread that frees them while the notification may still be under way.
/// A span left in the mailbox on the full queue with every slot back has
/// a note, and the sweep it asks for takes the span. (With `used` read
/// before the notifier's mailbox push, loom found the read between the
/// owner's free and its refill: the notifier then compared the count of
/// the two slots freed later with the one slot out at its read, and the
/// span stayed in the mailbox emptied with no note.)
#[test]
fn a_span_its_owner_refilled_while_notified_gets_its_note() {
    loom::model(|| {
        pool::take_mail_note();
        let fixture = Fixture::parked(2);
        let notifier = {
            let fixture = fixture.clone();
            thread::spawn(move || assert!(!fixture.free_remotely(0)))
        };
        fixture.free_by_owner(1);
        let handed_out = fixture.refill(2);
        let freer = {
            let fixture = fixture.clone();
            thread::spawn(move || {
                for slot in handed_out {
                    assert!(!fixture.free_remotely(slot));
                }
            })
        };
        notifier.join().unwrap();
        freer.join().unwrap();
        if fixture.emptied_in_mailbox() {
            let word = remote::word(&fixture.span);
            assert!(
                pool::mail_noted(),
                "an emptied span waits in the mailbox with no note for a sweep: {word:?}"
            );
            assert!(sweep(&fixture), "the sweep takes the emptied span");
        }
    });
}

/// A span parked full whose two slots another thread freed: it waits in
/// the mailbox emptied, with its note, for a sweep.
fn emptied_and_noted() -> Arc<Fixture> {
    pool::take_mail_note();
    let fixture = Fixture::parked(2);
    let freer = {
        let fixture = fixture.clone();
        thread::spawn(move || {
            for slot in 0..2 {
                assert!(!fixture.free_remotely(slot));
            }
        })
    };
    freer.join().unwrap();
    assert!(fixture.emptied_in_mailbox() && pool::mail_noted());
    fixture
}

/// A sweep runs while the owner holds its heap's lock for a step of its
/// own (a span of another class parked, say: the real `lock_full`, and
/// the real unlock when it lets go), and the owner then goes idle: if the
/// sweep found the lock taken and left the mailbox, a note stands for a
/// later sweep, which takes the emptied span.
#[test]
fn a_sweep_that_finds_the_owner_at_work_leaves_the_span_noted() {
    loom::model(|| {
        let fixture = emptied_and_noted();
        let sweeper = {
            let fixture = fixture.clone();
            thread::spawn(move || sweep(&fixture))
        };
        drop(fixture.heap.lock_full());
        if !sweeper.join().unwrap() {
            assert!(
                pool::mail_noted(),
                "the emptied span waits in an idle owner's mailbox with no note"
            );
            assert!(sweep(&fixture), "the later sweep takes the emptied span");
        }
    });
}

/// `trim`'s sweep, which tries a heap's lock again and again, runs while
/// the owner holds it: the sweep looks at the mailbox's spans only once the
/// owner has let go, or not at all.
#[test]
fn a_patient_sweep_waits_for_the_owner_to_let_go() {
    loom::model(|| {
        let fixture = emptied_and_noted();
        let held = Arc::new(loom::sync::atomic::AtomicBool::new(false));
        let sweeper = {
            let (fixture, held) = (fixture.clone(), held.clone());
            thread::spawn(move || {
                pool::take_mail_note();
                crate::heap::sweep::sweep_heap(
                    &fixture.heap,
                    true,
                    |_| {
                        assert!(
                            !held.load(Relaxed),
                            "a sweep holds the heap's lock with its owner"
                        );
                        &fixture.span
                    },
                    |full, frame| {
                        // SAFETY: as in `sweep`.
                        unsafe { unlink_full(full, frame) };
                    },
                );
            })
        };
        let full = fixture.heap.lock_full();
        held.store(true, Relaxed);
        thread::yield_now();
        held.store(false, Relaxed);
        drop(full);
        sweeper.join().unwrap();
    });
}

/// A heap whose lock is never let go (in a forked child, the thread that
/// held it at the fork does not exist): a sweep leaves its mailbox, and
/// makes no note for it, so that sweeps do not come back to it at every
/// event past the delay, forever.
#[test]
fn a_sweep_makes_no_note_for_a_lock_never_let_go() {
    loom::model(|| {
        let fixture = emptied_and_noted();
        core::mem::forget(fixture.heap.lock_full());
        assert!(!sweep(&fixture), "a sweep took a span from a locked heap");
        assert!(
            !pool::mail_noted(),
            "a note for a lock that is never let go"
        );
    });
}

/// Two threads of a process call a `CallOnce`, fresh (`under_way_in` is
/// `None`) or left under way by a process this one was forked from (of
/// the fork generation `under_way_in` names): the function is called once,
/// and both callers return seeing what it wrote.
fn call_once_model(under_way_in: Option<u32>) {
    const THIS_GENERATION: u32 = 2;
    struct Shared {
        once: CallOnce<loom::sync::atomic::AtomicU64>,
        calls: AtomicUsize,
        written: loom::cell::UnsafeCell<u64>,
    }
    loom::model(move || {
        let shared = Arc::new(Shared {
            once: CallOnce::for_model(under_way_in),
            calls: AtomicUsize::new(0),
            written: loom::cell::UnsafeCell::new(0),
        });
        let call = |shared: &Shared| {
            shared.once.call_in(THIS_GENERATION, || {
                shared.calls.fetch_add(1, Relaxed);
                // SAFETY: only the call writes it, and only once.
                shared.written.with_mut(|w| unsafe { *w = 42 });
            });
            // SAFETY: written before the call was marked done, which this
            // caller saw (loom reports the race if the ordering is wrong).
            let seen = shared.written.with(|w| unsafe { *w });
            assert_eq!(seen, 42, "a caller returned before the call was done");
        };
        let other = {
            let shared = shared.clone();
            thread::spawn(move || call(&shared))
        };
        call(&shared);
        other.join().unwrap();
        assert_eq!(shared.calls.load(Relaxed), 1, "the function ran once");
    });
}

#[test]
fn a_call_once_calls_once_and_its_callers_see_it_done() {
    call_once_model(None);
}

#[test]
fn a_forked_child_takes_over_a_call_its_parent_had_under_way() {
    call_once_model(Some(1));
}
