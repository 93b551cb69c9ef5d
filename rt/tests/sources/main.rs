//! Checks that read the runtime's sources rather than run it, in one
//! binary: one module per subject (`cargo test -p batch-alloc-rt --test
//! sources -- layers` runs one alone).
//!
//! - `layers`: each module imports only from the layers below its own.
//! - `life_of_a_box`: every function "The life of a box" names is defined
//!   in the file it names.
//! - `fork_safe`: no std lock or one-time initialisation, which a fork
//!   cannot take over.
//!
//! Miri skips them: they read files, which its isolation forbids, and
//! check nothing it could.
#![cfg(not(miri))]

mod fork_safe;
mod layers;
mod life_of_a_box;
