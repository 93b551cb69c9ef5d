//! The runtime of [batch-alloc]: spans of individually freeable slots behind a
//! global-allocator wrapper. Use it through the `batch-alloc` crate.
//!
//! # Glossary
//!
//! One word, one meaning: each word below means only what it says here, in
//! the code, its comments and these docs. Where a word has another sense
//! as well, the other sense is named otherwise, as mimalloc writes "OS
//! page" for the system's pages and plain "page" for its own; each entry
//! says which.
//!
//! - **region**: the one range of address space the runtime maps at first
//!   use. A pointer is a slot exactly when it lies inside it, which
//!   `dealloc` checks with one comparison before reading anything else.
//!   (The region is *mapped*: "reserve" is a refill's word.)
//! - **page**: 8 KiB, the unit span sizes are counted in
//!   (`testing::limits::PAGE_SIZE`). The operating system's page, read at
//!   run time, is always "the system's page".
//! - **frame**: the region is cut into frames of 64 KiB (8 pages). Each
//!   frame's metadata lives in an array beside the frames, not in it.
//! - **span**: a frame assigned to one size class and one owner heap, cut
//!   into equal slots from its first byte.
//! - **slot**: room for one allocation in a span. Handed out, a slot is
//!   freed by the global allocator's `dealloc` like any block, on any
//!   thread.
//! - **size class**: one of the slot sizes (8 B to 4 KiB); listed by
//!   `testing::size_classes()`.
//! - **large block**: an allocation a scope serves past the classes, as an
//!   **extent**: contiguous whole frames.
//! - **run**: slots of one size class ready to hand out, walked by a
//!   **cursor** (`memory/cursor.rs`): first a **stretch** of fresh slots,
//!   bumped through, then a list of recycled ones. A heap keeps one run per
//!   class, which its scopes allocate from; a batch is a run of its own. Only
//!   this: the one-time initialisations are calls (`CallOnce`), an
//!   extent's frames are contiguous, not a run.
//! - **reserve**, **reservation**: one refill of a run, the call that hands
//!   it up to the slots it asked for, or the rest of the span when little
//!   would remain ([`Stats::reserve_calls`] counts them). Only this: the
//!   region's address space is mapped.
//! - **scope**: while one is open on a thread, every allocation there that
//!   the runtime can serve comes from the thread's runs (or is a large
//!   block). It is opened by a **guard** (`Guard`, the one guard type):
//!   the one [`scope`] holds, the one an annotated function's body starts
//!   with, the one each poll of an annotated `async fn` holds; the guards
//!   entered inside it join it, and the guard that opened it closes it.
//!   Only this: there is no "batch scope".
//! - **batch**: a [`Batch<T>`](Batch), a run of `T`'s class of its own, its
//!   first refill the capacity the caller gives it. *Batched* means handed
//!   out by a batch ([`Stats::batched_boxes`]). Only this: a slot is not a
//!   "batch slot", and what no class serves is not "unbatched" but plain.
//! - **heap**: a thread's owner state: its runs, queues of spans by class,
//!   a mailbox, an outbox, counters, in a **heap record** that outlives the
//!   thread.
//! - **owner**: the heap that holds a span, and its thread, which frees
//!   into the span's own free list with no atomic instruction. Owner-only
//!   code takes an `OwnedHeap` (`memory/types.rs`), a handle of the
//!   thread's own heap that is neither `Send` nor `Sync` and is made only
//!   where the thread finds or makes its heap, so a path that runs on
//!   another thread cannot call it.
//! - **remote free**: a free on any other thread. The freeing thread chains
//!   its frees per span in its **outbox** and pushes each **chain** onto
//!   the span's remote list with one compare-and-swap (a thread that has no
//!   heap gets one at its first remote free; only an exiting thread pushes
//!   each free); the owner takes the list back in one exchange. Where a
//!   freed slot goes is decided in one place, `free` (`heap/free.rs`); the
//!   protocol, from the push to the owner's merge, is `heap/remote.rs`.
//! - **armed**: a span parked on its owner's full queue, whose next remote
//!   free puts it in the owner's **mailbox**. The full queues, the spans
//!   on them and the mailbox's drain are under the heap's **lock**
//!   (`HeapRecord::full_lock`), which the owner's fast paths never take.
//! - **sweep**: another thread taking the spans that other threads' frees
//!   emptied out of a heap's mailbox, to the pool, when the heap's owner
//!   has not taken them back (it makes no refill: it waits, or allocates
//!   outside scopes); see `heap/sweep.rs`.
//! - **abandoned span**: a span whose owner thread exited while slots of
//!   it were out. Frees still work; the last one returns the span to the
//!   pool.
//! - **pool**: empty frames shared by all threads; past a limit (32 MiB)
//!   they decay: a frame that has waited a second unused goes back to the
//!   operating system at the runtime's next refill, large block or frame
//!   given back (see [`trim`]). Spans emptied by other threads' frees
//!   come to it from their owner, or from a sweep.
//!
//! # The life of a box
//!
//! One `Box::new` in an annotated function, followed from the attribute to
//! a frame of the region and back. The layers, in the comment below the
//! docs, run bottom-up (each folder uses only the folders below it); this
//! section is the top-down reading order.
//!
//! Each step names each function with its file after it, in parentheses,
//! as in `locate` (`memory/region.rs`): a path that starts with one of the
//! runtime's folders, `base/`, `memory/`, `heap/` or `front/`, is in
//! `rt/src/`; any other starts at the workspace root, where `src/` is the
//! facade and `macros/src/` the attribute. `Type::method` is a method.
//! `rt/tests/not_installed/sources/life_of_a_box.rs` checks that each
//! function named so is defined in its file.
//!
//! ## Allocation
//!
//! 1. The attribute puts a guard in front of the function's body —
//!    `rewrite_fn` (`macros/src/expand.rs`), `open_in_front`
//!    (`macros/src/guard.rs`): `Guard::new` (`front/expansion.rs`), then
//!    `enter_guard` (`front/expansion.rs`). The body stays as written. (An
//!    `async fn` becomes one future whose every poll does the same —
//!    `scoped_async_fn` (`macros/src/future.rs`), `scoped_future`
//!    (`front/expansion.rs`).) The facade's `batch_alloc::__private`, the
//!    paths the attribute writes, is this crate's.
//! 2. The guard joins the thread's open scope, or opens one. With a scope
//!    open, `Guard::enter` (`front/expansion.rs`) learns so from
//!    `scope_would_join` (`front/scope.rs`) and the body just runs.
//!    Otherwise, out of line — `Guard::open` (`front/expansion.rs`),
//!    `open_scope_out_of_line` (`front/scope.rs`), `open_scope`
//!    (`front/scope.rs`). The scope is one thread-local word, a
//!    `ScopeState` — `scope_state` (`heap/this_thread.rs`),
//!    `set_scope_state` (`heap/this_thread.rs`). The guard that opened it
//!    closes it when it drops — `close` (`front/scope.rs`). The runs stay
//!    with the heap.
//! 3. The thread's first scope finds its heap — `open_first_scope`
//!    (`front/scope.rs`), `first_scope` (`front/scope.rs`),
//!    `current_or_init` (`heap/thread.rs`), `init_current`
//!    (`heap/thread.rs`). Making the heap arms its retirement —
//!    `arm_retirement` (`heap/thread.rs`) — and claims a record —
//!    `claim_record` (`memory/record.rs`). The scope word then names it —
//!    `ScopeState::ready` (`heap/this_thread.rs`).
//! 4. `Box::new` in the body reaches the global allocator, which, with a
//!    scope open, takes a slot from the run of the layout's size class —
//!    `BatchAlloc::alloc` (`front/global.rs`), `alloc_scoped`
//!    (`front/global.rs`), `bump_scoped` (`heap/runs.rs`), `take`
//!    (`heap/runs.rs`). A fresh slot is a pointer bump, a recycled one a
//!    list pop, both by the run's cursor, as in a `Batch` — `Cursor::take`
//!    (`memory/cursor.rs`). So does every other small allocation while the
//!    scope is open (strings, vectors, library code). Rare layouts go out
//!    of line — `alloc_scoped_slow` (`front/global.rs`), `scope_block`
//!    (`front/global.rs`), `class_of_layout` (`heap/runs.rs`). With no
//!    scope open, the inner allocator serves it.
//! 5. A used-up run refills — `next_slot` (`heap/runs.rs`), `refill`
//!    (`heap/runs.rs`), `reserve` (`heap/reserve.rs`). The common refill
//!    bumps the head span of the class's avail queue —
//!    `reserve_fresh_stretch` (`heap/reserve.rs`). Every other takes the
//!    slow road — `reserve_slow` (`heap/reserve.rs`): it sends the outbox
//!    (step 11), drains the mailbox (step 13), then takes recycled slots
//!    first, fresh ones after — `take_slots` (`heap/reserve.rs`). A span
//!    with nothing left moves to the full queue, armed, under the heap's
//!    lock, which a sweep (step 15) may hold — `park_full`
//!    (`heap/reserve.rs`), `HeapRecord::lock_full` (`memory/types.rs`),
//!    `arm` (`heap/remote.rs`), `park` (`heap/queues.rs`).
//! 6. With no span left in the class, a new one — `new_span`
//!    (`heap/reserve.rs`). Its frame comes from the pool — `acquire_frame`
//!    (`memory/pool.rs`), `pop_empty_frame` (`memory/pool.rs`) — or from
//!    past the region's high-water mark — `fresh_frames`
//!    (`memory/region.rs`). The region's address space is mapped at first
//!    use — `ensure_ready` (`memory/region.rs`), `map_address_space`
//!    (`memory/region.rs`). The frame becomes a span of the class, owned by
//!    this heap — `Span::assign` (`memory/types.rs`), `push_front`
//!    (`heap/queues.rs`).
//!
//! ## Local free
//!
//! 7. Dropping the box reaches the wrapper, which tells a slot from any
//!    other pointer with one range check — `BatchAlloc::dealloc`
//!    (`front/global.rs`), `locate` (`memory/region.rs`). Other pointers go
//!    to the inner allocator.
//! 8. One function decides where the slot goes, from whose the span is,
//!    seen from this thread's heap, in one word — `free` (`heap/free.rs`),
//!    `owner_xor` (`memory/types.rs`). On the owner thread the slot goes
//!    onto its span's own free list, with no atomic instruction, inline. A
//!    span on the full queue, or a box smaller than a link, goes out of
//!    line — `elsewhere` (`heap/free.rs`), `free_owned_rare`
//!    (`heap/free.rs`) — and the span goes back to the avail queue —
//!    `after_local_free` (`heap/queues.rs`).
//! 9. The span's last slot out comes back — `last_slot_freed`
//!    (`heap/free.rs`), `after_local_free` (`heap/queues.rs`),
//!    `span_emptied` (`heap/queues.rs`). The head of the avail queue starts
//!    over with one fresh stretch — `SpanLocal::restart`
//!    (`memory/types.rs`). Any other empty span goes back to the pool —
//!    `release_if_idle` (`heap/queues.rs`), `unlink` (`heap/queues.rs`),
//!    `release_frame` (`memory/pool.rs`).
//! 10. A later refill hands the freed slots out again, before fresh ones —
//!     `take_slots` (`heap/reserve.rs`).
//!
//! ## Remote free
//!
//! 11. On any other thread the same decision sends the free to that
//!     thread's outbox, which chains frees per span through their links,
//!     with no atomic instruction — `elsewhere` (`heap/free.rs`), `post`
//!     (`heap/outbox.rs`). A span's first free starts its chain —
//!     `start_chain` (`heap/outbox.rs`), `take_entry` (`heap/outbox.rs`). A
//!     thread with no heap gets one at its first such free —
//!     `free_without_heap` (`heap/free.rs`), `init_in_dealloc`
//!     (`heap/thread.rs`).
//! 12. A chain goes to its span's remote list with one compare-and-swap —
//!     `send` (`heap/outbox.rs`), `push_chain` (`heap/remote.rs`),
//!     `push_to_list` (`heap/remote.rs`): when it is full, when another
//!     span needs its outbox entry, and when the thread refills, reads
//!     `stats()`, calls `trim()` or exits — `send_all` (`heap/outbox.rs`).
//!     A span that is armed or abandoned gets each free at once —
//!     `push_one` (`heap/remote.rs`), `push_plain` (`heap/remote.rs`),
//!     `push_one_notified` (`heap/remote.rs`). A push into an armed span
//!     (one parked full, step 5) puts the span in its owner's mailbox —
//!     `finish_push` (`heap/remote.rs`), `notify_owner` (`heap/remote.rs`),
//!     `IndexStack::push` (`base/sync.rs`). Otherwise the slots wait on the
//!     remote list.
//!
//! ## Return to the owner
//!
//! 13. The owner takes the slots back at its next refill — `reserve_slow`
//!     (`heap/reserve.rs`). It empties its mailbox — `drain_mailbox`
//!     (`heap/queues.rs`), `drain_mailbox_slow` (`heap/queues.rs`),
//!     `take_mailbox` (`heap/remote.rs`): for each span — `Mailed::next`
//!     (`heap/remote.rs`) — it waits out a notifier — `take_mailed`
//!     (`heap/remote.rs`), `quiesce` (`heap/remote.rs`) — takes the remote
//!     list in one exchange — `take` (`heap/remote.rs`) — splices it onto
//!     the span's free list — `merge` (`heap/remote.rs`) — and moves the
//!     span back to the avail queue — `unpark` (`heap/queues.rs`). It holds
//!     its heap's lock meanwhile, as a sweep does.
//! 14. A span already on the avail queue is collected when a refill looks
//!     at it — `collect` (`heap/remote.rs`), `take` (`heap/remote.rs`),
//!     `merge` (`heap/remote.rs`). Its slots go out again — `take_slots`
//!     (`heap/reserve.rs`). `trim()` collects at once — `trim_current`
//!     (`heap/thread.rs`), `release_empty_spans` (`heap/queues.rs`).
//! 15. An owner that makes no refill (it waits, or allocates only outside
//!     scopes) leaves the spans other threads emptied in its mailbox; a
//!     sweep on another thread takes them. The push that leaves a span in
//!     the mailbox with every slot back notes it — `emptied_in_mailbox`
//!     (`heap/remote.rs`), `notify_owner` (`heap/remote.rs`),
//!     `note_emptied_in_mailbox` (`memory/pool.rs`). The runtime's next
//!     events, on any thread, see the note, and the first past a delay
//!     sweeps — `at_event` (`heap/sweep.rs`), `decay_if_due`
//!     (`memory/pool.rs`), `sweep_due` (`heap/sweep.rs`). Holding each
//!     other heap's lock in turn, it takes an emptied span on the full
//!     queue off it, to the pool — `sweep_heap` (`heap/sweep.rs`),
//!     `take_emptied` (`heap/remote.rs`), `unlink_full` (`heap/queues.rs`),
//!     `release_frame` (`memory/pool.rs`) — and puts the other spans back
//!     in the mailbox for their owner. A heap whose lock is taken is left
//!     to its owner, the lock marked, and the owner, letting it go, notes
//!     the sweep's work for a later one — `try_lock_or_mark`
//!     (`base/sync.rs`), `unlock` (`base/sync.rs`), and the `Drop` of
//!     `FullQueues` in `heap/sweep.rs`. `trim()` sweeps at once, on any
//!     thread — `sweep_now` (`heap/sweep.rs`).
//!
//! ## Thread exit
//!
//! 16. The heap retires from a thread-exit key destructor, armed when the
//!     heap was made (step 3) — `retire_at_exit` (`heap/thread.rs`),
//!     `retire_current` (`heap/thread.rs`). Scopes stop opening on the
//!     thread. The outbox is sent — `send_all` (`heap/outbox.rs`); the
//!     runs' unused slots go back — `give_back_runs` (`heap/queues.rs`),
//!     `give_back` (`heap/queues.rs`); the mailbox is drained —
//!     `drain_mailbox` (`heap/queues.rs`).
//! 17. Each span is released if nothing is out of it, else abandoned —
//!     `retire_span` (`heap/thread.rs`), `disarm` (`heap/remote.rs`),
//!     `abandon` (`heap/remote.rs`), `release_frame` (`memory/pool.rs`).
//!     The heap record goes back for a later thread —
//!     `HeapRecord::hand_back` (`memory/types.rs`).
//! 18. Frees into an abandoned span still work, from any thread: each
//!     counts the span's remote word down — `free_pushed` (`heap/free.rs`),
//!     `push_chain` (`heap/remote.rs`). The exiting thread makes no new
//!     heap; its own later frees skip the outbox — `free_without_heap`
//!     (`heap/free.rs`).
//! 19. The last free returns the span to the pool — `finish_push`
//!     (`heap/remote.rs`), `release_frame` (`memory/pool.rs`),
//!     `pool_empty_frame` (`memory/pool.rs`). Past the pool's limit a frame
//!     left unused decays to the OS at a later event — `decay_if_due`
//!     (`memory/pool.rs`), `decay` (`memory/pool.rs`), `decay_frames`
//!     (`memory/pool.rs`).
//!
//! [batch-alloc]: https://docs.rs/batch-alloc

