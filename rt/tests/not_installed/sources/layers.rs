//! The runtime's modules are laid out in layers, a folder each (listed at
//! the top of `rt/src/lib.rs`, bottom-up): a module uses only the modules
//! of its own folder and of the folders below it, and no two modules of a
//! folder use each other, through any chain. This test reads the sources
//! and fails on a reference to a higher folder, on a cycle inside a
//! folder, on a folder the list leaves out or names but `rt/src` lacks, and
//! on a source file outside every folder.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Folder name to layer, from the numbered comment lines of `lib.rs`
/// (`// 2. memory/  the walk through ...`).
pub(crate) fn layers(lib: &str) -> BTreeMap<String, usize> {
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
        if let Some(folder) = rest
            .split_whitespace()
            .next()
            .and_then(|w| w.strip_suffix('/'))
        {
            layers.insert(folder.to_string(), layer);
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

/// The first two segments of every path after `crate::` (`folder::module`,
/// or a lone segment: an item of the crate root), including in
/// `use crate::{a::b, c::d::e}`.
fn references(code: &str) -> Vec<Vec<String>> {
    fn segments(path: &str) -> Vec<String> {
        path.split("::")
            .map(|s| {
                s.trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
            .take_while(|s| !s.is_empty())
            .take(2)
            .collect()
    }
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            found.extend(group[..end].split(',').map(segments));
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            found.push(segments(&rest[..end]));
        }
    }
    found.retain(|path| !path.is_empty());
    found
}

/// A cycle among `edges` (module to the modules it uses), if any, as the
/// modules along it.
fn cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut found = path[at..].to_vec();
            found.push(node.to_string());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, edges, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut Vec::new(), &mut done))
}

/// Every problem with the layering of `sources` (folder, module, code)
/// against `layers`.
fn problems(layers: &BTreeMap<String, usize>, sources: &[(String, String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut inside: BTreeMap<&str, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (folder, module, code) in sources {
        let Some(&layer) = layers.get(folder) else {
            problems.push(format!("{folder}/ is in no layer of lib.rs's list"));
            continue;
        };
        let edges = inside.entry(folder).or_default();
        edges.entry(module.clone()).or_default();
        for path in references(code) {
            let (used, used_module) = (&path[0], path.get(1));
            match layers.get(used) {
                // A module may name itself (a macro's `$crate::folder::module::item`).
                Some(_) if used == folder && used_module == Some(module) => {}
                Some(_) if used == folder => {
                    if let Some(used_module) = used_module {
                        edges
                            .entry(module.clone())
                            .or_default()
                            .insert(used_module.clone());
                    }
                }
                Some(&other) if other < layer => {}
                Some(&other) => problems.push(format!(
                    "{folder}::{module} (layer {layer}) uses crate::{used} (layer {other})"
                )),
                None => problems.push(format!(
                    "{folder}::{module} uses crate::{used}, in no layer's folder"
                )),
            }
        }
    }
    for (folder, edges) in inside {
        if let Some(cycle) = cycle(&edges) {
            problems.push(format!(
                "{folder}/'s modules use each other in a circle: {}",
                cycle.join(" -> ")
            ));
        }
    }
    for folder in layers.keys() {
        if !sources.iter().any(|(f, _, _)| f == folder) {
            problems.push(format!("lib.rs lists {folder}/, which rt/src lacks"));
        }
    }
    problems.sort();
    problems.dedup();
    problems
}

#[test]
fn every_module_uses_only_its_folder_and_the_folders_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layers = layers(&fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut sources = Vec::new();
    let mut outside = Vec::new();
    for (module, path) in super::runtime_sources() {
        let relative = path.strip_prefix(&src).unwrap();
        let folder = relative
            .iter()
            .next()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        if relative.components().count() == 1 {
            // The crate root sits on top; the loom models and the
            // allocator's model-based test are tests.
            if !["lib", "loom_model", "alloc_model"].contains(&module.as_str()) {
                outside.push(format!("{} is in no folder", relative.display()));
            }
            continue;
        }
        if module == "mod" {
            continue;
        }
        let code = code(&fs::read_to_string(&path).unwrap());
        sources.push((folder, module, code));
    }
    let mut problems = problems(&layers, &sources);
    problems.extend(outside);
    assert!(
        problems.is_empty(),
        "layering broken:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_reader_finds_references_layers_and_cycles() {
    let code = code(
        "use crate::a::b;\nuse crate::{c::d, e::f::g};\n// crate::h::i\nx(crate::j::k::l());\n\
         y::<crate::Root>();",
    );
    let paths: Vec<String> = references(&code).iter().map(|p| p.join("::")).collect();
    assert_eq!(paths, ["a::b", "c::d", "e::f", "j::k", "Root"]);
    let layers =
        layers("// 1. a/     text\n// 2. b/  more\n//! 3. c/ not this\n// 4. not a folder");
    assert_eq!(layers.get("a"), Some(&1));
    assert_eq!(layers.get("b"), Some(&2));
    assert_eq!(layers.len(), 2);

    let source = |folder: &str, module: &str, code: &str| {
        (folder.to_string(), module.to_string(), code.to_string())
    };
    let sources = [
        source("a", "x", "crate::a::y::f(); crate::b::z::g();"),
        source("a", "y", "crate::a::w::f();"),
        source("a", "w", "crate::a::x::f();"),
        source("b", "z", "crate::a::x::f(); crate::Root; crate::c::q::h();"),
    ];
    assert_eq!(
        problems(&layers, &sources),
        [
            "a/'s modules use each other in a circle: w -> x -> y -> w",
            "a::x (layer 1) uses crate::b (layer 2)",
            "b::z uses crate::Root, in no layer's folder",
            "b::z uses crate::c, in no layer's folder",
        ]
    );
}
