//! Puts an attribute (`#[::batch_alloc::batch_alloc]` by default) on
//! every function and impl block of Rust sources, in place, without
//! reformatting anything: the crates harness annotates published crates
//! with it (`annotate CRATE_DIR`), and the differential tests of the
//! attribute annotate their corpus with it (`annotate_source`), so that
//! both see the same rule.
//!
//! The attribute text is inserted before the first token of each item it
//! goes on (its first outer attribute or doc comment, else its first
//! keyword), on the same line, so that it is the outermost attribute: it
//! expands first and sees the body as written, before other attribute
//! macros (`#[recursive]`, ...). Line numbers of everything stay where
//! they were (panic messages and `line!()` are unchanged); columns move
//! only on the lines where an item starts. What gets it:
//!
//! - free functions, at any depth (modules, nested in function bodies,
//!   `#[cfg]`'d or not): one attribute each, unless `const fn` (the
//!   attribute leaves those alone anyway);
//! - `impl` blocks (inherent and trait impls) with at least one non-const
//!   method: one attribute on the block covers its methods;
//! - trait methods with a default body (the trait itself cannot take it);
//! - nothing inside a macro invocation or `macro_rules!` body (syn does not
//!   parse their tokens), no foreign function, no method without a body.

use proc_macro2::LineColumn;
use quote::ToTokens;
use syn::visit::Visit;

/// What was annotated, and what was left, by kind.
#[derive(Debug, Default)]
pub struct Counts {
    pub fns: usize,
    pub impls: usize,
    pub trait_methods: usize,
    pub const_fns_skipped: usize,
    pub impls_without_methods: usize,
    pub item_macros_untouched: usize,
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
        let methods = item.items.iter().filter(
            |member| matches!(member, syn::ImplItem::Fn(method) if method.sig.constness.is_none()),
        );
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

/// `text` with `attr` put before every item it goes on, and how many
/// were annotated; an error names the line and column where `text` does
/// not parse.
pub fn annotate_source(
    text: &str,
    attr: &str,
    counts: &mut Counts,
) -> Result<(String, usize), String> {
    let file = syn::parse_file(text).map_err(|e| {
        let at = e.span().start();
        format!("{}:{}: {e}", at.line, at.column)
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
        .map(|&at| offset(&line_starts, text, at))
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
    Ok((out, offsets.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn annotated(text: &str) -> String {
        annotate_source(text, "#[a]", &mut Counts::default())
            .unwrap()
            .0
    }

    #[test]
    fn free_functions_impl_blocks_and_default_methods_get_it_on_their_first_line() {
        let text = "/// Docs.\nfn f() {\n    fn nested() {}\n}\nimpl T {\n    fn m(&self) {}\n}\n\
                    trait Tr {\n    fn d(&self) {}\n    fn r(&self);\n}\nconst fn c() {}\n";
        assert_eq!(
            annotated(text),
            "#[a] /// Docs.\nfn f() {\n    #[a] fn nested() {}\n}\n#[a] impl T {\n    fn m(&self) {}\n}\n\
             trait Tr {\n    #[a] fn d(&self) {}\n    fn r(&self);\n}\nconst fn c() {}\n"
        );
    }

    #[test]
    fn macros_and_impls_without_methods_are_left_alone() {
        let text = "macro_rules! m { () => { fn x() {} } }\nimpl Copy for T {}\nm!();\n";
        let mut counts = Counts::default();
        let (out, inserted) = annotate_source(text, "#[a]", &mut counts).unwrap();
        assert_eq!((out.as_str(), inserted), (text, 0));
        assert_eq!(
            (counts.impls_without_methods, counts.item_macros_untouched),
            (1, 2)
        );
    }

    #[test]
    fn an_error_names_where_the_text_does_not_parse() {
        let error = annotate_source("fn f( {}", "#[a]", &mut Counts::default()).unwrap_err();
        assert!(error.starts_with("1:"), "{error}");
    }
}
