//! Compile tests of `#[batch_alloc]`.
//!
//! `tests/ui/pass`: each construct the attribute accepts compiles under
//! `#![forbid(unsafe_code)]` and `#![deny(warnings)]`, and its `main` checks
//! that it behaves as written. `tests/ui/fail`: each error, with its message
//! committed beside it. Regenerate the messages with
//! `TRYBUILD=overwrite cargo test --test ui` and read the diff.
//! `tests/ui/bugs`: cases that should pass and do not yet, each naming its
//! bug; `ui_known_bugs` runs them when asked (`-- --ignored`).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}

#[test]
#[ignore = "bug: a loop in a const context (array repeat length, const generic argument) of an \
            annotated function gets a scope guard and no longer compiles"]
fn ui_known_bugs() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/bugs/*.rs");
}
