//! Expanding `#[batch_alloc]` on one item.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote_spanned, ToTokens};
use syn::{Attribute, Block, Error, Expr, ImplItem, Item, Result, Signature, Stmt, TraitItemFn};

use crate::args::{Args, Mode};
use crate::scoped::Owner;
use crate::shared::Names;
use crate::{per_site, scoped};
use syn::spanned::Spanned;

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
    let (args, mut item) = both(args, item)?;
    match &mut item {
        Item::Fn(function) => {
            let nothing = rewrite_fn(
                args.mode,
                &mut function.sig,
                &function.attrs,
                &mut function.block,
                &Owner::Unknown,
            );
            if let (Some(why), false) = (nothing, args.quiet) {
                let subject = format!("`{}`", function.sig.ident);
                let warning = nothing_to_rewrite(args.mode, &function.sig.ident, &subject, &why);
                function.block.stmts.insert(0, warning);
            }
            if let Some(boxes) = &args.old_name {
                function.block.stmts.insert(0, old_name(boxes));
            }
        }
        Item::Impl(block) => {
            let mut rewrote = false;
            let mut why = None;
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
            for member in &mut block.items {
                if let ImplItem::Fn(method) = member {
                    // The block's attribute covers the method: its own, if
                    // it has one, would check for the scope a second time.
                    let own = take_own_attribute(&mut method.attrs);
                    let mode = own.as_ref().map_or(args.mode, |own| own.mode);
                    let (sig, attrs) = (&mut method.sig, &method.attrs);
                    match rewrite_fn(mode, sig, attrs, &mut method.block, &owner) {
                        None => rewrote = true,
                        Some(reason) => why = why.or(Some(reason)),
                    }
                }
            }
            // Annotating a whole impl is how a user says "all of these",
            // accessors included: in the default form, a block whose
            // methods are all leaves is no surprise, and says nothing. In
            // the per-site form, one warning for the block, and only if no
            // method had anything to rewrite.
            let first = block.items.iter_mut().find_map(|member| match member {
                ImplItem::Fn(method) if method.sig.constness.is_none() => Some(method),
                _ => None,
            });
            let per_site = args.mode == Mode::PerSite;
            if let (false, Some(why), Some(method), false, true) =
                (rewrote, why, first, args.quiet, per_site)
            {
                let span = block.self_ty.span();
                let at = syn::Ident::new("this_impl", span);
                let warning = nothing_to_rewrite(args.mode, &at, "this `impl` block", &why);
                method.block.stmts.insert(0, warning);
            }
            let first = block.items.iter_mut().find_map(|member| match member {
                ImplItem::Fn(method) => Some(method),
                _ => None,
            });
            if let (Some(boxes), Some(method)) = (&args.old_name, first) {
                method.block.stmts.insert(0, old_name(boxes));
            }
        }
        _ => {}
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

/// Takes a method's own `#[batch_alloc(..)]` out of its attributes, with
/// its arguments (an argument it cannot parse is dropped with it: the
/// block's arguments apply).
fn take_own_attribute(attrs: &mut Vec<Attribute>) -> Option<Args> {
    let position = attrs.iter().position(|attr| {
        attr.path()
            .segments
            .last()
            .is_some_and(|segment| segment.ident == "batch_alloc")
    })?;
    let attr = attrs.remove(position);
    match attr.meta {
        syn::Meta::List(list) => syn::parse2::<Args>(list.tokens).ok(),
        _ => Some(Args::default()),
    }
}

/// Rewrites one function body. Returns why there was nothing to rewrite,
/// if there was not.
fn rewrite_fn(
    mode: Mode,
    sig: &mut Signature,
    attrs: &[Attribute],
    body: &mut Block,
    owner: &Owner,
) -> Option<String> {
    if sig.constness.is_some() {
        // A `const fn` cannot call `Box::new`: nothing to batch.
        return None;
    }
    let mut names = Names::default();
    match mode {
        Mode::Scoped => match scoped::rewrite_fn(sig, attrs, body, owner) {
            true => None,
            false => Some(format!("its body is {LEAF}")),
        },
        Mode::PerSite => per_site::rewrite_fn(body, &mut names),
    }
}

/// A statement that makes the compiler warn, at `at`, that the attribute
/// in `mode` found nothing to rewrite in `subject`, and why, and what to
/// write instead: the use of a deprecated local item (the stable way for an
/// attribute to warn). `quiet` leaves it out, as does
/// `#[allow(deprecated)]`.
fn nothing_to_rewrite(mode: Mode, at: &syn::Ident, subject: &str, why: &str) -> Stmt {
    let note = match mode {
        Mode::Scoped => format!(
            "`#[batch_alloc]` leaves {subject} as written: {why}. If it allocates where no \
             scope is open, annotate the functions that call it, or write the body as \
             `batch_alloc::scope(|| ..)`; `#[batch_alloc(quiet)]` keeps it without this warning"
        ),
        Mode::PerSite => format!(
            "`#[batch_alloc(per_site)]` has nothing to rewrite in {subject}: {why}. The per-site \
             form serves only `Box::new` calls inside loops; `#[batch_alloc]`, without `per_site`, \
             makes the function a batch scope that serves everything it allocates; \
             `#[batch_alloc(per_site, quiet)]` keeps this form without the warning"
        ),
    };
    warning("BatchAllocHasNothingToRewrite", at.span(), &note)
}

/// A statement that makes the compiler warn, at `boxes`, that the per-site
/// form's argument is now `per_site`.
fn old_name(boxes: &Ident) -> Stmt {
    let note = "`#[batch_alloc(boxes)]` is now `#[batch_alloc(per_site)]`: `boxes` named two \
                things (this form, and `Capture::Boxes`, a scope that serves only the annotated \
                boxes); the old name will go in a later release";
    warning("BatchAllocBoxesIsNowPerSite", boxes.span(), note)
}

/// A statement whose only effect is a warning at `at` with `note`: the use
/// of a deprecated local item named `name`, the stable way for an
/// attribute to warn. `#[allow(deprecated)]` silences it.
fn warning(name: &str, at: Span, note: &str) -> Stmt {
    let span = Span::mixed_site();
    let item = Ident::new(name, span);
    let used = Ident::new(name, at);
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
