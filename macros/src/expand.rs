//! Expanding `#[batch_alloc]` on one item.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{Attribute, Block, Error, ImplItem, Item, Result, Signature, TraitItemFn};

use crate::args::Args;
use crate::runtime::Runtime;
use crate::{future, guard};

/// Input:  the attribute's arguments and the item it is on.
/// Output: the item with every function made a scope: a guard in front of
///         a synchronous body (see `guard`), one scoped future for an
///         `async fn` (see `future`).
///
/// On error the caller emits the error followed by the original item, so
/// that the error is the only one the user sees.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> Result<TokenStream> {
    let args = syn::parse2::<Args>(args);
    let item = syn::parse2::<Item>(item.clone())
        .map_err(|_| not_a_function(item))
        .and_then(supported);
    let (args, mut item) = both(args, item)?;
    match &mut item {
        // Another attribute macro below this one expands later, and one
        // made for `async fn` (`#[tokio::test]`, `#[async_trait]`) must see
        // it as written: this attribute goes below it, to expand after it.
        Item::Fn(function) if function.sig.asyncness.is_some() && has_macro(&function.attrs) => {
            let runtime = Runtime::find(args.krate.as_ref())?;
            function.attrs.push(runtime.attribute(args.krate.as_ref()));
        }
        Item::Impl(block) if has_macro(&block.attrs) => {
            let runtime = Runtime::find(args.krate.as_ref())?;
            block.attrs.push(runtime.attribute(args.krate.as_ref()));
        }
        Item::Fn(function) => {
            let runtime = Runtime::find(args.krate.as_ref())?;
            rewrite_fn(
                &runtime,
                &mut function.sig,
                &mut function.attrs,
                &mut function.block,
                None,
            );
        }
        Item::Impl(block) => {
            let mut errors = Vec::new();
            for member in &mut block.items {
                let ImplItem::Fn(method) = member else {
                    continue;
                };
                // The block's attribute covers the method: its own, if it has
                // one, is checked and may only name the runtime's path.
                let own = match take_own_attribute(&mut method.attrs) {
                    Ok(own) => own,
                    Err(error) => {
                        errors.push(error);
                        continue;
                    }
                };
                let krate = own.and_then(|own| own.krate).or_else(|| args.krate.clone());
                let runtime = match Runtime::find(krate.as_ref()) {
                    Ok(runtime) => runtime,
                    Err(error) => {
                        errors.push(error);
                        continue;
                    }
                };
                if method.sig.asyncness.is_some() && has_macro(&method.attrs) {
                    // As for a function: after the method's own macros.
                    method.attrs.push(runtime.attribute(krate.as_ref()));
                    continue;
                }
                rewrite_fn(
                    &runtime,
                    &mut method.sig,
                    &mut method.attrs,
                    &mut method.block,
                    Some(&block.generics),
                );
            }
            if let Some(mut error) = errors.pop() {
                for other in errors {
                    error.combine(other);
                }
                return Err(error);
            }
        }
        // `supported` lets nothing else through.
        _ => {}
    }
    Ok(item.into_token_stream())
}

/// Makes one function a scope while it runs. A `const fn` cannot allocate
/// and is left as it is; so is a naked function, whose body may hold
/// nothing but assembly.
fn rewrite_fn(
    runtime: &Runtime,
    sig: &mut Signature,
    attrs: &mut Vec<Attribute>,
    body: &mut Block,
    impl_generics: Option<&syn::Generics>,
) {
    if sig.constness.is_some() || attrs.iter().any(|a| a.path().is_ident("naked")) {
        return;
    }
    let name = sig.ident.to_string();
    if sig.asyncness.is_some() {
        let site = runtime.site("Future", &name, sig.ident.span());
        future::scoped_async_fn(runtime, sig, body, site, impl_generics);
    } else {
        let small = is_small(body);
        let site = runtime.site("Function", &name, sig.ident.span());
        guard::open_in_front(runtime, body, site);
        if small {
            hint_inline(attrs);
        }
    }
}

