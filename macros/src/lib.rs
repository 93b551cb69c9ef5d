//! The `#[batch_alloc]` attribute of [batch-alloc](https://docs.rs/batch-alloc).
//!
//! Use it through the `batch-alloc` crate, which re-exports it.

mod args;
mod box_new;
mod emit;
mod expand;
mod loops;
mod sites;

use proc_macro::TokenStream;

/// Rewrites boxing loops into loop-scoped batches. (docs pending)
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
