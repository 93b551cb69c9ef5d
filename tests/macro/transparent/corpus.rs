// The differential corpus (see `mod.rs`): functions of every shape the
// attribute may be put on. Included as written in `as_written`, and, with
// `#[batch_alloc]` put on every function, impl block and trait default
// method by the crates harness's own annotator (support/annotate), in
// `annotated` (the build script writes that copy). Included, not a
// module, so no inner attributes: plain comments only.
//
// Each function logs through `event` what it sees and does; `D` logs its
// drop. Most call `busy` first, which allocates and notes whether a scope
// is open (the annotated copy must have one in every call).

use std::fmt::Debug;
use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;

use crate::support::{busy, describe, event, frames, temp, yield_now, Shape, D};

// ---- parameters and their drops ----

pub fn several_params(a: D, b: D, c: D) -> usize {
    busy();
    event(format!("uses {}", b.0));
    event(frames());
    let _local = D("local");
    a.0.len() + c.0.len()
}

pub fn uses_in_order(a: D, b: D) {
    busy();
    event(format!("uses {a:?} then {b:?}"));
}

pub fn unused_params(_a: D, b: D, _: D, _d: D) {
    busy();
    event(format!("uses {}", b.0));
}

pub fn pattern_params((x, y): (D, D), [first, _, third]: [D; 3], _: D, z: D) -> usize {
    busy();
    let _local = D("local");
    x.0.len() + y.0.len() + first.0.len() + third.0.len() + z.0.len()
}

pub fn partial_pattern(a: D, (x, _): (D, D), z: D) {
    busy();
    event(format!("uses {} {} {}", a.0, x.0, z.0));
}

pub fn ref_and_mut_params(ref r: D, mut m: Vec<D>, b: D) -> usize {
    busy();
    m.push(D("pushed"));
    event(format!("uses {} {}", r.0, b.0));
    m.len()
}

pub fn tail_temporary(a: D) -> usize {
    busy();
    let _local = D("local");
    temp("tail").0.len() + a.0.len()
}

pub fn early_return(a: D, b: D, stop: bool) -> &'static str {
    busy();
    let _local = D("local");
    if stop {
        return "early";
    }
    drop(b);
    event(format!("keeps {}", a.0));
    "late"
}

// ---- `?`, coercions, `impl Trait` ----

pub fn question(text: &str, a: D) -> Result<u64, Box<dyn std::error::Error>> {
    busy();
    let n: u64 = text.parse()?;
    if n == 0 {
        return Err("zero".into());
    }
    event(format!("parsed {n} with {}", a.0));
    Ok(n * 2)
}

pub fn coerce(pick: u8) -> Box<dyn Shape> {
    busy();
    if pick == 0 {
        return Box::new(1u64);
    }
    if pick == 1 {
        return Box::new(D("shape"));
    }
    Box::new(2u32)
}

pub fn coerce_tail(pick: bool) -> Box<dyn Fn(u64) -> u64> {
    busy();
    if pick {
        Box::new(|x| x + 1)
    } else {
        Box::new(move |x| x * 2)
    }
}

pub fn impl_trait_return(n: u64, tag: D) -> impl Iterator<Item = u64> + Debug {
    busy();
    event(format!("returns for {}", tag.0));
    (0..n).map(|i| i * 3)
}

pub fn impl_trait_args(items: impl IntoIterator<Item = D>, last: impl Debug) -> usize {
    busy();
    let mut n = 0;
    for item in items {
        event(format!("item {}", item.0));
        n += 1;
    }
    event(format!("last {last:?}"));
    n
}

pub fn generic<T: Clone + Debug, const N: usize>(x: T, guard: D) -> [T; N] {
    busy();
    event(format!("generic {x:?} {}", guard.0));
    std::array::from_fn(|_| x.clone())
}

pub fn only_in_return<T: Default + Debug>(guard: D) -> T {
    busy();
    event(format!("default for {}", guard.0));
    T::default()
}

pub fn never(a: D, message: &str) -> ! {
    busy();
    let _local = D("local");
    event(format!("diverges with {}", a.0));
    panic!("never: {message}")
}

