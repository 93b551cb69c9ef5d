//! The differential corpus of `#[batch_alloc]` compiled in edition 2021
//! (edition2024/ compiles it in 2024): `as_written`, and `annotated` with
//! the attribute on every function, each with the same cases. The test
//! that runs and compares them is `transparent` of batch-alloc-macro-tests
//! (`../mod.rs`).
//!
//! Warnings are errors here: the annotated copy compiles without a warning
//! that the copy as written does not have.
#![deny(warnings)]
#![allow(
    dead_code,
    async_fn_in_trait,
    clippy::boxed_local,
    clippy::extra_unused_type_parameters,
    clippy::let_and_return,
    clippy::needless_pass_by_value,
    clippy::new_ret_no_self,
    clippy::ptr_arg,
    clippy::toplevel_ref_arg,
    clippy::type_complexity,
    clippy::vec_box
)]

pub mod support {
    include!("../support.rs");
}

/// The corpus as written.
pub mod as_written {
    include!("../corpus.rs");
    include!("../alone.rs");
    include!("../recursion.rs");
    include!("../cases.rs");
}

/// The corpus annotated (written by the build script).
pub mod annotated {
    include!(concat!(env!("OUT_DIR"), "/corpus.rs"));
    include!(concat!(env!("OUT_DIR"), "/alone.rs"));
    include!(concat!(env!("OUT_DIR"), "/recursion.rs"));
    include!("../cases.rs");
}

/// Every case: its name, then the case as written and annotated.
pub fn cases() -> Vec<support::CasePair> {
    support::pairs(as_written::cases(), annotated::cases())
}
