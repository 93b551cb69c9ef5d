//! The attribute is transparent: a function annotated is the same program
//! as written, served from scopes.
//!
//! One corpus (`corpus.rs`), compiled twice in this binary: `as_written`
//! and `annotated` (every function, method, impl block and trait default
//! method under `#[batch_alloc]`). Each case calls the same functions in
//! both and records an event log: what the functions saw and returned,
//! every drop in order, each panic with its message and location, and the
//! corpus functions on the stack where a function looks at its backtrace.
//! The logs must be equal, outside any scope (the annotated code opens
//! one) and inside one (it joins it). What may differ is only where
//! memory comes from: a separate record says whether a scope was open in
//! each call, and the annotated copy must have had one in all but the leaf.
//!
//! `stack` checks the stack each level of a recursion takes.

mod stack;

use std::cell::RefCell;
use std::future::Future;
use std::panic::{self, catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use batch_alloc::__private::scope_on_this_thread;

use workloads::testing::serially;

thread_local! {
    static EVENTS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// Whether a scope was open at each `busy()`: not compared.
    static SCOPES: RefCell<Vec<bool>> = const { RefCell::new(Vec::new()) };
}

/// Records one observable event.
pub fn event(text: impl Into<String>) {
    EVENTS.with(|events| events.borrow_mut().push(text.into()));
}

/// Logs its drop.
#[derive(Debug)]
pub struct D(pub &'static str);

impl Drop for D {
    fn drop(&mut self) {
        event(format!("drop {}", self.0));
    }
}

/// A temporary for a tail expression.
pub fn temp(name: &'static str) -> D {
    D(name)
}

pub trait Shape {
    fn area(&self) -> u64;
}

impl Shape for u64 {
    fn area(&self) -> u64 {
        *self * 2
    }
}

impl Shape for u32 {
    fn area(&self) -> u64 {
        u64::from(*self) * 3
    }
}

impl Shape for D {
    fn area(&self) -> u64 {
        self.0.len() as u64
    }
}

/// What every non-leaf corpus function calls first: it allocates (so a
/// scope has something to serve) and records whether a scope is open.
#[inline(never)]
pub fn busy() {
    let open = scope_on_this_thread().is_some();
    let boxed = std::hint::black_box(Box::new(open));
    SCOPES.with(|scopes| scopes.borrow_mut().push(*boxed));
}

/// The corpus functions on the stack, outermost first, as the debug
/// information names them: the frames whose code is in the corpus, by
/// name. Closures' frames are left out: a function annotated alone runs
/// its body in a closure of its own (`f::{closure}`, inlined into `f`),
/// and what is compared is that the functions are there, named as
/// written, in order. A method that opens the scope calls itself once more
/// inside it: that one extra frame at the top call (`f > f`) reads as `f`
/// once.
#[inline(never)]
pub fn frames() -> String {
    let trace = std::backtrace::Backtrace::force_capture().to_string();
    let mut names: Vec<String> = Vec::new();
    let mut last_name = None;
    for line in trace.lines() {
        let line = line.trim();
        if let Some(at) = line.strip_prefix("at ") {
            let in_corpus = ["corpus.rs:", "alone.rs:"]
                .iter()
                .any(|file| at.contains(file));
            if let (true, Some(name)) = (in_corpus, last_name.take()) {
                names.push(name);
            }
        } else if let Some((_, name)) = line.split_once(": ") {
            let name = unqualified(name);
            let closure = name.starts_with("{closure") || name.starts_with("{{closure");
            last_name = Some(if closure {
                "{closure}".to_string()
            } else {
                name.to_string()
            });
        }
    }
    names.reverse();
    let mut out: Vec<String> = Vec::new();
    for name in names {
        if name != "{closure}" && out.last() != Some(&name) {
            out.push(name);
        }
    }
    format!("frames: {}", out.join(" > "))
}

/// A node of the tree the recursions of the stack test build, as a
/// recursive-descent parser builds its syntax tree.
#[derive(Debug)]
#[allow(dead_code)] // Built, not read: the recursion is what is measured.
pub enum Expr {
    Number(u64),
    Add(Box<Expr>, Box<Expr>),
    Named(String, Box<Expr>),
}

/// The last segment of a path as backtraces print it: `f` of `m::f`,
/// `m::T::f<u8>` and `<m::T as m::Trait>::f`.
fn unqualified(name: &str) -> &str {
    let mut rest = name;
    if rest.starts_with('<') {
        let mut depth = 0;
        for (i, c) in rest.char_indices() {
            match c {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                rest = &rest[i + 1..];
                break;
            }
        }
    }
    let rest = rest.split('<').next().unwrap_or(rest);
    rest.rsplit("::").next().unwrap_or(rest)
}

/// Pending once, then ready: an await that suspends.
pub fn yield_now() -> impl Future<Output = ()> {
    struct YieldNow(bool);
    impl Future for YieldNow {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                return Poll::Ready(());
            }
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
    YieldNow(false)
}

/// The code as written.
#[allow(
    clippy::needless_pass_by_value,
    clippy::extra_unused_type_parameters,
    clippy::boxed_local,
    clippy::ptr_arg,
    clippy::toplevel_ref_arg,
    clippy::new_ret_no_self,
    dead_code
)]
pub mod as_written {
    include!("corpus.rs");
    include!("alone.rs");
    include!("cases.rs");
}

