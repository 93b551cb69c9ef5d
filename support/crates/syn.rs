//! syn (Rust syntax trees: `syn::parse_file`, features `full` and
//! `parsing`): the `.rs` files under `src/` of pinned crate versions from
//! crates.io, each parsed into a `syn::File`: a tree of boxed expressions,
//! types, patterns and statements of every size, built recursively and in
//! loops, after proc-macro2's lexer has made each file's token stream
//! (freed once the file is parsed).
//!
//! The input is the files joined by NUL bytes (which no file contains):
//! `gen` reads them from the crate directories in `CRATES_CORPUS`
//! (`:`-separated; crates.py passes those of the pinned versions cargo
//! fetched), the first SIZE crates, files in path order.

mod alloc;
mod common;

use std::path::{Path, PathBuf};

use common::{digest, measure, Measured, Workload};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn generate(crates: usize) -> String {
    let dirs = std::env::var("CRATES_CORPUS")
        .expect("CRATES_CORPUS: the crate directories whose src/ make the input, ':'-separated");
    let mut out = String::new();
    for dir in dirs.split(':').take(crates) {
        let mut files = Vec::new();
        rust_files(&Path::new(dir).join("src"), &mut files);
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).expect("read a source file");
            assert!(!text.contains('\0'), "{} contains a NUL byte", file.display());
            if !out.is_empty() {
                out.push('\0');
            }
            out.push_str(&text);
        }
    }
    out
}

fn parse(src: &str) -> Vec<syn::File> {
    src.split('\0')
        .enumerate()
        .map(|(i, text)| syn::parse_file(text).unwrap_or_else(|e| panic!("file {i} does not parse: {e}")))
        .collect()
}

fn run(input: &str, parses: usize) -> Measured {
    measure(input, parses, parse, |files| {
        files.iter().map(|f| f.items.len() as u64).sum()
    })
}

fn check(input: &str) -> u64 {
    let mut text = String::new();
    for file in parse(input) {
        text.push_str(&quote::ToTokens::to_token_stream(&file).to_string());
        text.push('\n');
    }
    digest(text.as_bytes())
}

fn main() {
    common::main(&[Workload {
        name: "syn",
        size: 4,
        about: "crates' Rust sources (src/**/*.rs of syn, serde_core, serde_json, rayon)",
        generate,
        run,
        check,
        threads: |input, n, parses, other| common::threads_own(input, n, parses, other, parse),
    }]);
}
