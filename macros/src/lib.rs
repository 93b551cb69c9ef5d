//! The `#[batch_alloc]` attribute of [batch-alloc](https://docs.rs/batch-alloc).
//!
//! Use it through the `batch-alloc` crate, which re-exports it.

use proc_macro::TokenStream;

/// Rewrites boxing loops into loop-scoped batches. Not yet implemented: the
/// attribute currently returns the item unchanged.
#[proc_macro_attribute]
pub fn batch_alloc(_args: TokenStream, item: TokenStream) -> TokenStream {
    item
}
