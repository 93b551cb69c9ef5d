// The cases of the differential test (see `mod.rs`), included in both
// copies after the corpus, unannotated: each calls its own copy's
// functions and logs what it gets back. Calls are on the same lines of
// this file in both, so `Location::caller()` names the same place.

pub fn cases() -> Vec<crate::support::Case> {
    use std::pin::pin;
    use std::task::Context;

    use crate::support::{block_on, finish, noop_waker};

    vec![
        (
            "several_params",
            Box::new(|| {
                let n = several_params(D("a"), D("b"), D("c"));
                event(format!("-> {n}"));
            }),
        ),
        ("uses_in_order", Box::new(|| uses_in_order(D("a"), D("b")))),
        (
            "unused_params",
            Box::new(|| unused_params(D("a"), D("b"), D("c"), D("d"))),
        ),
        (
            "pattern_params",
            Box::new(|| {
                let n = pattern_params(
                    (D("x"), D("y")),
                    [D("first"), D("second"), D("third")],
                    D("under"),
                    D("z"),
                );
                event(format!("-> {n}"));
            }),
        ),
        (
            "partial_pattern",
            Box::new(|| partial_pattern(D("a"), (D("x"), D("w")), D("z"))),
        ),
        (
            "ref_and_mut_params",
            Box::new(|| {
                let n = ref_and_mut_params(D("r"), vec![D("m0")], D("b"));
                event(format!("-> {n}"));
            }),
        ),
        (
            "tail_temporary",
            Box::new(|| {
                let n = tail_temporary(D("a"));
                event(format!("-> {n}"));
            }),
        ),
        (
            "early_return",
            Box::new(|| {
                event(early_return(D("a"), D("b"), true));
                event(early_return(D("a"), D("b"), false));
            }),
        ),
        (
            "question",
            Box::new(|| {
                for text in ["21", "0", "x"] {
                    match question(text, D("q")) {
                        Ok(n) => event(format!("ok {n}")),
                        Err(e) => event(format!("err {e}")),
                    }
                }
            }),
        ),
        (
            "coerce",
            Box::new(|| {
                for pick in 0..3 {
                    let shape = coerce(pick);
                    event(format!("area {}", shape.area()));
                }
            }),
        ),
        (
            "coerce_tail",
            Box::new(|| {
                event(format!(
                    "{} {}",
                    coerce_tail(true)(5),
                    coerce_tail(false)(5)
                ));
            }),
        ),
        (
            "impl_trait_return",
            Box::new(|| {
                let it = impl_trait_return(4, D("tag"));
                event(format!("{it:?}"));
                event(format!("{}", it.sum::<u64>()));
            }),
        ),
        (
            "impl_trait_args",
            Box::new(|| {
                let n = impl_trait_args(vec![D("i0"), D("i1")], D("last"));
                event(format!("-> {n}"));
            }),
        ),
        (
            "generic",
            Box::new(|| {
                let out: [u8; 3] = generic(4u8, D("g"));
                event(format!("{out:?}"));
                let out = generic::<&str, 2>("s", D("g2"));
                event(format!("{out:?}"));
            }),
        ),
        (
            "only_in_return",
            Box::new(|| {
                let out: Vec<u8> = only_in_return(D("o"));
                event(format!("{out:?}"));
            }),
        ),
        ("never", Box::new(|| never(D("a"), "stop"))),
        (
            "labels_and_loops",
            Box::new(|| {
                let n = labels_and_loops(10, D("l"));
                event(format!("-> {n}"));
            }),
        ),
        (
            "unsafe_read",
            Box::new(|| {
                let value = 41u64;
                // SAFETY: `value` is a live u64.
                let n = unsafe { unsafe_read(&value, D("u")) };
                event(format!("-> {n}"));
            }),
        ),
        (
            "extern_c",
            Box::new(|| event(format!("-> {}", extern_c(1)))),
        ),
        (
            "always_inline",
            Box::new(|| event(format!("-> {}", always_inline(3, D("i"))))),
        ),
        (
            "caller_location",
            Box::new(|| {
                let at = caller_location(D("c"));
                event(format!("-> {at}"));
            }),
        ),
        (
            "caller_unwrap",
            Box::new(|| {
                event(format!("-> {}", caller_unwrap(Some(3), D("s"))));
                event(format!("-> {}", caller_unwrap(None, D("n"))));
            }),
        ),
        (
            "recurse",
            Box::new(|| {
                let out = recurse(3, D("top"));
                event(format!("{out:?}"));
            }),
        ),
        (
            "panics_in_body",
            Box::new(|| {
                event(format!("-> {}", panics_in_body(D("a"), D("b"), 2)));
            }),
        ),
        (
            "shadowed",
            Box::new(|| event(format!("-> {}", shadowed(D("s"))))),
        ),
        (
            "counts_calls",
            Box::new(|| {
                let first = counts_calls();
                let second = counts_calls();
                event(format!("-> {}", second - first));
            }),
        ),
        (
            "closures_inside",
            Box::new(|| {
                event(format!("-> {}", closures_inside(D("a"), D("b"))));
            }),
        ),
        (
            "leaf",
            Box::new(|| event(format!("-> {}", leaf(&D("leaf"))))),
        ),
        (
            "methods",
            Box::new(|| {
                let mut thing = Thing::new("t", D("new"));
                event(format!("-> {}", thing.by_ref(D("a"), D("b"))));
                event(format!("-> {}", thing.by_mut(3, D("unused"))));
                event(format!("-> {}", Pin::new(&mut thing).pinned(D("p"))));
                event(format!("-> {}", thing.pattern((D("x"), D("w")), D("b"))));
                event(format!("-> {}", thing.generic([1u8, 2], D("last"))));
                let value = 5u64;
                // SAFETY: `value` is a live u64.
                event(format!("-> {}", unsafe {
                    thing.read_unsafely(&value, D("u"))
                }));
                event(format!("-> {}", Add::add(&mut thing, 5)));
                event(format!("-> {}", thing.add(6)));
                event(format!("-> {}", thing.by_value(D("v"))));
                let boxed = Box::new(Thing::new("boxed", D("n")));
                event(format!("-> {}", boxed.boxed(D("b"))));
                let rc = Rc::new(Thing::new("rc", D("n")));
                let other = Rc::clone(&rc);
                event(format!("-> {}", rc.rc(D("r"))));
                drop(other);
                let arc = Arc::new(Thing::new("arc", D("n")));
                event(format!("-> {}", arc.arc(D("a"))));
            }),
        ),
        (
            "alone",
            Box::new(|| {
                let thing = Thing::new("al", D("n"));
                event(format!("-> {}", thing.alone(D("a"))));
                event(format!("-> {}", Thing::associated_alone(D("a"), D("b"))));
                event(format!("-> {}", thing.twice(D("t"))));
                event(format!("-> {}", free_alone(D("f"), D("g"))));
            }),
        ),
        (
            "track_caller_method",
            Box::new(|| {
                let thing = Thing::new("l", D("n"));
                let line = thing.located();
                event(format!("-> {}", line - line!()));
            }),
        ),
        (
            "trait_impls",
            Box::new(|| {
                let thing = Thing::new("g", D("n"));
                event(thing.greet("you"));
                event(thing.greet_named("them"));
                event(thing.show(vec![1, 2]));
                event(format!("-> {}", thing.take([1u64, 2, 3].into_iter())));
                event(thing.default_method(D("d")));
            }),
        ),
        (
            "async_params",
            Box::new(|| {
                let n = block_on(async_params(D("a"), D("b"), D("c")));
                event(format!("-> {n}"));
                // Dropped before its first poll: the parameters drop with it.
                drop(async_params(D("a2"), D("b2"), D("c2")));
                // Dropped while suspended.
                let mut future = pin!(async_params(D("a3"), D("b3"), D("c3")));
                let waker = noop_waker();
                let _ = future.as_mut().poll(&mut Context::from_waker(&waker));
                event("suspended");
            }),
        ),
        (
            "async_tail_borrows_param",
            Box::new(|| {
                let cell = std::cell::RefCell::new(vec![D("v")]);
                let n = block_on(async_tail_borrows_param(cell, D("o")));
                event(format!("-> {n}"));
            }),
        ),
        (
            "async_in_order",
            Box::new(|| block_on(async_in_order(D("a"), D("b"), D("c")))),
        ),
        (
            "async_patterns",
            Box::new(|| {
                let n = block_on(async_patterns((D("x"), D("w")), D("under"), D("z")));
                event(format!("-> {n}"));
            }),
        ),
        (
            "async_coerce",
            Box::new(|| {
                for pick in [true, false] {
                    event(format!("area {}", block_on(async_coerce(pick)).area()));
                }
            }),
        ),
        (
            "async_question",
            Box::new(|| {
                for text in ["4", "x"] {
                    match block_on(async_question(text)) {
                        Ok(n) => event(format!("ok {n}")),
                        Err(e) => event(format!("err {e}")),
                    }
                }
            }),
        ),
        (
            "async_tail",
            Box::new(|| event(format!("-> {}", block_on(async_tail(D("a")))))),
        ),
        (
            "async_panics",
            Box::new(|| event(format!("-> {}", block_on(async_panics(D("a"), 1))))),
        ),
        (
            "async_method",
            Box::new(|| {
                let thing = Thing::new("am", D("n"));
                event(format!(
                    "-> {}",
                    block_on(thing.async_method(D("a"), D("b")))
                ));
                event(format!("-> {}", block_on(thing.returns_future(D("f")))));
            }),
        ),
        (
            "by_value_self",
            Box::new(|| {
                let pair = || Pair {
                    a: D("a"),
                    b: D("b"),
                };
                event(format!("-> {}", pair().show(D("x"))));
                let b = pair().take_b(D("x"));
                event(format!("took {}", b.0));
                drop(b);
                event(format!("-> {}", pair().in_closure(D("x"))));
                event(format!("-> {}", pair().renamed("n")));
                event(format!("-> {}", pair().consume(D("x"))));
                event(format!("-> {}", pair().show_alone(D("x"))));
                event(format!("-> {}", block_on(pair().show_async(D("x")))));
                let b = block_on(pair().take_b_async());
                event(format!("took {}", b.0));
                drop(b);
                event(format!("-> {}", block_on(pair().renamed_async("n"))));
                event(format!("-> {}", block_on(pair().show_alone_async(D("x")))));
            }),
        ),
        (
            "async_ended_then_held",
            Box::new(|| {
                // Polled until ready, then held before it is dropped: the
                // parameters drop where the body ends.
                let pair = || Pair {
                    a: D("a"),
                    b: D("b"),
                };
                let thing = Thing::new("held", D("n"));
                let mut future = pin!(async_params(D("a"), D("b"), D("c")));
                event(format!("-> {}", finish(future.as_mut())));
                event("held");
                let mut future = pin!(thing.async_method(D("a"), D("b")));
                event(format!("-> {}", finish(future.as_mut())));
                event("held");
                let mut future = pin!(pair().show_async(D("x")));
                event(format!("-> {}", finish(future.as_mut())));
                event("held");
                let mut future = pin!(pair().renamed_async("n"));
                event(format!("-> {}", finish(future.as_mut())));
                event("held");
                let mut future = pin!(pair().take_b_async());
                event(format!("took {}", finish(future.as_mut()).0));
                event("held");
                let mut future = pin!(pair().show_alone_async(D("x")));
                event(format!("-> {}", finish(future.as_mut())));
                event("held");
            }),
        ),
        (
            "returned_closures",
            Box::new(|| {
                let thing = Thing::new("c", D("n"));
                event(format!("-> {}", counter(1)("abc")));
                event(format!("-> {}", first_word()("a b")));
                event(format!("-> {}", boxed_first_word()("c d")));
                event(format!("-> {}", block_on(counter_async(2))("abc")));
                event(format!("-> {}", block_on(first_word_async())("e f")));
                event(format!("-> {}", block_on(boxed_first_word_async())("g h")));
                event(format!("-> {}", thing.counter()("abcd")));
                event(format!("-> {}", thing.first_word()("i j")));
                event(format!("-> {}", block_on(thing.counter_async())("ab")));
                event(format!("-> {}", block_on(thing.first_word_async())("k l")));
                event(format!("-> {}", counter_alone(3)("a")));
                event(format!("-> {}", block_on(first_word_alone_async())("m n")));
                event(format!("-> {}", thing.first_word_alone()("o p")));
            }),
        ),
        (
            "configured_params",
            Box::new(|| {
                let thing = Thing::new("cfg", D("n"));
                event(format!("-> {}", configured(D("k"), D("a"))));
                let n = block_on(configured_async(D("k"), D("a"), D("u")));
                event(format!("-> {n}"));
                event(format!("-> {}", thing.configured_method(D("k"))));
                let n = block_on(thing.configured_method_async(D("k")));
                event(format!("-> {n}"));
            }),
        ),
        (
            "narrower_trait_impl",
            Box::new(|| {
                let thing = Thing::new("trait", D("n"));
                event(format!("-> {}", thing.label()));
                event(format!("-> {}", label_by_trait(&thing)));
                let other = String::from("other");
                event(format!("-> {}", thing.label_of(&other)));
                event(format!("-> {}", thing.label_alone()));
            }),
        ),
        (
            "binding_modes",
            Box::new(|| {
                event(format!("-> {}", sync_ref_mut(vec![D("s")], D("a"))));
                event(format!(
                    "-> {}",
                    block_on(async_ref_mut(vec![D("v")], D("a")))
                ));
                let n = block_on(async_ref(vec![D("r")], vec![D("m")], (1, 2)));
                event(format!("-> {n}"));
            }),
        ),
        (
            "async_futures",
            Box::new(|| {
                for line in async_futures() {
                    event(line);
                }
            }),
        ),
        (
            "scrutinee_tails",
            Box::new(|| {
                for pick in [true, false] {
                    event(format!("-> {}", if_let_tail(pick, D("a"))));
                    event(format!("-> {}", match_tail(pick, D("a"))));
                    event(format!("-> {}", block_on(if_let_tail_async(pick, D("a")))));
                }
            }),
        ),
        (
            "attributes",
            Box::new(|| {
                event(format!("-> {}", inner_attribute(D("a"))));
                event(format!("-> {}", never_inlined(D("a"))));
                event(format!("-> {}", inline_when_optimised(D("a"))));
                event(format!("-> {}", exported(1)));
            }),
        ),
        (
            "thread_exit",
            Box::new(|| {
                thread_local! {
                    static AT_EXIT: std::cell::RefCell<Option<OnExit>> =
                        const { std::cell::RefCell::new(None) };
                }
                let (send, receive) = std::sync::mpsc::channel();
                std::thread::spawn(move || {
                    // Registered before the runtime's own thread state (at
                    // the first refill), so dropped after it.
                    AT_EXIT.with(|slot| *slot.borrow_mut() = Some(OnExit("exit", send)));
                    let boxes: Vec<Box<u64>> =
                        batch_alloc::scope(|| (0..100).map(Box::new).collect());
                    drop(boxes);
                })
                .join()
                .expect("the thread exits");
                event(format!("at exit -> {:?}", receive.recv()));
            }),
        ),
    ]
}

