//! Writes the annotated copy of the differential corpus (tests/macro/
//! transparent): `corpus.rs` with `#[batch_alloc]` on every function, impl
//! block and trait default method, put there by the crates harness's own
//! annotator, and `alone.rs` with each `/* annotate */` made the attribute.

use std::path::Path;

const ATTR: &str = "#[::batch_alloc::batch_alloc]";

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);
    for file in ["corpus.rs", "alone.rs"] {
        println!("cargo:rerun-if-changed=transparent/{file}");
    }
    let corpus = read("transparent/corpus.rs");
    let mut counts = batch_alloc_annotate::Counts::default();
    let (annotated, inserted) = batch_alloc_annotate::annotate_source(&corpus, ATTR, &mut counts)
        .unwrap_or_else(|e| panic!("transparent/corpus.rs:{e}"));
    assert!(inserted > 0, "nothing annotated in the corpus");
    write(&out.join("annotated_corpus.rs"), &annotated);
    let alone = read("transparent/alone.rs");
    write(
        &out.join("annotated_alone.rs"),
        &alone.replace("/* annotate */", ATTR),
    );
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