// The layers, bottom-up, a folder each, as snmalloc lays out its own: a
// module uses only the modules of its own folder and of the folders above
// it in this list, and no two modules of a folder use each other, through
// any chain (rt/tests/not_installed/sources/layers.rs checks both).
//
// 1. base/    constants (config), the size classes (class), frame numbers
//             (frame), the OS, one module per platform (os/), the abort path
//             (fatal), atomics, the spin lock, one-time calls, the index
//             stack (sync), the locks in their order across a fork (locks),
//             the no-unwind marker (no_unwind)
// 2. memory/  the walk through a reservation's slots (cursor), the shared
//             structures: spans, heap records, runs, outbox entries
//             (types), free-list links and their hardening (link), address
//             space and frames (region), empty frames and extents (pool),
//             large blocks (large), the registry of heap records (record)
// 3. heap/    this thread's heap and scope state (this_thread), the remote
//             free's protocol on a span's word (remote), class queues and
//             slots coming back or given back (queues), remote frees chained
//             and sent (outbox), a heap's life: made, trimmed, forked,
//             retired (thread), refills (reserve), where a freed slot goes
//             (free), the runs scopes and batches allocate from (runs),
//             sweeps of the spans idle owners' mailboxes hold emptied
//             (sweep)
// 4. front/   whether BatchAlloc is installed (probe), the environment
//             (settings), the allocator wrapper (global), statistics
//             (stats), batches (batch), scopes (scope), the per-site report
//             (report), what #[batch_alloc]'s code calls and scope()
//             (expansion), the wrapper for the no-unwind proof
//             (no_panic_proof)
mod base;
mod front;
mod heap;
mod memory;