/// A recursion of the stack test: runs `depth` levels of the shape
/// (`free`, `method` or `trait`) and returns where the deepest level's
/// stack was.
pub type Recursion = fn(&str, u32) -> usize;

/// The stack test's recursions, by the size of the settings each level
/// passes down and how it passes them.
pub fn recursions() -> Vec<(usize, &'static str, Recursion)> {
    fn levels<C: crate::support::Settings>(shape: &str, depth: u32, settings: C) -> usize {
        let input: Vec<u8> = (0..=depth).map(|i| i as u8).collect();
        let mut parser = Parser {
            input: input.iter(),
            nodes: 0,
        };
        let tree = match shape {
            "free" => descend(depth, &mut input.iter(), settings),
            "method" => parser.descend(depth, settings),
            "trait" => parser.descend_by_trait(depth, settings),
            other => panic!("no such recursion: {other}"),
        };
        drop(tree);
        crate::support::stack_mark()
    }
    fn by_value<const N: usize>(shape: &str, depth: u32) -> usize {
        levels(shape, depth, [7u64; N])
    }
    fn by_reference<const N: usize>(shape: &str, depth: u32) -> usize {
        levels::<&[u64; N]>(shape, depth, &[7u64; N])
    }
    vec![
        (8, "by value", by_value::<1>),
        (16, "by value", by_value::<2>),
        (32, "by value", by_value::<4>),
        (64, "by value", by_value::<8>),
        (128, "by value", by_value::<16>),
        (256, "by value", by_value::<32>),
        (512, "by value", by_value::<64>),
        (8, "by reference", by_reference::<1>),
        (16, "by reference", by_reference::<2>),
        (32, "by reference", by_reference::<4>),
        (64, "by reference", by_reference::<8>),
        (128, "by reference", by_reference::<16>),
        (256, "by reference", by_reference::<32>),
        (512, "by reference", by_reference::<64>),
    ]
}

/// Boxes a value of 1 MiB and of 2 MiB (the stack test's large boxes).
pub fn large_boxes() -> Vec<(usize, fn() -> u8)> {
    fn boxed_of<const N: usize>() -> u8 {
        boxed::<N>(7)[N - 1]
    }
    vec![
        (1 << 20, boxed_of::<{ 1 << 20 }>),
        (2 << 20, boxed_of::<{ 2 << 20 }>),
    ]
}
