//! Compile tests of `#[batch_alloc]`.
//!
//! `pass/`: each construct the attribute accepts compiles under
//! `#![forbid(unsafe_code)]` and `#![deny(warnings)]`, and its `main` checks
//! that it behaves as written. `fail/`: each error, with its message
//! committed beside it. Regenerate the messages with
//! `TRYBUILD=overwrite cargo test -p batch-alloc-ui-tests` and read the diff.
//!
//! A package of its own (see `Cargo.toml`), so that trybuild's project for
//! the cases depends on the facade and serde only.

#[test]
fn ui() {
    // trybuild builds the cases and their dependencies with cargo, in a
    // project of its own that this workspace's profiles do not reach: line
    // tables, as the workspace's [profile.dev] keeps, are all a failing
    // case's backtrace needs, and full debug info made that build a third
    // longer.
    if std::env::var_os("CARGO_PROFILE_DEV_DEBUG").is_none() {
        std::env::set_var("CARGO_PROFILE_DEV_DEBUG", "line-tables-only");
    }
    let t = trybuild::TestCases::new();
    t.pass("pass/*.rs");
    t.compile_fail("fail/*.rs");
}
