//! The default form: an annotated function is a batch scope while it runs,
//! and otherwise the program it was.
//!
//! A synchronous function keeps its body as written. Where it can name
//! itself with certainty (see [`recall`]), its first statement is
//!
//! ```text
//! if ::batch_alloc::__private::must_open(SITE) {
//!     let __scope = ::batch_alloc::__private::pin!(::batch_alloc::__private::guard());
//!     ::batch_alloc::__private::open_for_call(SITE, __scope.as_ref());
//!     return Self::name::<T, N>(self, a, b);
//! }
//! // the body as written
//! ```
//!
//! Inside an open scope (an annotated caller's, the common case) that is a
//! thread-local read and a test: the body runs as written, with nothing
//! live across it, so the compiler sees the function it saw as written
//! (same frame, same inlining, no unwinding cleanup). Where no scope is
//! open, the function opens one and calls itself inside it with its own
//! arguments, moved: every parameter and local drops where and when it
//! did, `#[track_caller]` locations pass through (a `#[track_caller]`
//! function calling itself hands on its caller's location), and the only
//! difference is one more frame of the function, at the top call.
//!
//! Where it cannot name itself with certainty (a function annotated alone
//! cannot tell a free function from an associated one, nor an inherent
//! impl from a trait impl; a trait impl may be more general than its
//! trait), the first statement is a **guard** instead:
//!
//! ```text
//! let __scope = ::batch_alloc::__private::pin!(::batch_alloc::__private::guard());
//! ::batch_alloc::__private::enter(SITE, __scope.as_ref());
//! ```
//!
//! declared first, so it drops last of the body's locals and closes the
//! scope it opened however the function returns. Nothing else changes
//! either; it costs a few instructions more than the call to itself (a
//! thread-local compared with the guard's address at the end).
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
//! the open scope, closures' outermost loops get guards of their own and
//! `async` blocks become scoped futures (see [`body`]).

mod body;
mod future;
mod leaf;
mod recall;

use proc_macro2::Span;
use quote::quote_spanned;
use syn::{Attribute, Block, Expr, Signature, Stmt};

use crate::shared::{named_site, private_path, Names};

pub(crate) use recall::Owner;

/// Rewrites one function: its body's `Box::new` calls, closures' loops and
/// `async` blocks, then makes the function a scope. False, with the
/// function as written, for a leaf (see [`leaf::is_leaf`]).
pub(crate) fn rewrite_fn(
    sig: &mut Signature,
    attrs: &[Attribute],
    body: &mut Block,
    names: &mut Names,
    owner: &Owner,
) -> bool {
    if sig.asyncness.is_none() && leaf::is_leaf(body) {
        return false;
    }
    body::Body::new(names, body::Kind::Scoped).visit_block(body);
    let at = named_site("Function", &sig.ident.to_string(), sig.ident.span());
    if sig.asyncness.is_some() {
        future::scoped_async_fn(sig, body, at);
        return true;
    }
    let span = Span::mixed_site();
    let scope = syn::Ident::new("__scope", span);
    let site = syn::Ident::new("__site", span);
    let first = match recall::call_to_itself(sig, attrs, body, owner) {
        // One site, for the report, named twice.
        Some(call) => {
            let must_open = private_path("must_open");
            let open_for_call = private_path("open_for_call");
            let guard = private_path("guard");
            let pin = private_path("pin");
            quote_spanned! {span=>
                {
                    let #site = #at;
                    if #must_open(#site) {
                        let #scope = #pin!(#guard());
                        #open_for_call(#site, #scope.as_ref());
                        return #call;
                    }
                }
            }
        }
        None => {
            let enter = private_path("enter");
            let guard = private_path("guard");
            let pin = private_path("pin");
            quote_spanned! {span=>
                let #scope = #pin!(#guard());
                #enter(#at, #scope.as_ref());
            }
        }
    };
    body.stmts
        .insert(0, Stmt::Expr(Expr::Verbatim(first), None));
    true
}