pub use front::batch::Batch;
pub use front::expansion::scope;
pub use front::global::BatchAlloc;
pub use front::probe::is_active;
pub use front::report::report;
pub use front::stats::{stats, Stats};
pub use heap::thread::trim;

/// Not public API: what the code `#[batch_alloc]` generates names, and
/// nothing else. The facade re-exports this module as
/// `batch_alloc::__private`, the paths the attribute writes
/// (`macros/src/runtime.rs`, `guard.rs`, `future.rs`).
#[doc(hidden)]
pub mod __private {
    pub use crate::front::expansion::{enter_guard, scoped_future, Guard};
    pub use crate::front::report::{Site, SiteKind};
    pub use core::future::Future;
}

/// Not public API: what this crate's tests, the workspace's tests and the
/// policy study reach inside the runtime, and the tunables the runtime is
/// built with (its size classes and limits), which no user needs.
#[doc(hidden)]
pub mod testing {
    pub use crate::base::class::SizeClass;
    pub use crate::front::expansion::Guard;
    pub use crate::front::scope::{box_in_scope, scope_on_this_thread, ScopedFuture};
    pub use crate::front::settings::{settings, Settings};

    /// The size classes batches serve, smallest first.
    pub fn size_classes() -> &'static [SizeClass] {
        &crate::base::class::CLASSES
    }

    /// Constants the allocator is built with.
    pub mod limits {
        pub use crate::base::config::{
            FRAME_SIZE, MAX_SMALL_SIZE, MIN_SPAN_PAGES, PAGE_SIZE, REGION_BYTES,
        };

        /// Bytes of span metadata per frame, kept beside the frames.
        pub const SPAN_METADATA_BYTES: usize = size_of::<crate::memory::types::Span>();

        /// The largest allocation a scope serves, past the size
        /// classes as a large block of whole frames (aligned up to a frame);
        /// larger ones go to the inner allocator. So do those between the
        /// classes and this that whole frames would fit badly: a block is
        /// served as frames when rounding it up to them wastes at most an
        /// eighth of it (from 56.9 KiB to 64 KiB, from 113.8 KiB to 128 KiB,
        /// and everything from 448 KiB on).
        pub const MAX_LARGE_SIZE: usize = crate::memory::large::LARGE_MAX;
    }

    /// The no-unwind proof's instantiation (`no_panic_proof.rs`).
    #[cfg(batch_alloc_no_panic)]
    pub mod no_panic_proof {
        pub use crate::front::no_panic_proof::{alloc, alloc_zeroed, dealloc, realloc};
    }

    /// The size classes without the rule that grows each class to fill its
    /// span, for comparing the two tables (the policy study's
    /// `--cfg batch_alloc_policy_study`).
    #[cfg(batch_alloc_policy_study)]
    pub fn size_classes_before_growth() -> Vec<SizeClass> {
        let table = crate::base::class::build_table(false);
        table.classes[..table.len].to_vec()
    }

    /// For each class of [`size_classes`], in order,
    /// the candidate size it was made from before the growth rule (the
    /// policy study's `--cfg batch_alloc_policy_study`).
    #[cfg(batch_alloc_policy_study)]
    pub fn class_candidates() -> Vec<u32> {
        crate::base::class::CANDIDATE_OF.to_vec()
    }

    #[cfg(batch_alloc_policy_study)]
    pub use crate::heap::reserve::set_exact_refills;
}

#[cfg(all(test, loom))]
mod loom_model;

#[cfg(all(test, not(loom)))]
mod alloc_model;

#[cfg(test)]
#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();
