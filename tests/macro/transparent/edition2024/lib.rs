//! The differential corpus of `#[batch_alloc]` compiled in edition 2024,
//! with the functions only this edition accepts (`../edition_2024.rs`):
//! see ../edition2021/lib.rs, the same in 2021.
#![deny(warnings)]
// What the corpus does on purpose (by-value boxes, `ref` parameters, an
// `async fn` in a public trait).
#![allow(clippy::boxed_local, clippy::toplevel_ref_arg, async_fn_in_trait)]

include!("../copies.rs");

/// The functions only edition 2024 accepts, as written.
pub mod as_written_2024 {
    include!("../edition_2024.rs");
    include!("../cases_2024.rs");
}

/// The same annotated (written by the build script).
pub mod annotated_2024 {
    include!(concat!(env!("OUT_DIR"), "/edition_2024.rs"));
    include!("../cases_2024.rs");
}

/// Every case: its name, then the case as written and annotated.
pub fn cases() -> Vec<support::CasePair> {
    let mut written = as_written::cases();
    written.extend(as_written_2024::cases());
    let mut annotated = annotated::cases();
    annotated.extend(annotated_2024::cases());
    support::pairs(written, annotated)
}
