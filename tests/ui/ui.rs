//! Compile tests of `#[batch_alloc]`.
//!
//! `tests/ui/pass`: each construct the attribute accepts compiles under
//! `#![forbid(unsafe_code)]` and `#![deny(warnings)]`, and its `main` checks
//! that it behaves as written. `tests/ui/fail`: each error, with its message
//! committed beside it. Regenerate the messages with
//! `TRYBUILD=overwrite cargo test --test ui` and read the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
