//! The environment variables the runtime reads, once, at first use (the
//! first scope, the report at exit), and the
//! one-line warnings it gives about them and about a missing
//! `#[global_allocator]`.
//!
//! | variable | values (any case) | default |
//! |---|---|---|
//! | `BATCH_ALLOC_REPORT` | `on`, `off` (`1`/`0`, `true`/`false`, `yes`/`no`) | `on` |
//! | `BATCH_ALLOC_WARNINGS` | the same | `on` |
//!
//! A value is trimmed of surrounding white space. An unknown value, or a
//! `BATCH_ALLOC_*` name that is none of these, gets one line on stderr
//! naming what is accepted, and the default is used. Nothing here runs on
//! the allocator path.
//!
//! The first read is a process's first scope's, so it must survive a fork:
//! it is a [`CallOnce`], which a child forked while another thread was
//! reading takes over (std's `OnceLock` left such a child waiting for good
//! for a thread it does not have). Its warnings are written after the call,
//! with `write(2)` and no lock: a thread blocked writing them (stderr a full
//! pipe) holds nothing a child needs.

use core::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::base::os;
use crate::base::sync::CallOnce;

/// What the environment says. Not public API: read through
/// the report and the warnings.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Settings {
    /// `BATCH_ALLOC_REPORT`: whether the per-site report prints at exit.
    pub report_at_exit: bool,
    /// `BATCH_ALLOC_WARNINGS`: whether the runtime warns (in debug builds)
    /// that scopes open without `BatchAlloc` installed.
    pub warnings: bool,
}

/// The names the runtime reads, and what each accepts.
const KNOWN: [(&str, &str); 2] = [
    ("BATCH_ALLOC_REPORT", SWITCH),
    ("BATCH_ALLOC_WARNINGS", SWITCH),
];

const SWITCH: &str = "`on` or `off` (also `1`/`0`, `true`/`false`, `yes`/`no`)";

/// The settings, once read: written only inside [`READ`]'s call, read only
/// once it is done.
struct Read(UnsafeCell<Settings>);

// SAFETY: the cell is written only inside `READ`'s call, by one thread of
// a process at a time, and read only after the call is done (its acquire
// load pairs with the call's release), after which nothing writes it.
unsafe impl Sync for Read {}

static SETTINGS: Read = Read(UnsafeCell::new(Settings {
    report_at_exit: true,
    warnings: true,
}));

/// Reads the environment into [`SETTINGS`], once per process.
///
/// A child forked while another thread was inside the call makes it again
/// (`CallOnce`), which is safe after a partial call, since what the call
/// does leaves nothing the child's call could trip on:
/// - it reads the environment through std, whose lock readers share: the
///   child takes it though the vanished reader held it (only a thread of
///   the parent waiting to change the environment, `set_var`, would make
///   any read in the child wait, this one's or not);
/// - it allocates: the global allocator survives a fork (`BatchAlloc`'s
///   fork handlers, and the inner allocator's own), and the partial call's
///   memory at worst leaks in the child;
/// - it keeps its warnings in its caller's list, written after the call,
///   so it never holds stderr;
/// - it writes the cell whole at its end, and nobody reads the cell before
///   the call is done.
///
/// So the child's call does all of it again, over whatever the parent's
/// thread had got to.
static READ: CallOnce = CallOnce::new();

/// The settings, read from the environment at the first call.
#[doc(hidden)]
pub fn settings() -> &'static Settings {
    let mut warnings = Vec::new();
    READ.call(|| {
        let mut warn = |line: String| warnings.push(line);
        let settings = read(|name| std::env::var_os(name), &mut warn);
        for (name, _) in std::env::vars_os() {
            if let Some(line) = unknown_name(&name.to_string_lossy()) {
                warn(line);
            }
        }
        // SAFETY: inside the call (see `Read`).
        unsafe { SETTINGS.0.get().write(settings) };
    });
    // Only the thread that made the read has any: once per process (a child
    // that took the read over warns again, in its own process).
    for line in warnings {
        os::write_stderr(format!("batch-alloc: {line}\n").as_bytes());
    }
    // SAFETY: the call is done, so the cell is written and stays as it is.
    unsafe { &*SETTINGS.0.get() }
}

/// The settings `var` gives, with a warning through `warn` for each value
/// not understood.
fn read(
    var: impl Fn(&str) -> Option<std::ffi::OsString>,
    warn: &mut impl FnMut(String),
) -> Settings {
    let mut value = |index: usize, parse: fn(&str) -> Option<bool>| -> Option<bool> {
        let (name, accepted) = KNOWN[index];
        let raw = var(name)?;
        let text = raw.to_string_lossy();
        let parsed = parse(text.trim().to_ascii_lowercase().as_str());
        if parsed.is_none() {
            warn(format!(
                "{name}={text:?} is not understood, so it is ignored: it takes {accepted}"
            ));
        }
        parsed
    };
    Settings {
        report_at_exit: value(0, switch).unwrap_or(true),
        warnings: value(1, switch).unwrap_or(true),
    }
}

