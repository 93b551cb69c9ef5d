//! mimalloc's version, for the binaries that link it.

/// The version of the mimalloc this binary runs, as `major.minor.patch`.
pub fn mimalloc_version() -> String {
    extern "C" {
        fn mi_version() -> std::ffi::c_int;
    }
    // SAFETY: `mi_version` takes nothing and returns an integer; mimalloc
    // is linked into every binary that includes this module.
    let v = unsafe { mi_version() };
    format!("mimalloc {}.{}.{}", v / 10000, v / 100 % 100, v % 100)
}
