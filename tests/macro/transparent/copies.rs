// The two copies of the corpus, as written and annotated, each with the
// same cases: the items of both editions' crates (edition2021/lib.rs and
// edition2024/lib.rs include this file). Included, so no inner attributes.

pub mod support {
    include!("support.rs");
}

/// The corpus as written.
pub mod as_written {
    include!("corpus.rs");
    include!("alone.rs");
    include!("recursion.rs");
    include!("cases.rs");
}

/// The corpus annotated (written by the build script).
pub mod annotated {
    include!(concat!(env!("OUT_DIR"), "/corpus.rs"));
    include!(concat!(env!("OUT_DIR"), "/alone.rs"));
    include!(concat!(env!("OUT_DIR"), "/recursion.rs"));
    include!("cases.rs");
}
