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

use std::path::{Path, PathBuf};

/// Every source file of the runtime, with the module it belongs to: a
/// file's stem, or for a file of a module's directory (`os/unix.rs`) the
/// directory's name.
pub(crate) fn runtime_sources() -> Vec<(String, PathBuf)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let module = path.file_name().unwrap().to_str().unwrap().to_string();
            for inner in std::fs::read_dir(&path).unwrap() {
                files.push((module.clone(), inner.unwrap().path()));
            }
        } else {
            let module = path.file_stem().unwrap().to_str().unwrap().to_string();
            files.push((module, path));
        }
    }
    files.sort();
    files
}
