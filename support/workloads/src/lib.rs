//! The programs batch-alloc's examples run, its tests check and its benches
//! measure, and the helpers its tests share: written once, and reached by
//! `use` rather than included file by file into each binary.
//!
//! Each program writes its code once and out twice: as written (`plain`)
//! and under `#[batch_alloc]` (`batched`). Nothing here installs a global
//! allocator: a binary has one, chosen at compile time, and the example,
//! test or bench that runs a program declares it.
//!
//! - [`expr_parser`], [`stmt_parser`], [`linked_list`], [`deserialize`]:
//!   the examples' programs (`examples/<name>.rs` runs each), with their
//!   inputs, command lines and comparisons;
//! - [`timing`], [`versions`], [`cli`]: what the examples share: the clock
//!   and the tables, the runs in rotation, the command line;
//! - [`rng`]: the seeded generators of the inputs;
//! - [`testing`]: what the tests share.
//!
//! Not published: a dev-dependency of the facade (its examples and tests),
//! of the runtime's and the attribute's tests, and of the benches. It
//! depends on the facade; nothing in the library depends on it.

// The programs box what they hold, which is the point of them.
#![allow(clippy::vec_box)]

pub mod cli;
pub mod deserialize;
pub mod expr_parser;
pub mod linked_list;
pub mod rng;
pub mod stmt_parser;
pub mod testing;
pub mod timing;
pub mod versions;