pub fn labels_and_loops(n: u64, a: D) -> u64 {
    busy();
    let found = 'search: {
        for i in 0..n {
            if i * i > n {
                break 'search Some(i);
            }
        }
        None
    };
    let mut i = 0;
    let stop = loop {
        i += 1;
        if i == 3 {
            break i * 10;
        }
    };
    event(format!("{found:?} {stop} {}", a.0));
    found.unwrap_or(0) + stop
}

// ---- unsafe, extern, inline, track_caller, recursion ----

/// # Safety
/// `p` points to a live `u64`.
pub unsafe fn unsafe_read(p: *const u64, a: D) -> u64 {
    busy();
    event(format!("reads for {}", a.0));
    // SAFETY: the caller's contract.
    unsafe { *p }
}

pub extern "C" fn extern_c(x: u64) -> u64 {
    busy();
    x + 1
}

#[inline(always)]
pub fn always_inline(x: u64, a: D) -> u64 {
    busy();
    event(format!("inline {}", a.0));
    x * 7
}

#[track_caller]
pub fn caller_location(a: D) -> String {
    busy();
    let at = Location::caller();
    event(format!("called from line {} with {}", at.line(), a.0));
    format!("{}:{}", at.line(), at.column())
}

#[track_caller]
pub fn caller_unwrap(value: Option<u64>, a: D) -> u64 {
    busy();
    let _local = D("local");
    event(format!("unwraps for {}", a.0));
    value.unwrap()
}

pub fn recurse(depth: u32, a: D) -> Vec<Box<u32>> {
    busy();
    if depth == 0 {
        event(format!("bottom {}", a.0));
        event(frames());
        return Vec::new();
    }
    let _local = D("level");
    let mut below = recurse(depth - 1, D("arg"));
    below.push(Box::new(depth));
    below
}

pub fn panics_in_body(a: D, b: D, at: u32) -> u32 {
    busy();
    let _local = D("local");
    for i in 0..at + 1 {
        let _each = D("each");
        if i == at {
            panic!("panic at {i} with {} {}", a.0, b.0);
        }
    }
    at
}

/// A nested function of the same name: inside the body, `shadowed`
/// names it, not the outer one.
pub fn shadowed(a: D) -> u32 {
    fn shadowed() -> u32 {
        busy();
        7
    }
    busy();
    event(format!("shadowed {}", a.0));
    shadowed() + 1
}

pub fn counts_calls() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static CALLS: AtomicU32 = AtomicU32::new(0);
    busy();
    CALLS.fetch_add(1, Ordering::Relaxed) + 1
}

pub fn closures_inside(a: D, b: D) -> u64 {
    busy();
    let held = D("held");
    let total: u64 = (0..3u64).map(|i| i + a.0.len() as u64).sum();
    let consume = move || {
        event(format!("closure has {} {}", b.0, held.0));
        total
    };
    consume() + total
}

/// A body of method calls and operators only.
pub fn leaf(a: &D) -> usize {
    a.0.len() * 2
}

// ---- methods ----

pub struct Thing {
    pub name: &'static str,
    pub items: Vec<Box<u64>>,
}

impl Drop for Thing {
    fn drop(&mut self) {
        event(format!("drop thing {}", self.name));
    }
}

impl Thing {
    pub fn new(name: &'static str, a: D) -> Self {
        busy();
        event(format!("new {name} {}", a.0));
        Thing {
            name,
            items: Vec::new(),
        }
    }

    pub fn by_ref(&self, a: D, b: D) -> usize {
        busy();
        event(format!("by_ref {} {}", self.name, b.0));
        event(frames());
        self.items.len() + a.0.len()
    }

    pub fn by_mut(&mut self, n: u64, _unused: D) -> usize {
        busy();
        for i in 0..n {
            self.items.push(Box::new(i));
        }
        self.items.len()
    }

