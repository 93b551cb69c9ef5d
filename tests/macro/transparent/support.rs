// What the corpus functions call to make what they do observable (see
// `mod.rs`): an event log, a type that logs its drop, a call that
// allocates and notes whether a scope is open, the corpus functions on
// the stack. Included once in each edition's crate (`support` of
// edition2021/lib.rs and edition2024/lib.rs), so no inner attributes.

use std::cell::RefCell;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use workloads::testing::scope_on_this_thread;

pub use workloads::testing::{block_on, finish, noop_waker};

thread_local! {
    static EVENTS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// Whether a scope was open at each `busy()`: not compared.
    static SCOPES: RefCell<Vec<bool>> = const { RefCell::new(Vec::new()) };
}

/// Records one observable event.
pub fn event(text: impl Into<String>) {
    EVENTS.with(|events| events.borrow_mut().push(text.into()));
}

/// The events recorded on this thread since the last call, and whether a
/// scope was open at each `busy()`.
pub fn take_log() -> (Vec<String>, Vec<bool>) {
    let events = EVENTS.with(|events| std::mem::take(&mut *events.borrow_mut()));
    let scopes = SCOPES.with(|scopes| std::mem::take(&mut *scopes.borrow_mut()));
    (events, scopes)
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

/// What every corpus function calls first: it allocates (so a scope has
/// something to serve) and records whether a scope is open.
#[inline(never)]
pub fn busy() {
    let open = scope_on_this_thread().is_some();
    let boxed = std::hint::black_box(Box::new(open));
    SCOPES.with(|scopes| scopes.borrow_mut().push(*boxed));
}

/// The corpus functions on the stack, outermost first, as the debug
/// information names them: the frames whose code is in the corpus, by
/// name. Closures' frames are left out: the body of an `async fn` runs in
/// one (`f::{closure}`) as written, and in an `async` block annotated.
#[inline(never)]
pub fn frames() -> String {
    let trace = std::backtrace::Backtrace::force_capture().to_string();
    let mut names: Vec<String> = Vec::new();
    let mut last_name = None;
    for line in trace.lines() {
        let line = line.trim();
        if let Some(at) = line.strip_prefix("at ") {
            let in_corpus = ["corpus.rs:", "alone.rs:", "edition_2024.rs:"]
                .iter()
                .any(|file| at.contains(file));
            if let (true, Some(name)) = (in_corpus, last_name.take()) {
                names.push(name);
            }
        } else if let Some((_, name)) = line.split_once(": ") {
            let name = unqualified(name);
            let closure = name.starts_with("{closure") || name.starts_with("{{closure");
            last_name = (!closure).then(|| name.to_string());
        }
    }
    names.reverse();
    format!("frames: {}", names.join(" > "))
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

/// `describe!(future)`: its size and auto traits, as `1080 bytes, Send
/// Sync !Unpin`: what a caller may do with it. A macro, so that the
/// methods are chosen where the future's type is known: an inherent
/// method of `Probe<T>`, where its bound holds, is chosen over the trait's
/// method of the same name, which answers no.
macro_rules! describe {
    ($future:expr) => {{
        #[allow(unused_imports)]
        use $crate::support::Otherwise as _;
        let future = $future;
        format!(
            "{} bytes, {} {} {}",
            std::mem::size_of_val(&future),
            $crate::support::Probe::of(&future).send(),
            $crate::support::Probe::of(&future).sync(),
            $crate::support::Probe::of(&future).unpin()
        )
    }};
}
pub(crate) use describe;

/// Asks about `T` (see `describe!`).
pub struct Probe<T>(PhantomData<T>);

impl<T> Probe<T> {
    pub fn of(_: &T) -> Probe<T> {
        Probe(PhantomData)
    }
}

pub trait Otherwise {
    fn send(&self) -> &'static str {
        "!Send"
    }
    fn sync(&self) -> &'static str {
        "!Sync"
    }
    fn unpin(&self) -> &'static str {
        "!Unpin"
    }
}

impl<T> Otherwise for Probe<T> {}

impl<T: Send> Probe<T> {
    pub fn send(&self) -> &'static str {
        "Send"
    }
}

impl<T: Sync> Probe<T> {
    pub fn sync(&self) -> &'static str {
        "Sync"
    }
}

impl<T: Unpin> Probe<T> {
    pub fn unpin(&self) -> &'static str {
        "Unpin"
    }
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

thread_local! {
    static STACK_MARK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Notes where the stack is: called by the deepest level of a recursion.
#[inline(never)]
pub fn mark_stack() {
    let here = 0u8;
    let at = std::hint::black_box(&here) as *const u8 as usize;
    STACK_MARK.with(|mark| mark.set(at));
}

/// Where the stack was at the last [`mark_stack`] on this thread.
pub fn stack_mark() -> usize {
    STACK_MARK.with(|mark| mark.get())
}

/// What a level reads of the settings it is passed: `[u64; N]` by value
/// or by reference.
pub trait Settings: Copy {
    fn first(&self) -> u64;
    fn last(&self) -> u64;
}

impl<const N: usize> Settings for [u64; N] {
    fn first(&self) -> u64 {
        self[0]
    }
    fn last(&self) -> u64 {
        self[N - 1]
    }
}

impl<const N: usize> Settings for &[u64; N] {
    fn first(&self) -> u64 {
        self[0]
    }
    fn last(&self) -> u64 {
        self[N - 1]
    }
}

/// A case of the differential test: a call of the corpus functions that
/// logs what they return.
pub type Case = (&'static str, Box<dyn Fn()>);

/// A case's name, then the case as written and annotated.
pub type CasePair = (&'static str, Box<dyn Fn()>, Box<dyn Fn()>);

/// The cases of both copies side by side.
pub fn pairs(as_written: Vec<Case>, annotated: Vec<Case>) -> Vec<CasePair> {
    assert_eq!(as_written.len(), annotated.len());
    let pairs = as_written.into_iter().zip(annotated);
    pairs
        .map(|((name, written), (other, batched))| {
            assert_eq!(name, other);
            (name, written, batched)
        })
        .collect()
}
