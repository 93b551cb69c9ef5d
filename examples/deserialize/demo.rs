//! The demonstration's modules, shared by its three builds
//! (`examples/deserialize.rs`, `deserialize_mimalloc.rs` and
//! `deserialize_plain_mimalloc.rs`), which differ only by their global
//! allocator; each re-exports them at its root.

// The argument reader; `run::main` has modes of its own instead of `cli::main`.
#[allow(dead_code)]
#[path = "../shared/cli.rs"]
mod cli;
#[path = "generate.rs"]
pub mod generate;
#[path = "model.rs"]
pub mod model;
#[path = "run.rs"]
pub mod run;
#[path = "../shared/timing.rs"]
pub mod timing;
#[path = "../shared/versions.rs"]
pub mod versions;
#[path = "visitors.rs"]
pub mod visitors;
