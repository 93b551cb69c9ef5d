//! `annotate CRATE_DIR [--attr TEXT] [--dir src]`: annotates every `.rs`
//! file under `CRATE_DIR/src` (or each `--dir`) in place (see the library's
//! docs for what gets the attribute) and prints one JSON line: counts per
//! kind, files parsed and files that did not parse (left as they were).
//! Built and run by benches/crates/crates.py.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use batch_alloc_annotate::{annotate_source, Counts};

fn annotate_file(path: &Path, attr: &str, counts: &mut Counts) -> Result<usize, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (out, inserted) =
        annotate_source(&text, attr, counts).map_err(|e| format!("{}:{e}", path.display()))?;
    std::fs::write(path, out).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(inserted)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut krate = None;
    let mut attr = String::from("#[::batch_alloc::batch_alloc]");
    let mut dirs = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--attr" => attr = args.next().expect("--attr TEXT"),
            "--dir" => dirs.push(args.next().expect("--dir DIR")),
            _ => krate = Some(PathBuf::from(arg)),
        }
    }
    let krate = krate.expect("usage: annotate CRATE_DIR [--attr TEXT] [--dir src]");
    if dirs.is_empty() {
        dirs.push("src".into());
    }
    let mut files = Vec::new();
    for dir in &dirs {
        rust_files(&krate.join(dir), &mut files);
    }
    let mut counts = Counts::default();
    let mut inserted = 0;
    let mut failed = Vec::new();
    for file in &files {
        match annotate_file(file, &attr, &mut counts) {
            Ok(n) => inserted += n,
            Err(e) => failed.push(e),
        }
    }
    let failed: Vec<String> = failed.iter().map(|e| json_str(e)).collect();
    println!(
        "{{\"files\": {}, \"inserted\": {inserted}, \"fns\": {}, \"impls\": {}, \"trait_methods\": {}, \"const_fns_skipped\": {}, \"impls_without_methods\": {}, \"item_macros_untouched\": {}, \"unparsed\": [{}]}}",
        files.len(),
        counts.fns,
        counts.impls,
        counts.trait_methods,
        counts.const_fns_skipped,
        counts.impls_without_methods,
        counts.item_macros_untouched,
        failed.join(", ")
    );
}
