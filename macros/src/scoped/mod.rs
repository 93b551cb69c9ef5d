//! The default form: an annotated function is a batch scope while it runs,
//! and otherwise the program it was.
//!
//! A synchronous function keeps its body as written. Where it can name
//! itself with certainty (see [`recall`]), its first statement is
//!
//! ```text
//! if ::batch_alloc::__private::must_open(SITE) {
//!     return ::batch_alloc::__private::reenter(SITE, move || Self::name::<T, N>(self, a, b));
//! }
//! // the body as written
//! ```
//!
//! Inside an open scope (an annotated caller's, the common case) that is a
//! thread-local read and a test, and the body runs as written, with
//! nothing live across it: the compiler sees the function it saw as
//! written plus one cold call. Where no scope is open, the function opens
//! one and calls itself inside it with its own arguments, moved: every
//! parameter and local drops where and when it did, and the only
//! difference is one more frame of the function, at the top call.
//!
//! Where it cannot be certain of the call (annotated alone, a function
//! cannot tell a free function from an associated one, nor an inherent
//! impl from a trait impl; a trait impl may be more general than its
//! trait), its body runs in a closure of its own, always inlined, that
//! takes every parameter in (see [`closure`]): the same one test and one
//! cold call. A `#[track_caller]` or `unsafe` function that cannot call
//! itself, or whose parameters are patterns, starts with a **guard**
//! instead:
//!
//! ```text
//! let __scope = ::batch_alloc::__private::pin!(::batch_alloc::__private::Scope::new());
//! ::batch_alloc::__private::enter(SITE, __scope.as_ref());
//! ```
//!
//! declared first, so it drops last of the body's locals and closes the
//! scope it opened however the function returns; it costs a few
//! instructions more (a byte of the frame set and tested) and the cleanup
//! on unwinding that its drop takes.
//!
//! An `async fn` cannot call itself (its future would contain itself), and
//! a scope must not be held while its future is suspended: its body
//! becomes a future whose every poll opens or joins the scope of the
//! thread polling it (see [`future`]), with every parameter moved into it
//! in the order `async fn` itself moves them.
//!
//! A leaf is left as written (see [`leaf`]): a function made of method
//! calls, field accesses and operators, as accessors are, runs inside its
//! caller's scope, and a check would cost more than its body.
//!
//! In every body, each `Box::new(value)` becomes a typed allocation from
//! the open scope and `async` blocks become scoped futures (see [`body`]).

mod body;
mod closure;
mod future;
mod leaf;
mod recall;

use proc_macro2::Span;
use quote::quote_spanned;
use syn::{Attribute, Block, Expr, Signature, Stmt};

use crate::shared::{named_site, private_path};

pub(crate) use recall::Owner;

/// Rewrites one function: its body's `Box::new` calls and `async` blocks,
/// then makes the function a scope. False, with the function as written,
/// for a leaf (see [`leaf::is_leaf`]); true also for a `const fn`, which
/// cannot allocate and is left as it is without a word.
pub(crate) fn rewrite_fn(
    sig: &mut Signature,
    attrs: &[Attribute],
    body: &mut Block,
    owner: &Owner,
) -> bool {
    if sig.constness.is_some() {
        return true;
    }
    if sig.asyncness.is_none() && leaf::is_leaf(body) {
        return false;
    }
    body::rewrite(body);
    let site = named_site("Function", &sig.ident.to_string(), sig.ident.span());
    if sig.asyncness.is_some() {
        future::scoped_async_fn(sig, body, site);
    } else if let Some(call) = recall::call_to_itself(sig, attrs, body, owner) {
        let first = calls_itself(sig, attrs, call, site);
        body.stmts
            .insert(0, Stmt::Expr(Expr::Verbatim(first), None));
    } else if closure::fits(sig, attrs) {
        closure::wrap(sig, body, site);
    } else {
        body.stmts
            .insert(0, Stmt::Expr(Expr::Verbatim(guard(site)), None));
    }
    true
}

/// Input:  a function that can call itself, `Self::name::<T>(self, a)`
/// Output: `if must_open(SITE) { return reenter(SITE, move || Self::name::<T>(self, a)); }`
///
/// `reenter` opens the scope and calls the closure inside it, out of line
/// and cold: the function holds one call more, in a branch never taken
/// inside a scope, and nothing that unwinds through it. A
/// `#[track_caller]` function calls itself directly instead, so that its
/// caller's location passes on (a `#[track_caller]` function calling itself
/// hands on its own caller's), and so does an `unsafe fn`, whose call then
/// takes an `unsafe` block (in a function that is `unsafe` already); the
/// guard then lives in its frame, in that branch.
fn calls_itself(
    sig: &Signature,
    attrs: &[Attribute],
    recall::Recall { function, args }: recall::Recall,
    site: Expr,
) -> proc_macro2::TokenStream {
    let span = Span::mixed_site();
    let site_name = syn::Ident::new("__site", span);
    let scope = syn::Ident::new("__scope", span);
    let must_open = private_path("must_open");
    let track_caller = attrs.iter().any(|a| a.path().is_ident("track_caller"));
    let unsafe_fn = matches!(sig.safety, syn::Safety::Unsafe(_));
    let call = match (track_caller, unsafe_fn) {
        (false, false) => {
            let reenter = private_path("reenter");
            quote_spanned!(span=> #reenter(#site_name, move || #function(#(#args),*)))
        }
        _ => {
            let scope_type = private_path("Scope");
            let pin = private_path("pin");
            let open_for_call = private_path("open_for_call");
            let call = match unsafe_fn {
                true => quote_spanned!(span=> unsafe { #function(#(#args),*) }),
                false => quote_spanned!(span=> #function(#(#args),*)),
            };
            quote_spanned! {span=>
                {
                    let #scope = #pin!(#scope_type::new());
                    #open_for_call(#site_name, #scope.as_ref());
                    #call
                }
            }
        }
    };
    // One site, for the report, named twice.
    quote_spanned! {span=>
        {
            let #site_name = #site;
            if #must_open(#site_name) {
                return #call;
            }
        }
    }
}

/// `let __scope = pin!(Scope::new()); enter(SITE, __scope.as_ref());`: declared
/// first, so that the guard drops last of the body's locals.
fn guard(site: Expr) -> proc_macro2::TokenStream {
    let span = Span::mixed_site();
    let scope = syn::Ident::new("__scope", span);
    let enter = private_path("enter");
    let scope_type = private_path("Scope");
    let pin = private_path("pin");
    quote_spanned! {span=>
        let #scope = #pin!(#scope_type::new());
        #enter(#site, #scope.as_ref());
    }
}
