//! The differential corpus of `#[batch_alloc]` compiled in edition 2021
//! (edition2024/ compiles it in 2024): `as_written`, and `annotated` with
//! the attribute on every function, each with the same cases. The test
//! that runs and compares them is `transparent` of batch-alloc-macro-tests
//! (`../mod.rs`).
//!
//! Warnings are errors here: the annotated copy compiles without a warning
//! that the copy as written does not have.
#![deny(warnings)]
// What the corpus does on purpose (by-value boxes, `ref` parameters, an
// `async fn` in a public trait).
#![allow(clippy::boxed_local, clippy::toplevel_ref_arg, async_fn_in_trait)]

include!("../copies.rs");

/// Every case: its name, then the case as written and annotated.
pub fn cases() -> Vec<support::CasePair> {
    support::pairs(as_written::cases(), annotated::cases())
}
