//! The program of the main demonstration (`examples/deserialize.rs`, and
//! its builds with mimalloc, `deserialize_mimalloc.rs` and
//! `deserialize_plain_mimalloc.rs`, which differ only by their global
//! allocator): the types ([`model`]), the hand-written visitors written
//! out both ways ([`visitors`]), the input ([`generate`]) and the driver
//! that compares the versions across those builds ([`run`]).

pub mod generate;
pub mod model;
pub mod run;
pub mod visitors;
