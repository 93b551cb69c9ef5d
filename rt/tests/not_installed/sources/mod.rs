//! Checks that read the runtime's sources rather than run it, one module
//! per subject (`cargo test -p batch-alloc-rt --test not_installed --
//! layers` runs one alone).
//!
//! - `layers`: each module imports only from the layers below its own.
//! - `life_of_a_box`: every function "The life of a box" names is defined
//!   in the file it names.
//! - `fork_safe`: no std lock or one-time initialisation, which a fork
//!   cannot take over.
//!
//! Miri skips them: they read files, which its isolation forbids, and
//! check nothing it could (`main.rs` leaves this module out under Miri).

mod fork_safe;
mod layers;
mod life_of_a_box;
