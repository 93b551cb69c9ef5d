//! Puts `#[::batch_alloc::batch_alloc(quiet)]` on every function and impl
//! block of a crate's sources, in place, without reformatting anything.
//!
//!     annotate CRATE_DIR [--attr TEXT] [--dir src]
//!
//! Every `.rs` file under CRATE_DIR/src is parsed with syn; the attribute
//! text is inserted before the first token of each item it goes on (its
//! first outer attribute or doc comment, else its first keyword), so that
//! it is the outermost attribute: it expands first and sees the body as
//! written, before other attribute macros (`#[recursive]`, ...). Lines and
//! columns of everything else stay where they were (panic messages and
//! `line!()` in tests are unchanged). What gets it:
//!
//! - free functions, at any depth (modules, nested in function bodies,
//!   `#[cfg]`'d or not): one attribute each, unless `const fn` (the
//!   attribute leaves those alone anyway);
//! - `impl` blocks (inherent and trait impls) with at least one non-const
//!   method: one attribute on the block covers its methods;
//! - trait methods with a default body (the trait itself cannot take it);
//! - nothing inside a macro invocation or `macro_rules!` body (syn does not
//!   parse their tokens), no foreign function, no method without a body.
//!
//! Prints one JSON line: counts per kind, files parsed and files that did
//! not parse (left as they were).
//!
//! Built by benches/crates/crates.py in a scratch project under target/
//! (syn 2 with `full` and `visit`, proc-macro2 with `span-locations`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use proc_macro2::LineColumn;
use quote::ToTokens;
use syn::visit::Visit;

#[derive(Default)]
struct Counts {
    fns: usize,
    impls: usize,
    trait_methods: usize,
    const_fns_skipped: usize,
    impls_without_methods: usize,
    item_macros_untouched: usize,
    drop_impls_skipped: usize,
}

fn is_drop_impl(item: &syn::ItemImpl) -> bool {
    item.trait_
        .as_ref()
        .and_then(|(_, path, _)| path.segments.last())
        .is_some_and(|last| last.ident == "Drop")
}

/// Collects the positions at which the attribute goes, for one file.
struct Finder<'c> {
    at: Vec<LineColumn>,
    counts: &'c mut Counts,
}

fn first_token_start(tokens: impl ToTokens) -> Option<LineColumn> {
    let first = tokens.into_token_stream().into_iter().next()?;
    Some(first.span().start())
}

impl<'ast> Visit<'ast> for Finder<'_> {
    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        if item.sig.constness.is_some() {
            self.counts.const_fns_skipped += 1;
        } else if let Some(at) = first_token_start(item) {
            self.at.push(at);
            self.counts.fns += 1;
        }
        // Nested items of the body get their own.
        syn::visit::visit_item_fn(self, item);
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        if is_drop_impl(item) {
            // The attribute's expansion of a method calls the method by
            // its path, which for `Drop::drop` is an explicit destructor
            // call (E0040): left as written.
            self.counts.drop_impls_skipped += 1;
            syn::visit::visit_item_impl(self, item);
            return;
        }
        let methods = item.items.iter().filter(|member| {
            matches!(member, syn::ImplItem::Fn(method) if method.sig.constness.is_none())
        });
        if methods.count() > 0 {
            if let Some(at) = first_token_start(item) {
                self.at.push(at);
                self.counts.impls += 1;
            }
        } else {
            self.counts.impls_without_methods += 1;
        }
        // Items nested in method bodies; the methods themselves are covered
        // by the block's attribute (visit_impl_item_fn below adds nothing).
        syn::visit::visit_item_impl(self, item);
    }

    fn visit_item_trait(&mut self, item: &'ast syn::ItemTrait) {
        for member in &item.items {
            if let syn::TraitItem::Fn(method) = member {
                if method.default.is_some() {
                    if method.sig.constness.is_some() {
                        self.counts.const_fns_skipped += 1;
                    } else if let Some(at) = first_token_start(method) {
                        self.at.push(at);
                        self.counts.trait_methods += 1;
                    }
                }
            }
        }
        syn::visit::visit_item_trait(self, item);
    }

    fn visit_item_macro(&mut self, _: &'ast syn::ItemMacro) {
        // `macro_rules!` and item-position macro calls: their tokens are the
        // macro's business.
        self.counts.item_macros_untouched += 1;
    }

    fn visit_item_foreign_mod(&mut self, _: &'ast syn::ItemForeignMod) {}
}

/// Byte offset of a line and (character) column in `text`.
fn offset(line_starts: &[usize], text: &str, at: LineColumn) -> usize {
    let start = line_starts[at.line - 1];
    let line = &text[start..];
    match line.char_indices().nth(at.column) {
        Some((i, _)) => start + i,
        None => start + line.len(),
    }
}

fn annotate_file(path: &Path, attr: &str, counts: &mut Counts) -> Result<usize, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = syn::parse_file(&text).map_err(|e| {
        let at = e.span().start();
        format!("{}:{}:{}: {e}", path.display(), at.line, at.column)
    })?;
    let mut finder = Finder {
        at: Vec::new(),
        counts,
    };
    finder.visit_file(&file);
    let mut line_starts = vec![0];
    line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    let mut offsets: Vec<usize> = finder
        .at
        .iter()
        .map(|&at| offset(&line_starts, &text, at))
        .collect();
    offsets.sort_unstable();
    offsets.dedup();
    let mut out = String::with_capacity(text.len() + offsets.len() * (attr.len() + 1));
    let mut from = 0;
    for &at in &offsets {
        out.push_str(&text[from..at]);
        out.push_str(attr);
        out.push(' ');
        from = at;
    }
    out.push_str(&text[from..]);
    std::fs::write(path, out).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(offsets.len())
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
    let mut attr = String::from("#[::batch_alloc::batch_alloc(quiet)]");
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
        "{{\"files\": {}, \"inserted\": {inserted}, \"fns\": {}, \"impls\": {}, \"trait_methods\": {}, \"const_fns_skipped\": {}, \"impls_without_methods\": {}, \"item_macros_untouched\": {}, \"drop_impls_skipped\": {}, \"unparsed\": [{}]}}",
        files.len(),
        counts.fns,
        counts.impls,
        counts.trait_methods,
        counts.const_fns_skipped,
        counts.impls_without_methods,
        counts.item_macros_untouched,
        counts.drop_impls_skipped,
        failed.join(", ")
    );
}
