//! The attribute is transparent: a function annotated is the same program
//! as written, served from scopes.
//!
//! One corpus (`corpus.rs`, `alone.rs`, `recursion.rs`), compiled in both
//! editions (edition is a crate's: `edition2021/` and `edition2024/` are
//! two crates of the same files, the 2024 one with `edition_2024.rs`
//! besides), each in two copies: `as_written`, and `annotated`, with
//! `#[batch_alloc]` on every function, method, impl block and trait
//! default method. Each case calls the same functions in both copies and
//! records an event log: what the functions saw and returned, every drop
//! in order, each panic with its message and location, the size and auto
//! traits of each `async fn`'s future, and the corpus functions on the
//! stack where a function looks at its backtrace. The logs must be equal,
//! outside any scope (the annotated code opens one) and inside one (it
//! joins it). What may differ is only where memory comes from: a separate
//! record says whether a scope was open in each call, and the annotated
//! copy must have had one in every call. The corpus crates deny warnings,
//! so the annotated copy also compiles without a warning of its own.
//!
//! `stack` checks the stack each level of a recursion takes, and that
//! large values box where they box as written.

mod stack;

use std::cell::RefCell;
use std::panic::{self, catch_unwind, AssertUnwindSafe};

use batch_alloc_rt::testing::scope_on_this_thread;

use workloads::testing::serially;

/// One edition's crate of the corpus: its cases, and its event log.
struct Edition {
    name: &'static str,
    cases: Vec<(&'static str, Box<dyn Fn()>, Box<dyn Fn()>)>,
    event: fn(String),
    take_log: fn() -> (Vec<String>, Vec<bool>),
}

fn editions() -> [Edition; 2] {
    [
        Edition {
            name: "2021",
            cases: batch_alloc_transparent_2021::cases(),
            event: |text| batch_alloc_transparent_2021::support::event(text),
            take_log: batch_alloc_transparent_2021::support::take_log,
        },
        Edition {
            name: "2024",
            cases: batch_alloc_transparent_2024::cases(),
            event: |text| batch_alloc_transparent_2024::support::event(text),
            take_log: batch_alloc_transparent_2024::support::take_log,
        },
    ]
}

thread_local! {
    static PANIC_AT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs one case of `edition`, inside a scope when `in_scope`: its events,
/// then how it ended, and whether a scope was open at each `busy()`.
fn run(edition: &Edition, case: &dyn Fn(), in_scope: bool) -> (Vec<String>, Vec<bool>) {
    let _ = (edition.take_log)();
    let outcome = catch_unwind(AssertUnwindSafe(|| match in_scope {
        true => batch_alloc::scope(case),
        false => case(),
    }));
    match outcome {
        Ok(()) => (edition.event)("returned".to_string()),
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let at = PANIC_AT
                .with(|at| at.borrow_mut().take())
                .unwrap_or_default();
            (edition.event)(format!("panicked at {at}: {message}"));
        }
    }
    assert_eq!(
        scope_on_this_thread(),
        None,
        "a scope outlived its function"
    );
    (edition.take_log)()
}

/// Every case of both editions, as written and annotated, outside and
/// inside a scope: the same events.
#[test]
fn annotated_code_behaves_as_written() {
    serially(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(|info| {
            let at = info
                .location()
                .map(|at| format!("line {} column {}", at.line(), at.column()));
            PANIC_AT.with(|slot| *slot.borrow_mut() = at);
        }));
        let mut differences = Vec::new();
        let mut count = 0;
        for edition in editions() {
            for (name, written, annotated) in &edition.cases {
                count += 1;
                for in_scope in [false, true] {
                    let (expected, written_scopes) = run(&edition, written.as_ref(), in_scope);
                    let (got, annotated_scopes) = run(&edition, annotated.as_ref(), in_scope);
                    if !same_events(&expected, &got) {
                        let place = if in_scope {
                            "inside a scope"
                        } else {
                            "outside"
                        };
                        differences.push(format!(
                            "edition {}, {name} ({place}):\n  as written: {expected:?}\n  \
                             annotated:  {got:?}",
                            edition.name
                        ));
                    }
                    assert!(
                        written_scopes.iter().all(|&open| open == in_scope),
                        "{name}"
                    );
                    // The annotated copy is served: a scope is open in
                    // every call.
                    assert!(
                        annotated_scopes.iter().all(|&open| open),
                        "edition {}, {name}: the annotated copy ran without a scope: \
                         {annotated_scopes:?}",
                        edition.name
                    );
                }
            }
        }
        panic::set_hook(previous);
        assert!(
            differences.is_empty(),
            "{} of {count} cases differ:\n{}",
            differences.len(),
            differences.join("\n")
        );
    });
}

/// Whether the annotated copy's events are the written copy's: equal, but
/// that a future may be smaller annotated than as written (`N bytes, ..`
/// with the rest equal). An `async` method's future holds its receiver
/// once where the compiler's `async fn` holds it twice; it is never larger.
fn same_events(written: &[String], annotated: &[String]) -> bool {
    let size = |event: &str| -> Option<(u64, String)> {
        let (bytes, rest) = event.split_once(" bytes, ")?;
        Some((bytes.parse().ok()?, rest.to_owned()))
    };
    written.len() == annotated.len() && written.iter().zip(annotated).all(|(w, a)| {
        w == a || matches!((size(w), size(a)), (Some((w, wr)), Some((a, ar))) if a <= w && wr == ar)
    })
}