/// The same code annotated (written by the build script).
#[allow(
    clippy::needless_pass_by_value,
    clippy::extra_unused_type_parameters,
    clippy::boxed_local,
    clippy::ptr_arg,
    clippy::toplevel_ref_arg,
    clippy::new_ret_no_self,
    dead_code,
    // The leaf's warning: annotated alone, it is left as written.
    deprecated
)]
pub mod annotated {
    include!(concat!(env!("OUT_DIR"), "/annotated_corpus.rs"));
    include!(concat!(env!("OUT_DIR"), "/annotated_alone.rs"));
    include!("cases.rs");
}

thread_local! {
    static PANIC_AT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs one case, inside a scope when `in_scope`: its events, then how it
/// ended, and whether a scope was open at each `busy()`.
fn run(case: &dyn Fn(), in_scope: bool) -> (Vec<String>, Vec<bool>) {
    EVENTS.with(|events| events.borrow_mut().clear());
    SCOPES.with(|scopes| scopes.borrow_mut().clear());
    let outcome = catch_unwind(AssertUnwindSafe(|| match in_scope {
        true => batch_alloc::scope(case),
        false => case(),
    }));
    match outcome {
        Ok(()) => event("returned"),
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let at = PANIC_AT
                .with(|at| at.borrow_mut().take())
                .unwrap_or_default();
            event(format!("panicked at {at}: {message}"));
        }
    }
    assert_eq!(
        scope_on_this_thread(),
        None,
        "a scope outlived its function"
    );
    let events = EVENTS.with(|events| std::mem::take(&mut *events.borrow_mut()));
    let scopes = SCOPES.with(|scopes| std::mem::take(&mut *scopes.borrow_mut()));
    (events, scopes)
}

/// Every case, as written and annotated, outside and inside a scope: the
/// same events.
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
        let as_written = as_written::cases();
        let annotated = annotated::cases();
        let mut differences = Vec::new();
        for ((name, plain), (_, batched)) in as_written.iter().zip(&annotated) {
            for in_scope in [false, true] {
                let (expected, plain_scopes) = run(plain.as_ref(), in_scope);
                let (got, batched_scopes) = run(batched.as_ref(), in_scope);
                if expected != got {
                    differences.push(format!(
                        "{name} ({}):\n  as written: {expected:?}\n  annotated:  {got:?}",
                        if in_scope {
                            "inside a scope"
                        } else {
                            "outside"
                        }
                    ));
                }
                // The annotated copy is served: a scope is open in every
                // call but the leaf's (which has no `busy`).
                assert!(plain_scopes.iter().all(|&open| open == in_scope), "{name}");
                assert!(
                    batched_scopes.iter().all(|&open| open),
                    "{name}: the annotated copy ran without a scope: {batched_scopes:?}"
                );
            }
        }
        panic::set_hook(previous);
        assert!(
            differences.is_empty(),
            "{} of {} cases differ:\n{}",
            differences.len(),
            as_written.len(),
            differences.join("\n")
        );
    });
}
