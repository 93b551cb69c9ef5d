//! The `#[batch_alloc]` attribute of [batch-alloc](https://docs.rs/batch-alloc).
//!
//! Use it through the `batch-alloc` crate, which re-exports it; its
//! documentation is on [`batch_alloc`](macro@batch_alloc).
//!
//! Layout: `args.rs` parses the arguments; `expand.rs` handles the item and
//! says, with a warning, when a function is left as written; `scoped/`
//! makes a function a batch scope (how it opens the scope: a call to
//! itself, its body in a closure, a guard, a future for `async`; the walk
//! over its body; leaves); `shared/` the paths, sites and `Box::new`
//! spellings the expansion builds from.

mod args;
mod expand;
mod scoped;
mod shared;

use proc_macro::TokenStream;

/// Makes an annotated function a *batch scope* while it runs: what the
/// thread allocates meanwhile comes from runs of slots reserved in one call.
///
/// Put it on a function, a method or a whole `impl` block. When the
/// function starts, it opens this thread's batch scope, or joins the one a
/// caller opened; when it returns, however it returns, it closes what it
/// opened. While the scope is open, every `Box::new(value)` of an annotated
/// function takes its slot from the thread's run of its size class (a
/// pointer bump, the class known at compile time), and so does every other
/// allocation on the thread that the runtime has a size class for: strings,
/// vectors, `Rc`, hash maps, whatever called code allocates, made in loops,
/// iterator adapters, recursion or one call into a library. Everything
/// allocated is an ordinary allocation: a `Box<T>` is a real `Box<T>`,
/// freed on any thread at any time; a `String` grows and frees as always.
/// No type changes.
///
/// ```
/// use batch_alloc::{batch_alloc, BatchAlloc};
///
/// #[global_allocator]
/// static GLOBAL: BatchAlloc = BatchAlloc::system();
///
/// struct Record {
///     line: String,
/// }
///
/// #[batch_alloc]
/// fn parse(lines: &[&str]) -> Vec<Box<Record>> {
///     lines
///         .iter()
///         .map(|line| Box::new(Record { line: line.to_uppercase() }))
///         .collect()
/// }
///
/// assert_eq!(parse(&["a", "b"])[1].line, "B");
/// ```
///
/// Where `BatchAlloc` is not the global allocator (a library cannot choose
/// for its users), the same code runs with plain allocations: correct, just
/// not faster (a debug build says so once, on stderr).
///
/// # Where it goes
///
/// Free functions, inherent and trait-impl methods, trait methods with a
/// default body, `async fn`s, generic, `unsafe` and `extern` functions, and
/// `impl` blocks (every method in them). A `const fn` is left as it is: it
/// cannot allocate. Anything else (a struct, a trait, a module, a method
/// without a body) is a compile error. For code with no function of its own
/// to annotate (a derived `Deserialize` behind one `serde_json::from_str`
/// call), `batch_alloc::scope(|| ..)` opens a scope around any code.
///
/// # What it rewrites
///
/// The function keeps its body as written; a first statement decides where
/// memory comes from, and nothing else: drop order, returns, coercions,
/// `?`, panics, `#[track_caller]` locations and names in backtraces stay
/// what they were.
///
/// - A **method of an annotated `impl` block** whose call to itself is
///   certain to be itself (see below) starts with a test: inside an open
///   scope (an annotated caller's, the common case) it is a thread-local
///   read and a test, and the body runs as written; where none is open,
///   the method opens one and calls itself inside it with its own
///   arguments (`Self::name(self, ..)`, or `<Self as Trait>::name(..)` in
///   a trait impl): one more frame of the method at the top call.
/// - **Any other synchronous function** runs its body in a closure of its
///   own, always inlined, that takes every parameter in, in order, and
///   whose return type is the function's: called where it is inside an
///   open scope, and around a scope it opens otherwise. A function
///   annotated alone cannot tell whether `name` is itself (a free
///   function) or something else of the module (an associated one); a
///   trait-impl method may be more general than its trait, whose signature
///   a call to itself would go through. Backtraces show the body as
///   `name::{closure}`. A `#[track_caller]` or `unsafe` function that cannot
///   call itself, or one with a pattern parameter, starts with a scope
///   guard instead, which costs a few instructions more per call.
/// - A **leaf** function is left as written: one with no loop, no call of a
///   function by path (`f(x)`, `Vec::new()`, `serde_json::from_str(s)`)
///   and no macro call other than the standard formatting and assertion
///   macros; only method calls, field and index accesses, operators,
///   constructors (`Some(x)`) and closures of the same. That is how
///   accessors look (`self.bytes.get(self.pos).copied()`), called many
///   times per scope, where a check would cost more than the call: a leaf
///   runs in its caller's scope. Annotated alone (not as part of an `impl`
///   block), a leaf gets a warning that says so.
/// - An **`async fn`'s body**, and each **`async` block**, becomes a future
///   each of whose polls opens or joins the scope of the thread polling it
///   and closes it before the poll returns: no scope is held while the
///   future is suspended, wherever its awaits are (written out, in a loop's
///   head, produced by `join!`, `select!` or any macro), and each poll is
///   served on its own thread. The future's output, `Send`-ness and
///   `Unpin`-ness are unchanged.
/// - A **closure** runs inside the scope open where it is called (the
///   function's, for `iter().map(|x| ..)`), and costs nothing per call; one
///   that runs after the function returns, or on another thread, runs in
///   whatever scope is open there.
/// - Each **`Box::new(value)`** call becomes a typed allocation from the
///   open scope, or `Box::new` when none is open (a thread-local read and a
///   test more). These spellings are recognised, each with or without
///   `::<T>` on `Box`: `Box::new`, `std::boxed::Box::new`,
///   `::std::boxed::Box::new`, `alloc::boxed::Box::new`,
///   `::alloc::boxed::Box::new`.
/// - **Loops** are left as written: their boxes, like every other
///   allocation of the function, come from the scope's runs, whose refills
///   double.
///
/// Nested items are not part of the function and are left alone; so are
/// macro invocations (`vec![Box::new(x)]`: the attribute cannot know what a
/// macro makes of its tokens), though their allocations are served all the
/// same, as any allocation made in a capturing scope. An `async` closure's
/// body is left as written: it is served by the scope of whatever polls it.
/// A `Box` of the user's own is a compile error at the call, never a silent
/// change of type: the user's `Box::new` path is passed along to a function
/// that requires it to be the standard one.
///
/// # What does not change
///
/// Evaluation order (the value is computed before the slot is taken, as
/// with `Box::new`), the drop order of parameters and locals, the value of
/// a `loop`, labels, `break`, `continue`, `return`, `?`, coercions,
/// `#[track_caller]` locations and panics: a test compiles one corpus as
/// written and annotated and compares what both do, event by event. The generated code names only
/// `::batch_alloc::__private::...`, its locals have mixed-site spans (user
/// code can neither see nor shadow them), and it contains no `unsafe`, so
/// it compiles under `#![forbid(unsafe_code)]`.
///
/// # Arguments
///
/// - `#[batch_alloc(quiet)]`: no warning when the attribute leaves the
///   function as written (see Warnings).
/// - `#[batch_alloc(per_site)]`, and its older name `boxes`: deprecated,
///   and the same as no argument, with a warning at the argument. They
///   named the per-site form (a batch per `Box::new` site of a loop), which
///   the default form replaced: it serves every box that form did, from
///   the thread's runs, and everything else the function allocates.
///
/// Anything else is an error naming what it found. Whether scopes serve
/// every allocation or only annotated `Box::new`s is a process-wide choice:
/// `batch_alloc::set_capture`.
///
/// # Warnings
///
/// When the attribute leaves a function annotated alone as written (a
/// leaf: it runs in its caller's scope), the compiler warns at its name,
/// says why and what to write instead: annotate the callers, or write its
/// body as `batch_alloc::scope(|| ..)`. An `impl` block says nothing of its
/// leaves (annotating a block is how a user says "all of these", accessors
/// included). `quiet` (or `#[allow(deprecated)]` on the function, which the
/// warning borrows) silences it.
#[proc_macro_attribute]
pub fn batch_alloc(args: TokenStream, item: TokenStream) -> TokenStream {
    let original = proc_macro2::TokenStream::from(item.clone());
    match expand::expand(args.into(), item.into()) {
        Ok(expanded) => expanded.into(),
        Err(error) => {
            let mut tokens = error.into_compile_error();
            tokens.extend(original);
            tokens.into()
        }
    }
}

/// Not public API: the expansion of each `#[batch_alloc]` item among
/// `items`, as a string literal, for the test that keeps
/// `examples/macro-expanded.rs` in sync.
#[doc(hidden)]
#[proc_macro]
pub fn __expand_to_string(items: TokenStream) -> TokenStream {
    match expand::expand_all(items.into()) {
        Ok(expanded) => {
            let text = expanded.to_string();
            quote::quote!(#text).into()
        }
        Err(error) => error.into_compile_error().into(),
    }
}