    pub fn by_value(self, a: D) -> &'static str {
        busy();
        event(format!("by_value {} {}", self.name, a.0));
        self.name
    }

    pub fn boxed(self: Box<Self>, a: D) -> usize {
        busy();
        event(format!("boxed {} {}", self.name, a.0));
        self.items.len()
    }

    pub fn rc(self: Rc<Self>, a: D) -> usize {
        busy();
        event(format!("rc {} {}", self.name, a.0));
        Rc::strong_count(&self)
    }

    pub fn arc(self: Arc<Self>, a: D) -> usize {
        busy();
        event(format!("arc {} {}", self.name, a.0));
        Arc::strong_count(&self)
    }

    pub fn pinned(self: Pin<&mut Self>, a: D) -> usize {
        busy();
        event(format!("pinned {} {}", self.name, a.0));
        self.items.len()
    }

    pub fn pattern(&self, (x, _): (D, D), b: D) -> usize {
        busy();
        event(format!("pattern {} {} {}", self.name, x.0, b.0));
        1
    }

    pub fn generic<T: Debug, const N: usize>(&self, items: [T; N], last: impl Debug) -> usize {
        busy();
        event(format!("generic {} {items:?} {last:?}", self.name));
        N
    }

    /// # Safety
    /// `p` points to a live `u64`.
    pub unsafe fn read_unsafely(&self, p: *const u64, a: D) -> u64 {
        busy();
        event(format!("read_unsafely {} {}", self.name, a.0));
        // SAFETY: the caller's contract.
        unsafe { *p + self.items.len() as u64 }
    }

    #[track_caller]
    pub fn located(&self) -> u32 {
        busy();
        Location::caller().line()
    }

    /// `Self::add` inside the trait impl below must not be this one.
    pub fn add(&mut self, n: u64) -> usize {
        busy();
        self.items.push(Box::new(n));
        self.items.push(Box::new(n));
        self.items.len()
    }
}

pub trait Add {
    fn add(&mut self, n: u64) -> usize;
}

impl Add for Thing {
    fn add(&mut self, n: u64) -> usize {
        busy();
        event(frames());
        self.items.push(Box::new(n));
        self.items.len()
    }
}

// ---- trait impls more general than their trait ----

pub type Name<'a> = &'a str;

pub trait Greet {
    fn greet(&self, who: &'static str) -> String;
    fn greet_named(&self, who: Name<'static>) -> String;
    fn show<T: Debug + Clone>(&self, item: T) -> String;
    fn take(&self, items: impl Iterator<Item = u64> + Send) -> u64;

    fn default_method(&self, a: D) -> String {
        busy();
        event(format!("default {}", a.0));
        self.greet("default")
    }
}

impl Greet for Thing {
    fn greet(&self, who: &str) -> String {
        busy();
        let local = String::from(who);
        let borrowed: &str = &local;
        let _ = keep(borrowed, who);
        format!("{} greets {who}", self.name)
    }

    fn greet_named(&self, who: Name) -> String {
        busy();
        let local = String::from(who);
        let _ = keep(&local, who);
        format!("{} names {who}", self.name)
    }

    fn show<T: Debug>(&self, item: T) -> String {
        busy();
        format!("{} shows {item:?}", self.name)
    }

    fn take(&self, items: impl Iterator<Item = u64>) -> u64 {
        busy();
        items.sum()
    }
}

/// Returns the shorter of two strings of the same lifetime: ties a
/// parameter's lifetime to a local's, which a trait signature
/// narrower than the method's would reject.
fn keep<'a>(a: &'a str, b: &'a str) -> &'a str {
    if a.len() <= b.len() {
        a
    } else {
        b
    }
}

// ---- async ----

pub async fn async_params(a: D, b: D, _c: D) -> usize {
    busy();
    yield_now().await;
    event(format!("async uses {}", b.0));
    let _local = D("local");
    yield_now().await;
    a.0.len()
}

pub async fn async_in_order(a: D, b: D, _unused: D) {
    busy();
    event(format!("async uses {a:?}"));
    yield_now().await;
    event(format!("then {b:?}"));
}

pub async fn async_patterns((x, _): (D, D), _: D, z: D) -> usize {
    busy();
    yield_now().await;
    event(format!("async pattern {} {}", x.0, z.0));
    1
}

pub async fn async_coerce(pick: bool) -> Box<dyn Shape> {
    busy();
    yield_now().await;
    if pick {
        return Box::new(1u64);
    }
    Box::new(D("async shape"))
}

pub async fn async_question(text: &str) -> Result<u64, Box<dyn std::error::Error>> {
    busy();
    yield_now().await;
    let n: u64 = text.parse()?;
    yield_now().await;
    Ok(n + 1)
}

pub async fn async_tail(a: D) -> usize {
    busy();
    yield_now().await;
    let _local = D("local");
    temp("tail").0.len() + a.0.len()
}

pub async fn async_panics(a: D, at: u32) -> u32 {
    busy();
    let _local = D("local");
    for i in 0..=at {
        yield_now().await;
        if i == at {
            panic!("async panic at {i} with {}", a.0);
        }
    }
    at
}

impl Thing {
    pub async fn async_method(&self, a: D, b: D) -> usize {
        busy();
        yield_now().await;
        event(format!("async method {} {}", self.name, b.0));
        a.0.len()
    }

    pub fn returns_future(&self, a: D) -> impl Future<Output = usize> + '_ {
        busy();
        event(format!("returns_future {}", a.0));
        async move {
            yield_now().await;
            self.items.len()
        }
    }
}

// ---- by-value `self`: its fields drop with it, in their order (the
// bodies use `self.b` whole, by reference: a closure or an `async` block
// that did would capture that field alone, and drop it first) ----

pub struct Pair {
    pub a: D,
    pub b: D,
}

impl Pair {
    pub fn show(self, x: D) -> usize {
        busy();
        event(format!("show {:?} {}", self.b, x.0));
        self.b.0.len()
    }

