//! Checks that read the runtime's sources rather than run it, one module
//! per subject (`cargo test -p batch-alloc-rt --test not_installed --
//! layers` runs one alone).
//!
//! - `layers`: each module uses only its own folder and the folders below
//!   it, and no folder's modules use each other in a circle.
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
/// file's stem (`mod` for a folder's `mod.rs`), or for a file of a module's
/// own folder inside a layer's (`base/os/unix.rs`) that folder's name.
pub(crate) fn runtime_sources() -> Vec<(String, PathBuf)> {
    fn walk(dir: &Path, depth: usize, module: Option<&str>, files: &mut Vec<(String, PathBuf)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_str().unwrap().to_string();
            if path.is_dir() {
                // A layer's folder (depth 0), or a module's own (depth 1).
                let inner = (depth == 1).then_some(name.as_str());
                walk(&path, depth + 1, inner.or(module), files);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push((module.map_or(name, str::to_string), path));
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        0,
        None,
        &mut files,
    );
    files.sort();
    files
}