/// A function or an impl block; anything else is an error.
fn supported(item: Item) -> Result<Item> {
    match item {
        Item::Fn(_) | Item::Impl(_) => Ok(item),
        other => Err(unsupported(&other)),
    }
}

/// The largest body, in tokens as written, that gets an `#[inline]` hint
/// when the function has no inline attribute of its own. The guard the
/// attribute adds makes a small function look bigger to the compiler's
/// inliner, and a function it inlined as written became a call: the hint
/// gives the inliner back the margin the guard took (docs/macro.md has the
/// measurements).
const SMALL_BODY_TOKENS: usize = 150;

/// Whether `body` is at most [`SMALL_BODY_TOKENS`] tokens long, as written.
fn is_small(body: &Block) -> bool {
    fn count(tokens: TokenStream, budget: usize) -> usize {
        let mut used = 0;
        for token in tokens {
            used += 1;
            if let proc_macro2::TokenTree::Group(group) = token {
                used += count(group.stream(), budget.saturating_sub(used));
            }
            if used > budget {
                break;
            }
        }
        used
    }
    count(body.to_token_stream(), SMALL_BODY_TOKENS) <= SMALL_BODY_TOKENS
}

/// Adds `#[inline]` to a small synchronous function (see
/// [`SMALL_BODY_TOKENS`]), unless it says how to inline already
/// (`#[inline(..)]`, `#[cold]`).
fn hint_inline(attrs: &mut Vec<Attribute>) {
    let says_already = attrs
        .iter()
        .any(|a| a.path().is_ident("inline") || a.path().is_ident("cold"));
    if !says_already {
        attrs.push(syn::parse_quote!(#[inline]));
    }
}

/// Takes a method's own `#[batch_alloc(..)]` out of its attributes (the
/// block's covers it), with its arguments parsed: a mistake there is an
/// error, as it is on a function.
fn take_own_attribute(attrs: &mut Vec<Attribute>) -> Result<Option<Args>> {
    let Some(position) = attrs.iter().position(is_batch_alloc) else {
        return Ok(None);
    };
    let attr = attrs.remove(position);
    let args = match attr.meta {
        syn::Meta::Path(_) => Args::default(),
        syn::Meta::List(list) => syn::parse2::<Args>(list.tokens)?,
        syn::Meta::NameValue(meta) => {
            return Err(Error::new_spanned(
                meta,
                "expected `#[batch_alloc]` or `#[batch_alloc(crate = path)]`",
            ));
        }
    };
    Ok(Some(args))
}

/// Whether `attrs` hold an attribute macro (one the compiler does not know
/// itself): `#[tokio::test]`, `#[async_trait]`, `#[instrument]`.
fn has_macro(attrs: &[Attribute]) -> bool {
    /// The compiler's own attributes that can stand on a function or an
    /// impl block.
    const BUILT_IN: [&str; 27] = [
        "cfg",
        "cfg_attr",
        "allow",
        "warn",
        "deny",
        "forbid",
        "expect",
        "deprecated",
        "must_use",
        "doc",
        "inline",
        "cold",
        "track_caller",
        "no_mangle",
        "export_name",
        "link_section",
        "link_name",
        "used",
        "naked",
        "target_feature",
        "instruction_set",
        "test",
        "ignore",
        "should_panic",
        "automatically_derived",
        "unsafe",
        "coverage",
    ];
    /// Tools whose attributes the compiler knows (`#[rustfmt::skip]`).
    const TOOLS: [&str; 4] = ["rustfmt", "clippy", "diagnostic", "rustdoc"];
    attrs.iter().any(|attr| {
        let path = attr.path();
        match (path.leading_colon, path.segments.len()) {
            (None, 1) => !BUILT_IN.iter().any(|name| path.is_ident(name)),
            (None, _) => !TOOLS.iter().any(|tool| path.segments[0].ident == tool),
            _ => true,
        }
    })
}

/// Whether `attr` is `#[batch_alloc..]` by any path (`#[batch_alloc]`,
/// `#[::batch_alloc::batch_alloc]`, `#[ba::batch_alloc]`).
fn is_batch_alloc(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|segment| segment.ident == "batch_alloc")
}

/// Both results, or every error among them.
fn both<A, B>(a: Result<A>, b: Result<B>) -> Result<(A, B)> {
    match (a, b) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        (Err(mut a), Err(b)) => {
            a.combine(b);
            Err(a)
        }
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => Err(e),
    }
}

