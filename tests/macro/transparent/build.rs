//! Writes the annotated copy of the differential corpus: each file with
//! `#[batch_alloc]` on every function, impl block and trait default
//! method, put there by the crates harness's own annotator
//! (support/annotate), and `alone.rs` with each `/* annotate */` made the
//! attribute. The build script of both editions' crates (edition2021/,
//! edition2024/), run in the crate's directory.

use std::path::Path;

const ATTR: &str = "#[::batch_alloc::batch_alloc]";

/// The files annotated whole, and the one annotated where it says.
const ANNOTATED_WHOLE: [&str; 3] = ["corpus.rs", "recursion.rs", "edition_2024.rs"];
const ANNOTATED_AT_MARKS: &str = "alone.rs";

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);
    for file in ANNOTATED_WHOLE {
        println!("cargo:rerun-if-changed=../{file}");
        let text = read(file);
        let mut counts = batch_alloc_annotate::Counts::default();
        let (annotated, inserted) = batch_alloc_annotate::annotate_source(&text, ATTR, &mut counts)
            .unwrap_or_else(|e| panic!("{file}:{e}"));
        assert!(inserted > 0, "nothing annotated in {file}");
        write(&out.join(file), &annotated);
    }
    println!("cargo:rerun-if-changed=../{ANNOTATED_AT_MARKS}");
    let alone = read(ANNOTATED_AT_MARKS);
    assert!(
        alone.contains("/* annotate */"),
        "nothing to annotate in {ANNOTATED_AT_MARKS}"
    );
    write(
        &out.join(ANNOTATED_AT_MARKS),
        &alone.replace("/* annotate */", ATTR),
    );
}

fn read(file: &str) -> String {
    let path = Path::new("..").join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