    pub fn take_b(self, x: D) -> D {
        busy();
        event(format!("take_b {}", x.0));
        self.b
    }

    pub fn in_closure(self, x: D) -> usize {
        busy();
        let read = || self.b.0.len() + x.0.len();
        read()
    }

    pub fn renamed(mut self, name: &'static str) -> usize {
        busy();
        self.a = D(name);
        event(format!("renamed {} {}", self.a.0, self.b.0));
        self.a.0.len()
    }

    pub async fn show_async(self, x: D) -> usize {
        busy();
        yield_now().await;
        event(format!("show_async {:?} {}", self.b, x.0));
        self.b.0.len()
    }

    pub async fn take_b_async(self) -> D {
        busy();
        yield_now().await;
        self.b
    }

    pub async fn renamed_async(mut self, name: &'static str) -> usize {
        busy();
        yield_now().await;
        self.a = D(name);
        event(format!("renamed_async {} {}", self.a.0, self.b.0));
        self.a.0.len()
    }
}

pub trait Consume {
    fn consume(self, x: D) -> usize;
}

impl Consume for Pair {
    fn consume(self, x: D) -> usize {
        busy();
        event(format!("consume {:?} {}", self.b, x.0));
        self.b.0.len()
    }
}

// ---- returned closures, whose signatures come from the return type ----

pub fn counter(offset: usize) -> impl Fn(&str) -> usize {
    busy();
    move |s| s.len() + offset
}

pub fn first_word() -> impl Fn(&str) -> &str {
    busy();
    |s| s.split(' ').next().unwrap_or("")
}

pub fn boxed_first_word() -> Box<dyn Fn(&str) -> &str> {
    busy();
    Box::new(|s| s.split(' ').next().unwrap_or(""))
}

pub async fn counter_async(offset: usize) -> impl Fn(&str) -> usize {
    busy();
    yield_now().await;
    move |s| s.len() + offset
}

pub async fn first_word_async() -> impl Fn(&str) -> &str {
    busy();
    yield_now().await;
    |s| s.split(' ').next().unwrap_or("")
}

pub async fn boxed_first_word_async() -> Box<dyn Fn(&str) -> &str> {
    busy();
    yield_now().await;
    Box::new(|s| s.split(' ').next().unwrap_or(""))
}

pub trait Words {
    fn counter(&self) -> impl Fn(&str) -> usize;
    fn first_word(&self) -> impl Fn(&str) -> &str;
    async fn counter_async(&self) -> impl Fn(&str) -> usize;
    async fn first_word_async(&self) -> impl Fn(&str) -> &str;
}

impl Words for Thing {
    fn counter(&self) -> impl Fn(&str) -> usize {
        busy();
        let offset = self.items.len();
        move |s| s.len() + offset
    }

