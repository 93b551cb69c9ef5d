//! The runtime's modules are laid out in layers (listed at the top of
//! `rt/src/lib.rs`), each importing only from the layers below it: types
//! first, behaviour above them, the public types on top. This test reads the
//! sources and fails on any reference from a module to one in its own layer
//! or a higher one, and on a module the list leaves out.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// Module name to layer, from the numbered comment lines of `lib.rs`
/// (`// 3. types   the shared structures`).
fn layers(lib: &str) -> BTreeMap<String, usize> {
    let mut layers = BTreeMap::new();
    for line in lib.lines() {
        let Some(rest) = line.trim().strip_prefix("// ") else {
            continue;
        };
        let Some((number, rest)) = rest.split_once(". ") else {
            continue;
        };
        let Ok(layer) = number.parse::<usize>() else {
            continue;
        };
        let names = rest.split("  ").next().unwrap_or_default();
        for name in names.split(',') {
            layers.insert(name.trim().to_string(), layer);
        }
    }
    layers
}

/// The code of a source file without comments and without its unit tests
/// (a `mod tests` under a `#[cfg(test)]`, or a `#[cfg(all(test, ..))]`).
pub(crate) fn code(source: &str) -> String {
    let tests = source.find("\nmod tests").and_then(|at| {
        let attribute = source[..at].rfind('\n').map_or(0, |line| line + 1);
        source[attribute..at]
            .starts_with("#[cfg(")
            .then_some(attribute)
    });
    let source = match tests {
        Some(at) => &source[..at],
        None => source,
    };
    source
        .lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every module named after `crate::`, including in `use crate::{a, b::c}`.
fn references(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.push(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            found.push(name);
        }
    }
    found
}

#[test]
fn every_module_imports_only_from_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let layers = layers(&lib);
    let mut problems = Vec::new();
    for (module, path) in super::runtime_sources() {
        if module == "lib" || module == "loom_model" || module == "alloc_model" {
            // The crate root sits on top; the loom models and the
            // allocator's model-based test are tests.
            continue;
        }
        let Some(&layer) = layers.get(&module) else {
            problems.push(format!(
                "{} is in no layer of lib.rs's list",
                path.display()
            ));
            continue;
        };
        let code = code(&fs::read_to_string(&path).unwrap());
        // A module may name itself (a macro's `$crate::module::item`).
        for name in references(&code).into_iter().filter(|name| *name != module) {
            match layers.get(&name) {
                Some(&other) if other < layer => {}
                Some(&other) => problems.push(format!(
                    "{module} (layer {layer}) uses crate::{name} (layer {other})"
                )),
                None => problems.push(format!("{module} uses crate::{name}, in no layer")),
            }
        }
    }
    problems.sort();
    problems.dedup();
    assert!(
        problems.is_empty(),
        "layering broken:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_reader_finds_references_and_layers() {
    let code = code("use crate::a::b;\nuse crate::{c, d::e};\n// crate::f\nx(crate::g::h());");
    assert_eq!(references(&code), ["a", "c", "d", "g"]);
    let layers = layers("// 0. a, b        text\n// 1. c  more\n//! 2. not this");
    assert_eq!(layers.get("b"), Some(&0));
    assert_eq!(layers.get("c"), Some(&1));
    assert_eq!(layers.len(), 3);
}
