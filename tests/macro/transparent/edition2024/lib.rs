//! The differential corpus of `#[batch_alloc]` compiled in edition 2024,
//! with the functions only this edition accepts (`../edition_2024.rs`):
//! see edition2021/lib.rs, which is the same in 2021.
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
    include!("../edition_2024.rs");
    include!("../cases.rs");
    include!("../cases_2024.rs");
}

/// The corpus annotated (written by the build script).
pub mod annotated {
    include!(concat!(env!("OUT_DIR"), "/corpus.rs"));
    include!(concat!(env!("OUT_DIR"), "/alone.rs"));
    include!(concat!(env!("OUT_DIR"), "/recursion.rs"));
    include!(concat!(env!("OUT_DIR"), "/edition_2024.rs"));
    include!("../cases.rs");
    include!("../cases_2024.rs");
}

/// Every case: its name, then the case as written and annotated.
pub fn cases() -> Vec<support::CasePair> {
    let mut as_written = as_written::cases();
    as_written.extend(as_written::cases_2024());
    let mut annotated = annotated::cases();
    annotated.extend(annotated::cases_2024());
    support::pairs(as_written, annotated)
}