    fn first_word(&self) -> impl Fn(&str) -> &str {
        busy();
        |s| s.split(' ').next().unwrap_or("")
    }

    async fn counter_async(&self) -> impl Fn(&str) -> usize {
        busy();
        yield_now().await;
        let offset = self.items.len();
        move |s| s.len() + offset
    }

    async fn first_word_async(&self) -> impl Fn(&str) -> &str {
        busy();
        yield_now().await;
        |s| s.split(' ').next().unwrap_or("")
    }
}

// ---- parameters configured out, and other parameter attributes ----

pub fn configured(#[cfg(any())] skipped: D, kept: D, #[cfg(all())] also: D) -> usize {
    busy();
    event(format!("configured {} {}", kept.0, also.0));
    kept.0.len()
}

pub async fn configured_async(
    #[cfg(any())] skipped: D,
    kept: D,
    #[cfg(all())] also: D,
    #[allow(unused_variables)] unused: D,
) -> usize {
    busy();
    yield_now().await;
    event(format!("configured_async {} {}", kept.0, also.0));
    kept.0.len()
}

impl Thing {
    pub fn configured_method(&self, #[cfg(any())] skipped: D, #[cfg(all())] kept: D) -> usize {
        busy();
        event(format!("configured_method {} {}", self.name, kept.0));
        kept.0.len()
    }

    pub async fn configured_method_async(
        &self,
        #[cfg(any())] skipped: D,
        #[cfg(all())] kept: D,
    ) -> usize {
        busy();
        yield_now().await;
        event(format!("configured_method_async {} {}", self.name, kept.0));
        kept.0.len()
    }
}

// ---- a trait-impl method whose signature is narrower than the trait's ----

pub trait Label {
    fn label(&self) -> &str;
    fn label_of<'a>(&self, other: &'a str) -> &'a str;
}

impl Label for Thing {
    fn label(&self) -> &'static str {
        busy();
        self.name
    }

    fn label_of(&self, _other: &str) -> &'static str {
        busy();
        self.name
    }
}

/// Calls through the trait's signature.
pub fn label_by_trait<L: Label>(labelled: &L) -> String {
    busy();
    labelled.label().to_string()
}

// ---- `async fn` parameters bound by `ref`, `ref mut`, `mut` and `@` ----

pub async fn async_ref_mut(ref mut v: Vec<D>, a: D) -> usize {
    busy();
    v.push(a);
    yield_now().await;
    event(format!("async_ref_mut {}", v.len()));
    v.len()
}

pub async fn async_ref(ref v: Vec<D>, mut m: Vec<D>, whole @ (_, _): (u8, u8)) -> usize {
    busy();
    m.push(D("pushed"));
    yield_now().await;
    event(format!("async_ref {} {} {whole:?}", v.len(), m.len()));
    v.len() + m.len()
}

pub fn sync_ref_mut(ref mut v: Vec<D>, a: D) -> usize {
    busy();
    v.push(a);
    event(format!("sync_ref_mut {}", v.len()));
    v.len()
}

// ---- an `async fn`'s future: its size and auto traits are as written ----

pub async fn large_params(a: [u64; 64], b: String) -> usize {
    busy();
    yield_now().await;
    a.len() + b.len()
}

pub async fn large_local(a: D) -> u64 {
    busy();
    let local = [3u64; 32];
    yield_now().await;
    event(format!("large_local {}", a.0));
    local.iter().sum()
}

