//! The `#[batch_alloc]` attribute of [batch-alloc](https://docs.rs/batch-alloc).
//!
//! Use it through the `batch-alloc` crate, which re-exports it; its
//! documentation is on [`batch_alloc`](macro@batch_alloc).
//!
//! Layout: `args.rs` parses the arguments, `expand.rs` handles the item
//! (and warns when there is nothing to rewrite, from what `inventory.rs`
//! counted), `scoped.rs` rewrites a body for batch scopes (the default),
//! `nests.rs` and `sites.rs` rewrite it for per-site batches (`boxes`),
//! `box_new.rs` says which calls are `Box::new`, and `emit.rs` writes the
//! pieces of generated code both use.

/// The `VisitMut` methods every rewriting walk shares: a walk goes only
/// where code runs when the function runs. Not into nested items (a nested
/// `fn` is not part of this function, and carries its own `#[batch_alloc]`
/// if it wants one), macro invocations (their tokens mean whatever the macro
/// makes of them: `vec![Box::new(x)]` keeps what the user wrote), `const`
/// blocks or an array repeat's length (compile time, where neither a batch
/// nor a scope guard can run), generic arguments, types or patterns.
macro_rules! visit_only_run_time_code {
    () => {
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}

        fn visit_macro_mut(&mut self, _: &mut syn::Macro) {}

        fn visit_expr_const_mut(&mut self, _: &mut syn::ExprConst) {}

        fn visit_expr_repeat_mut(&mut self, repeat: &mut syn::ExprRepeat) {
            self.visit_expr_mut(&mut repeat.expr);
        }

        fn visit_generic_argument_mut(&mut self, _: &mut syn::GenericArgument) {}

        fn visit_type_mut(&mut self, _: &mut syn::Type) {}

        fn visit_pat_mut(&mut self, _: &mut syn::Pat) {}
    };
}

mod args;
mod box_new;
mod emit;
mod expand;
mod inventory;
mod nests;
mod scoped;
mod sites;

use proc_macro::TokenStream;

/// Makes a function's loops the allocator of what their iterations
/// allocate.
///
/// Put it on a function, a method or a whole `impl` block. The outermost
/// annotated loop running on a thread then opens that thread's *batch
/// scope* as it starts, and annotated loops that run inside it, in the same
/// function or in functions it calls, recursively, join it; the scope closes
/// when that loop ends, however it ends. While it is open, every
/// `Box::new(value)` of an annotated function takes its slot from the
/// thread's run of slots of its size class (a pointer bump), and so does
/// every other allocation on the thread that the runtime has a size class
/// for (strings, vectors, `Rc`, hash maps, whatever called code allocates).
/// Everything allocated is an ordinary allocation: a `Box<T>` is a real
/// `Box<T>`, freed on any thread at any time; a `String` grows and frees as
/// always. No type changes.
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
/// for its users), the same code runs with plain allocations: correct, just
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
/// # What it rewrites
///
/// - Each **loop nest** of a body (each `for`, `while`, `while let` or `loop`
///   not inside another loop of the same body) gets a scope guard declared
///   just outside it, entered as the loop starts: about six instructions,
///   once, whether or not the loop runs.
/// - Each **`Box::new(value)`** call of the function, in or out of loops,
///   becomes a typed allocation from the open scope, or `Box::new` when none
///   is open (about three instructions more). These spellings are
///   recognised, each with or without `::<T>` on `Box`: `Box::new`,
///   `std::boxed::Box::new`, `::std::boxed::Box::new`,
///   `alloc::boxed::Box::new`, `::alloc::boxed::Box::new`.
/// - Each **`.await`** inside a nest closes the scope before the await (if
///   the nest's guard opened it) and opens or joins one after, on whichever
///   thread the future runs then: nothing of a thread's scope is held while
///   the future is suspended, and the future stays `Send`.
///
/// Closures and `async` blocks are bodies of their own: their loops get
/// their own guards (they may run after the loop, elsewhere, or never). A
/// loop whose body awaits inside a macro invocation (`assert_eq!(f.await,
/// x)`, `select!`) gets no guard at all, since the attribute cannot close
/// the scope around an await it cannot see; its `Box::new`s still use a
/// scope a caller opened. Loops in constant positions (an array's length, a
/// const generic argument) run at compile time and are left alone.
/// Nested items are not part of the function and are left alone; so are
/// macro invocations (`vec![Box::new(x)]`: the attribute cannot know what a
/// macro makes of its tokens; the allocation is still captured, as an
/// allocation, if it runs in a capturing scope). A `Box` of the user's own
/// is a compile error at the call, never a silent change of type: the
/// user's `Box::new` path is passed along to a function that requires it to
/// be the standard one.
///
/// What a scope serves, what it leaves to the inner allocator, and what it
/// costs in memory: `docs/scopes.md` in the repository.
///
/// # What does not change
///
/// Evaluation order (the value is computed before the slot is taken, as
/// with `Box::new`), drop order, the value of a `loop`, labels, `break`,
/// `continue`, `return`, `?` and panics. The generated code names only
/// `::batch_alloc::__private::...`, its locals have mixed-site spans (user
/// code can neither see nor shadow them), and it contains no `unsafe`, so
/// it compiles under `#![forbid(unsafe_code)]`.
/// `examples/macro-expanded.rs` in the repository shows complete
/// expansions.
///
/// # Arguments
///
/// - `#[batch_alloc(boxes)]`: the per-site form. Each `Box::new` that runs
///   as part of a loop's iterations takes its slot from a batch of its own,
///   declared just outside the outermost loop and sized by a `for` loop's
///   `size_hint()` (the others grow their refills geometrically); nothing
///   else changes, and no scope opens. Closures, macro invocations, a `for`
///   loop's head and calls outside loops are left as written. Inside a
///   scope a caller opened, the function's other allocations are still
///   captured, like everything on the thread.
/// - `#[batch_alloc(quiet)]`: no warning when there is nothing to rewrite.
///
/// Both may be given, in either order. Anything else is an error naming
/// what it found. Whether scopes capture every allocation or only annotated
/// `Box::new`s is a process-wide choice: `batch_alloc::set_capture`.
///
/// # Warnings
///
/// When the attribute finds nothing to rewrite (no loop and no `Box::new`
/// call; in `boxes` form, no `Box::new` inside a loop), the compiler warns
/// at the function's name and says why, naming the usual causes: `Box::new`
/// only inside a macro call, only passed as a value (`.map(Box::new)`), or,
/// in `boxes` form, only inside closures. On an `impl` block it warns once,
/// and only if no method had anything to rewrite. `quiet` (or
/// `#[allow(deprecated)]` on the function, which the warning borrows)
/// silences it.
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
