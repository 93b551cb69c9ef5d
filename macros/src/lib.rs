//! The `#[batch_alloc]` attribute of [batch-alloc](https://docs.rs/batch-alloc).
//!
//! Use it through the `batch-alloc` crate, which re-exports it; its
//! documentation is on [`batch_alloc`](macro@batch_alloc).
//!
//! Layout: `args.rs` parses the arguments; `expand.rs` handles the item;
//! `guard.rs` puts a scope guard in front of a synchronous body, and
//! `future.rs` makes an `async fn` one scoped future; `runtime.rs` finds
//! the facade's path and builds what the expansion names.

mod args;
mod expand;
mod future;
mod guard;
mod runtime;

use proc_macro::TokenStream;

/// Makes an annotated function a *batch scope* while it runs: what the
/// thread allocates meanwhile comes from runs of slots reserved in one call.
///
/// Put it on a function, a method or a whole `impl` block. When the
/// function starts, it opens this thread's batch scope, or joins the one a
/// caller opened; when it returns, however it returns, it closes what it
/// opened. While the scope is open, every allocation on the thread that
/// the runtime has a size class for comes from the thread's run of that
/// class, one pointer bump each: boxes, strings, vectors, `Rc`, hash maps,
/// whatever called code allocates, made in `for` and `while` loops,
/// iterator chains (`.map(Box::new).collect()`), recursion or one call
/// into a library. Everything allocated is an ordinary allocation: a
/// `Box<T>` is a real `Box<T>`, freed on any thread at any time; a
/// `String` grows and frees as always. No type changes.
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
/// # What it adds
///
/// The function stays the function you wrote: its body is the same block,
/// with your tokens, spans and edition; its parameters are not re-bound;
/// its name resolves as written. Drop order, returns, coercions, `?`,
/// panics, `#[track_caller]` locations, diagnostics and the stack a call
/// takes are what they were.
///
/// - A **synchronous function** gets two statements in front of its body:
///
///   ```text
///   let __scope = pin!(Scope::new());
///   enter(SITE, __scope.as_ref());
///   ```
///
///   `enter` joins the thread's open scope (a thread-local read and a test:
///   the common case, an annotated caller's) or, out of line, opens one.
///   The guard is the body's first local, so it drops after every other
///   one, however the function returns or unwinds, and closes the scope if
///   it opened it. A body of up to 150 tokens with no `#[inline]` or
///   `#[cold]` of its own gets `#[inline]`, so that the guard does not
///   change what the compiler inlines.
/// - An **`async fn`** becomes what the compiler makes of it anyway: a
///   function returning one future that holds its parameters, moved in
///   as the `async fn` moves them, whose every poll opens or joins the
///   scope of the thread polling it and closes what it opened before the
///   poll returns. No scope is held while the future is suspended, and
///   each poll is served on its own thread. The future's output, size,
///   `Send`-ness and `Unpin`-ness are the `async fn`'s.
/// - **Closures and `async` blocks** in the body are left as written: a
///   closure runs in the scope open where it is called (the function's,
///   for `iter().map(|x| ..)`); one that runs after the function returns,
///   on another thread, or a block polled later runs in whatever scope is
///   open there.
///
/// The generated code names only `<facade>::__private::...`, its locals
/// have mixed-site spans (user code can neither see nor shadow them), and
/// it contains no `unsafe`, so it compiles under
/// `#![forbid(unsafe_code)]`.
///
/// # Arguments
///
/// - `#[batch_alloc]`: none needed.
/// - `#[batch_alloc(crate = path)]` (or `crate = "path"`): where the
///   `batch-alloc` crate is, for a library that re-exports the attribute
///   (`#[mylib::batch_alloc(crate = mylib::batch_alloc)]`). A dependency
///   renamed in `Cargo.toml` (`ba = { package = "batch-alloc", .. }`) is
///   found without it.
///
/// Anything else is an error naming what it found. A method's own
/// `#[batch_alloc(..)]` inside an annotated `impl` block is checked the
/// same way; the block's covers the method.
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