pub async fn holds_rc_across_await(a: D) -> usize {
    busy();
    let shared = Rc::new(a);
    yield_now().await;
    Rc::strong_count(&shared)
}

pub async fn holds_cell(a: D) -> usize {
    busy();
    let cell = std::cell::Cell::new(a.0.len());
    yield_now().await;
    cell.get()
}

/// The size and auto traits of each `async fn`'s future, made and dropped
/// unpolled (its parameters drop with it).
pub fn async_futures() -> Vec<String> {
    let thing = Thing {
        name: "futures",
        items: Vec::new(),
    };
    let pair = || Pair {
        a: D("pa"),
        b: D("pb"),
    };
    let described = vec![
        describe!(large_params([1; 64], String::from("b"))),
        describe!(large_local(D("l"))),
        describe!(holds_rc_across_await(D("r"))),
        describe!(holds_cell(D("c"))),
        describe!(async_params(D("a"), D("b"), D("c"))),
        describe!(async_patterns((D("x"), D("w")), D("under"), D("z"))),
        describe!(async_ref_mut(vec![D("v")], D("a"))),
        describe!(async_ref(vec![], vec![], (1, 2))),
        describe!(configured_async(D("k"), D("a"), D("u"))),
        describe!(thing.async_method(D("a"), D("b"))),
        describe!(pair().show_async(D("x"))),
        describe!(pair().renamed_async("n")),
        describe!(counter_async(1)),
        describe!(thing.counter_async()),
    ];
    described
}

// ---- `if let` and `match` scrutinees' temporaries, as tails ----

pub fn if_let_tail(pick: bool, a: D) -> usize {
    busy();
    let _local = D("local");
    if let Some(n) = Some(temp("scrutinee")).filter(|_| pick).map(|d| d.0.len()) {
        n + a.0.len()
    } else {
        event("else");
        0
    }
}

pub fn match_tail(pick: bool, a: D) -> usize {
    busy();
    let _local = D("local");
    match temp("scrutinee").0.len() > 3 && pick {
        true => a.0.len(),
        false => {
            event("false arm");
            0
        }
    }
}

pub async fn if_let_tail_async(pick: bool, a: D) -> usize {
    busy();
    yield_now().await;
    let _local = D("local");
    if let Some(n) = Some(temp("scrutinee")).filter(|_| pick).map(|d| d.0.len()) {
        n + a.0.len()
    } else {
        event("else");
        0
    }
}

// ---- inner attributes, inline and export attributes ----

pub fn inner_attribute(a: D) -> usize {
    #![allow(unused_variables)]
    busy();
    let unused = D("unused");
    a.0.len()
}

#[cfg_attr(all(), inline(never))]
pub fn never_inlined(a: D) -> usize {
    busy();
    event(frames());
    a.0.len()
}

#[cfg_attr(any(), inline(never))]
#[cfg_attr(not(debug_assertions), inline)]
pub fn inline_when_optimised(a: D) -> usize {
    busy();
    a.0.len()
}

/// Exported under a name of its own in each copy and crate.
#[unsafe(export_name = concat!(module_path!(), "::exported"))]
pub extern "C" fn exported(x: u64) -> u64 {
    busy();
    x + 2
}

// ---- a function called from a thread-local's destructor ----

/// Called at the thread's exit, possibly after the runtime's own
/// thread-local state is gone: no `D` (the event log may be gone too).
pub fn at_thread_exit(name: &'static str) -> usize {
    let boxed = Box::new(name.len());
    *boxed
}

/// Sends what `at_thread_exit` returned when it drops.
pub struct OnExit(pub &'static str, pub std::sync::mpsc::Sender<usize>);

impl Drop for OnExit {
    fn drop(&mut self) {
        let _ = self.1.send(at_thread_exit(self.0));
    }
}

/// A tail temporary that borrows a parameter, and one that logs its drop:
/// an `async fn` drops them before its parameters, in every edition.
pub async fn async_tail_borrows_param(cell: std::cell::RefCell<Vec<D>>, _other: D) -> usize {
    yield_now().await;
    temp("tail").0.len() + cell.borrow().len()
}