fn switch(value: &str) -> Option<bool> {
    match value {
        "on" | "1" | "true" | "yes" => Some(true),
        "off" | "0" | "false" | "no" => Some(false),
        _ => None,
    }
}

/// The warning for an environment variable named like the runtime's but
/// none of them, or `None`.
fn unknown_name(name: &str) -> Option<String> {
    let upper = name.to_ascii_uppercase();
    if !upper.starts_with("BATCH_ALLOC_") || KNOWN.iter().any(|(known, _)| *known == name) {
        return None;
    }
    let names: Vec<&str> = KNOWN.iter().map(|(known, _)| *known).collect();
    Some(format!(
        "the environment variable {name} is not one batch-alloc reads, so it is ignored; it \
         reads {}",
        names.join(", ")
    ))
}

/// In a debug build, once per process and unless `BATCH_ALLOC_WARNINGS=off`:
/// says on stderr that a scope or a batch ran without `BatchAlloc` as the
/// global allocator, so nothing was served, and how to fix it.
#[cold]
pub(crate) fn warn_not_installed() {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if !cfg!(debug_assertions) || WARNED.swap(true, Ordering::Relaxed) || !settings().warnings {
        return;
    }
    os::write_stderr(
        b"batch-alloc: an annotated function, a `scope()` call or a `Batch` ran, but \
          `BatchAlloc` is not the global allocator, so nothing is served from its spans. Add \
          to the application's main file:\n    #[global_allocator]\n    \
          static GLOBAL: batch_alloc::BatchAlloc = batch_alloc::BatchAlloc::system();\n(Only \
          debug builds say this; BATCH_ALLOC_WARNINGS=off silences it.)\n",
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::ffi::OsString;

    fn read_from(vars: &[(&str, &str)]) -> (Settings, Vec<String>) {
        let vars: HashMap<String, OsString> = vars
            .iter()
            .map(|(name, value)| (name.to_string(), OsString::from(value)))
            .collect();
        let mut warnings = Vec::new();
        let settings = read(|name| vars.get(name).cloned(), &mut |w| warnings.push(w));
        (settings, warnings)
    }

    #[test]
    fn defaults_when_unset() {
        let (settings, warnings) = read_from(&[]);
        assert_eq!(
            settings,
            Settings {
                report_at_exit: true,
                warnings: true
            }
        );
        assert!(warnings.is_empty());
    }

    #[test]
    fn values_in_any_case_and_with_spaces_around() {
        for (value, on) in [
            ("0", false),
            ("off", false),
            ("FALSE", false),
            ("no", false),
            ("1", true),
            ("On", true),
            ("true ", true),
        ] {
            let (settings, warnings) = read_from(&[
                ("BATCH_ALLOC_REPORT", value),
                ("BATCH_ALLOC_WARNINGS", value),
            ]);
            assert_eq!(
                (settings.report_at_exit, settings.warnings),
                (on, on),
                "{value:?}"
            );
            assert!(warnings.is_empty(), "{value:?}");
        }
    }

    #[test]
    fn a_value_not_understood_is_named_with_what_is_accepted() {
        let (settings, warnings) = read_from(&[
            ("BATCH_ALLOC_WARNINGS", "2"),
            ("BATCH_ALLOC_REPORT", "maybe"),
        ]);
        assert!(settings.report_at_exit && settings.warnings);
        assert_eq!(warnings.len(), 2);
        assert!(
            warnings[0].contains("BATCH_ALLOC_REPORT=\"maybe\""),
            "{}",
            warnings[0]
        );
        assert!(warnings[1].contains("`on` or `off`"), "{}", warnings[1]);
    }

    #[test]
    fn a_misspelled_name_is_named_with_the_known_ones() {
        assert_eq!(unknown_name("BATCH_ALLOC_REPORT"), None);
        assert_eq!(unknown_name("PATH"), None);
        let line = unknown_name("BATCH_ALLOC_REPROT").unwrap();
        assert!(line.contains("BATCH_ALLOC_REPROT"), "{line}");
        assert!(
            line.contains("BATCH_ALLOC_REPORT, BATCH_ALLOC_WARNINGS"),
            "{line}"
        );
        assert!(unknown_name("batch_alloc_report").is_some());
    }
}
