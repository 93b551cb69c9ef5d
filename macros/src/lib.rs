//! The `#[batch_alloc]` attribute of [batch-alloc](https://docs.rs/batch-alloc).
//!
//! Use it through the `batch-alloc` crate, which re-exports it; its
//! documentation is on [`batch_alloc`](macro@batch_alloc).
//!
//! Layout: `args.rs` parses the (empty) argument list, `expand.rs` handles
//! the item, `loops.rs` finds loop nests (one visitor), `sites.rs` rewrites
//! the `Box::new` calls of a nest (another), `box_new.rs` says which calls
//! those are, and `emit.rs` writes the generated code.

mod args;
mod box_new;
mod emit;
mod expand;
mod nests;
mod scoped;
mod sites;

use proc_macro::TokenStream;

/// Serves the boxes a function's loops make from loop-scoped batches.
///
/// Put it on a function, a method or a whole `impl` block. Every
/// `Box::new(value)` that runs as part of a loop's iterations then takes its
/// slot from a batch declared just outside the loop: a run of slots reserved
/// from the runtime in one call, handed out by a pointer bump. The boxes are
/// ordinary `Box<T>`s: move them anywhere, drop them on any thread, coerce
/// them to `Box<dyn Trait>`, pin, leak or `into_raw` them. No type changes.
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
///     let mut out = Vec::with_capacity(lines.len());
///     for line in lines {
///         out.push(Box::new(Record { line: line.to_uppercase() }));
///     }
///     out
/// }
///
/// assert_eq!(parse(&["a", "b"])[1].line, "B");
/// ```
///
/// Where `BatchAlloc` is not the global allocator (a library cannot choose
/// for its users), the same code runs with plain `Box::new`: correct, just
/// not faster.
///
/// # Where it goes
///
/// Free functions, inherent and trait-impl methods, trait methods with a
/// default body, `async fn`s, generic, `unsafe` and `extern` functions, and
/// `impl` blocks (every method in them). A `const fn` is left as it is: it
/// cannot call `Box::new`. Anything else (a struct, a trait, a module, a
/// method without a body) is a compile error.
///
/// # What is rewritten
///
/// A `Box::new(value)` call that sits lexically inside a `for`, `while`,
/// `while let` or `loop` of the body: in the loop body at any depth of
/// blocks, `if`/`else` branches, `match` arms, `unsafe` blocks, labelled
/// blocks and `break` values, in a `while` condition, and in inner loops.
/// Each such call (each *call site*) gets a batch of its own, since one call
/// site boxes one type and a batch serves one size class at a time. These
/// spellings are recognised, each with or without `::<T>` on `Box`:
/// `Box::new`, `std::boxed::Box::new`, `::std::boxed::Box::new`,
/// `alloc::boxed::Box::new`, `::alloc::boxed::Box::new`.
///
/// # What is left as written, and why
///
/// - **Closures**, and **`async` blocks**: they may run after the loop has
///   ended, on another thread, or never, so a batch of the loop's is not
///   theirs to use. A loop *inside* a closure or an `async` block is
///   rewritten, with its batches inside the closure or block.
/// - **Nested items** (`fn`, `impl`, `mod` inside the body): they are not
///   part of this function; annotate them separately.
/// - **Macro invocations**, such as `vec![Box::new(x)]` or
///   `println!("{}", Box::new(x))`: the attribute sees only the macro's
///   tokens and cannot know what the macro makes of them (`stringify!` would
///   print the rewrite; a user macro called `vec` may not take expressions at
///   all), and by the time the macro has expanded, the attribute has run.
///   Write `let b = Box::new(x);` before the invocation and it is batched.
/// - **`Box::new` as a value**, as in `.map(Box::new)`: the call happens
///   inside `map`, outside this function's loops.
/// - **Other spellings**: `<Box<T>>::new`, a renamed import
///   (`use std::boxed::Box as B`), `crate::Box::new`.
/// - **A `for` loop's head** (`for x in make(Box::new(y))`): it runs once,
///   before the loop.
/// - `Box::new` outside any loop: a batch would be one box long.
///
/// # A type called `Box`
///
/// The attribute sees syntax only: it takes every `Box::new` above for the
/// standard one. Each rewritten call still passes the user's own `Box::new`
/// path along, to a function that requires it to be a `fn(T) ->
/// std::boxed::Box<T>`, so a `Box` of the user's own becomes a compile error
/// at that call (`expected 'new' to return 'Box<_>', but it returns
/// 'Box<_>'`), never a silent change of type. Call such a type through
/// another path (`self::Box::new`) or leave that function unannotated.
///
/// # Trip counts
///
/// A `for` loop's batches are sized by the lower bound of its iterator's
/// `size_hint()`; `while`, `while let` and `loop` have no trip count, and
/// their batches grow their refills geometrically. Nothing is reserved before
/// the first allocation, so a loop that runs zero times costs nothing, and
/// unused slots go back when the batch ends, however the loop ends (`break`,
/// `return`, `?`, a panic). The runtime serves very short loops (a hint of
/// two or less, and the first two boxes of a batch without one) as plain
/// boxes, since a refill only pays for itself over a longer run.
///
/// # Nested loops
///
/// An inner loop's call sites take batches declared outside the outermost
/// loop, not at the inner loop, so a short inner loop inside a long outer
/// one still gets long runs of slots. Measured with `cargo bench --bench
/// macro` (64-byte records, glibc behind `BatchAlloc<System>`), the two
/// placements written out by hand:
///
/// | loops (outer × inner) | without the attribute | batch at the inner loop | batch at the outermost loop |
/// |---|---|---|---|
/// | 10,000 × 3 | 768 µs | 515 µs | 220 µs |
/// | 10 × 3,000 | 854 µs | 186 µs | 201 µs |
///
/// (Medians of one run, allocating and dropping all 30,000 boxes.) At the
/// inner loop, every pass of the outer loop pays for a refill and a
/// give-back to make three boxes; at the outermost loop the batch refills
/// once per span, 2.3 times faster. With a long inner loop the two are
/// within the machine's noise of each other. The price of the choice: an
/// inner loop's batch has no trip-count hint (it starts small and grows),
/// and keeps its unused slots until the outermost loop ends.
///
/// # What does not change
///
/// Evaluation order (the value is computed before the slot is taken, as
/// with `Box::new`), drop order, the value of a `loop`, labels, `break`,
/// `continue`, `return`, `?` and panics. A `for` loop is expanded the way the
/// compiler lowers it, `match IntoIterator::into_iter(head) { iter => .. }`,
/// so temporaries of the head live exactly as long as before
/// (`for x in make().iter()` compiles) and `into_iter` runs once, on the
/// user's value. A future returned by an `async fn` stays `Send`.
///
/// # What it generates
///
/// ```text
/// for line in lines {                     match IntoIterator::into_iter(lines) {
///     out.push(Box::new(parse(line)));        __iter => {
/// }                                               let __hint = Iterator::size_hint(&__iter).0;
///                                                 let mut __batch0 = RawBatch::with_capacity(__hint);
///                                   ==>           for line in __iter {
///                                                     out.push(alloc(&mut __batch0, Box::new, parse(line)));
///                                                 }
///                                             }
///                                         };
/// ```
///
/// Every path in it is `::batch_alloc::__private::...`, so user imports and
/// shadowed prelude names (`Vec`, `Option`, `Iterator`) do not matter; every
/// local has a mixed-site span, so it can neither see nor shadow a user's
/// `__iter`; and there is no `unsafe` in it, so it compiles under
/// `#![forbid(unsafe_code)]`. `examples/macro-expanded.rs` in the repository
/// shows complete expansions.
///
/// # Arguments
///
/// None: everything follows from the syntax of the loops. Anything inside
/// `#[batch_alloc(...)]` is an error naming what it found.
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
