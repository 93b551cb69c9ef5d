//! Expanding `#[batch_alloc]` on one item.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote_spanned, ToTokens};
use syn::{Attribute, Block, Error, Expr, ImplItem, Item, Result, Signature, Stmt, TraitItemFn};

use crate::args::Args;
use crate::scoped::{self, Owner};

/// Input:  the attribute's arguments and the item it is on.
/// Output: the item with every function made a scope (see `scoped`).
///
/// On error the caller emits the error followed by the original item, so
/// that the error is the only one the user sees.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> Result<TokenStream> {
    let args = syn::parse2::<Args>(args);
    let item = syn::parse2::<Item>(item.clone())
        .map_err(|_| not_a_function(item))
        .and_then(supported);
    let (args, mut item) = both(args, item)?;
    let first_body = match &mut item {
        Item::Fn(function) => {
            let small = is_small(&function.block);
            let leaf = !scoped::rewrite_fn(
                &mut function.sig,
                &function.attrs,
                &mut function.block,
                &Owner::Unknown,
            );
            if !leaf && small {
                hint_inline(&mut function.attrs, &function.sig);
            }
            if leaf && !args.quiet {
                let subject = format!("`{}`", function.sig.ident);
                let warning = nothing_to_rewrite(&function.sig.ident, &subject);
                function.block.stmts.insert(0, warning);
            }
            Some(&mut *function.block)
        }
        Item::Impl(block) => {
            // How a method names itself: a trait's method through the trait,
            // so that an inherent method of the same name is not the one
            // called.
            let owner = match &block.trait_ {
                Some((path, _)) => Owner::Trait {
                    path: path.clone(),
                    impl_params: block
                        .generics
                        .type_params()
                        .map(|param| param.ident.clone())
                        .collect(),
                },
                None => Owner::Inherent,
            };
            // Annotating a whole impl is how a user says "all of these",
            // accessors included: its leaves say nothing.
            for member in &mut block.items {
                if let ImplItem::Fn(method) = member {
                    // The block's attribute covers the method: its own, if
                    // it has one, would check for the scope a second time.
                    drop_own_attribute(&mut method.attrs);
                    let small = is_small(&method.block);
                    let (sig, attrs) = (&mut method.sig, &method.attrs);
                    if scoped::rewrite_fn(sig, attrs, &mut method.block, &owner) && small {
                        hint_inline(&mut method.attrs, &method.sig);
                    }
                }
            }
            block.items.iter_mut().find_map(|member| match member {
                ImplItem::Fn(method) => Some(&mut method.block),
                _ => None,
            })
        }
        _ => None,
    };
    if let (Some(argument), Some(body)) = (&args.deprecated, first_body) {
        body.stmts.insert(0, deprecated_argument(argument));
    }
    Ok(item.into_token_stream())
}

/// What a leaf is, and what follows, for the default form's warning.
const LEAF: &str = "a leaf (method calls, field accesses, operators and constructors, as an \
                    accessor's), which opens no scope of its own and runs in its caller's, at no \
                    cost";

/// A function or an impl block; anything else is an error.
fn supported(item: Item) -> Result<Item> {
    match item {
        Item::Fn(_) | Item::Impl(_) => Ok(item),
        other => Err(unsupported(&other)),
    }
}

/// The largest body, in tokens as written, that gets an `#[inline]` hint
/// when the function has no inline attribute of its own. The check and the
/// cold call the attribute adds make a small function look bigger to the
/// compiler's inliner, and a function it inlined as written became a call
/// (serde_json's number and string parsers, winnow's small combinators):
/// the hint gives the inliner back the margin the additions took. Measured
/// with every fn of the crates harness annotated (docs/macro.md): with the
/// hint on bodies up to 150 tokens, serde_json's `Value` parse took 17%
/// fewer instructions, its typed parse and kdl's 2% fewer; up to 400
/// tokens, no better overall. Bigger functions were not inlined as written
/// either, and keep the compiler's own choice.
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

/// Adds `#[inline]` to a small synchronous function the attribute made a
/// scope (see [`SMALL_BODY_TOKENS`]), unless it says how to inline already
/// (`#[inline(..)]`, `#[cold]`).
fn hint_inline(attrs: &mut Vec<Attribute>, sig: &Signature) {
    let says_already = attrs
        .iter()
        .any(|a| a.path().is_ident("inline") || a.path().is_ident("cold"));
    if !says_already && sig.asyncness.is_none() && sig.constness.is_none() {
        attrs.push(syn::parse_quote!(#[inline]));
    }
}

/// Takes a method's own `#[batch_alloc(..)]` out of its attributes: the
/// block's covers it.
fn drop_own_attribute(attrs: &mut Vec<Attribute>) {
    attrs.retain(|attr| {
        attr.path()
            .segments
            .last()
            .is_none_or(|segment| segment.ident != "batch_alloc")
    });
}

/// A statement that makes the compiler warn, at `at`, that the attribute
/// leaves `subject` as written, a leaf, and what to write instead: the use
/// of a deprecated local item (the stable way for an attribute to warn).
/// `quiet` leaves it out, as does `#[allow(deprecated)]`.
fn nothing_to_rewrite(name: &syn::Ident, subject: &str) -> Stmt {
    let note = format!(
        "`#[batch_alloc]` leaves {subject} as written: its body is {LEAF}. If it allocates where \
         no scope is open, annotate the functions that call it, or write the body as \
         `batch_alloc::scope(|| ..)`; `#[batch_alloc(quiet)]` keeps it without this warning"
    );
    warning("BatchAllocHasNothingToRewrite", name.span(), &note)
}

/// A statement that makes the compiler warn, at `argument` (`per_site` or
/// `boxes`), that it is deprecated and does nothing.
fn deprecated_argument(argument: &Ident) -> Stmt {
    let note = format!(
        "`#[batch_alloc({argument})]` is now `#[batch_alloc]`: the per-site form is gone, and \
         the default form serves every box it did (from the thread's runs, a pointer bump \
         each) and everything else the function allocates; the argument will go in a later \
         release"
    );
    warning("BatchAllocPerSiteIsGone", argument.span(), &note)
}

/// A statement whose only effect is a warning at `place` with `note`: the
/// use of a deprecated local item named `item_name`, the stable way for an
/// attribute to warn. `#[allow(deprecated)]` silences it.
fn warning(item_name: &str, place: Span, note: &str) -> Stmt {
    let span = Span::mixed_site();
    let item = Ident::new(item_name, span);
    let used = Ident::new(item_name, place);
    Stmt::Expr(
        Expr::Verbatim(quote_spanned! {span=>
            {
                #[deprecated(note = #note)]
                struct #item;
                let _ = #used;
            }
        }),
        None,
    )
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

const EXPECTED: &str = "expected a function, method or impl block: `#[batch_alloc]` rewrites the loops of function bodies";

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
            "expected a function body: `#[batch_alloc]` rewrites the loops of function bodies",
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
        let position = attrs.iter().position(|attr| {
            attr.path()
                .segments
                .last()
                .is_some_and(|segment| segment.ident == "batch_alloc")
        });
        let Some(position) = position else {
            item.to_tokens(&mut out);
            continue;
        };
        let attr = attrs.remove(position);
        let args = match attr.meta {
            syn::Meta::Path(_) => TokenStream::new(),
            syn::Meta::List(list) => list.tokens,
            syn::Meta::NameValue(meta) => {
                return Err(Error::new_spanned(meta, "expected `#[batch_alloc]`"))
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