const EXPECTED: &str =
    "expected a function, method or impl block: `#[batch_alloc]` makes functions batch scopes";

/// The error for an item that is not a function, method or impl block,
/// pointing at its keyword and name rather than at all of it.
fn unsupported(item: &Item) -> Error {
    let head = match item {
        Item::Struct(i) => head(&i.struct_token, &i.ident),
        Item::Enum(i) => head(&i.enum_token, &i.ident),
        Item::Union(i) => head(&i.union_token, &i.ident),
        Item::Const(i) => head(&i.const_token, &i.ident),
        Item::Static(i) => head(&i.static_token, &i.ident),
        Item::Type(i) => head(&i.type_token, &i.ident),
        Item::Mod(i) => head(&i.mod_token, &i.ident),
        Item::Trait(i) => {
            let head = head(&i.trait_token, &i.ident);
            return Error::new_spanned(
                head,
                format!("{EXPECTED}; on a trait, put it on the methods that have a default body"),
            );
        }
        Item::Verbatim(tokens) => return bodyless(tokens),
        other => other.to_token_stream(),
    };
    Error::new_spanned(head, EXPECTED)
}

fn head(keyword: &impl ToTokens, name: &impl ToTokens) -> TokenStream {
    let mut tokens = keyword.to_token_stream();
    name.to_tokens(&mut tokens);
    tokens
}

/// Tokens that syn keeps as an unparsed item: a function without a body
/// (`fn f(&self);` in a trait) gets its own message.
fn bodyless(tokens: &TokenStream) -> Error {
    match syn::parse2::<TraitItemFn>(tokens.clone()) {
        Ok(function) if function.default.is_none() => Error::new_spanned(
            &function.sig,
            "expected a function body: `#[batch_alloc]` makes function bodies batch scopes",
        ),
        _ => Error::new_spanned(tokens, EXPECTED),
    }
}

/// Tokens that do not parse as an item at all.
fn not_a_function(tokens: TokenStream) -> Error {
    Error::new_spanned(tokens, EXPECTED)
}

/// Input:  a sequence of items, some carrying `#[batch_alloc]`.
/// Output: the same items, each of those expanded (the snapshot test's view
///         of what the compiler gets).
pub(crate) fn expand_all(items: TokenStream) -> Result<TokenStream> {
    let file = syn::parse2::<syn::File>(items)?;
    let mut out = TokenStream::new();
    for mut item in file.items {
        let Some(attrs) = item_attrs(&mut item) else {
            item.to_tokens(&mut out);
            continue;
        };
        let position = attrs.iter().position(is_batch_alloc);
        let Some(position) = position else {
            item.to_tokens(&mut out);
            continue;
        };
        let attr = attrs.remove(position);
        let args = match attr.meta {
            syn::Meta::Path(_) => TokenStream::new(),
            syn::Meta::List(list) => list.tokens,
            syn::Meta::NameValue(meta) => {
                return Err(Error::new_spanned(meta, "expected `#[batch_alloc]`"));
            }
        };
        out.extend(expand(args, item.into_token_stream())?);
    }
    Ok(out)
}

fn item_attrs(item: &mut Item) -> Option<&mut Vec<syn::Attribute>> {
    match item {
        Item::Fn(i) => Some(&mut i.attrs),
        Item::Impl(i) => Some(&mut i.attrs),
        _ => None,
    }
}
