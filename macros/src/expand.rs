//! Expanding `#[batch_alloc]` on one item.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::visit_mut::VisitMut;
use syn::{Block, Error, ImplItem, Item, Result, Signature, TraitItemFn};

use crate::args::{Args, Mode};
use crate::emit::Names;
use crate::nests::Nests;
use crate::scoped::Body;

/// Input:  the attribute's arguments and the item it is on.
/// Output: the item with every loop nest of every function body rewritten.
///
/// On error the caller emits the error followed by the original item, so
/// that the error is the only one the user sees.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> Result<TokenStream> {
    let args = syn::parse2::<Args>(args);
    let item = syn::parse2::<Item>(item.clone())
        .map_err(|_| not_a_function(item))
        .and_then(supported);
    let (Args { mode }, mut item) = both(args, item)?;
    match &mut item {
        Item::Fn(function) => rewrite_fn(mode, &function.sig, &mut function.block),
        Item::Impl(block) => {
            for member in &mut block.items {
                if let ImplItem::Fn(method) = member {
                    rewrite_fn(mode, &method.sig, &mut method.block);
                }
            }
        }
        _ => {}
    }
    Ok(item.into_token_stream())
}

/// A function or an impl block; anything else is an error.
fn supported(item: Item) -> Result<Item> {
    match item {
        Item::Fn(_) | Item::Impl(_) => Ok(item),
        other => Err(unsupported(&other)),
    }
}

/// Rewrites one function body.
fn rewrite_fn(mode: Mode, sig: &Signature, body: &mut Block) {
    if sig.constness.is_some() {
        // A `const fn` cannot call `Box::new`: nothing to batch.
        return;
    }
    let mut names = Names::default();
    match mode {
        Mode::Scoped => Body::new(&mut names).visit_block_mut(body),
        Mode::Boxes => Nests::new(&mut names).visit_block_mut(body),
    }
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
