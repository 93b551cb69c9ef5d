//! The closure form: for a synchronous function that cannot be certain how
//! it names itself (see [`recall`](super::recall)).
//!
//! Input:
//! ```text
//! fn name(a: A, _: B, mut m: M) -> R { body }
//! ```
//! Output:
//! ```text
//! fn name(a: A, __arg1: B, m: M) -> R {
//!     ::batch_alloc::__private::run_in_scope(SITE, #[inline(always)] move || -> R {
//!         let a = a;
//!         let __arg1 = __arg1;
//!         let mut m = m;
//!         let __result: R = { body };
//!         return __result;
//!     })
//! }
//! ```
//!
//! `run_in_scope` calls the closure where it is, inside an open scope (a
//! thread-local read and a test), and otherwise opens one, out of line,
//! around it: the function's frame holds the body, always inlined, and one
//! cold call, as when it calls itself. The body is the function's own,
//! moved, not copied, so its items and macros are what they were. The
//! closure takes every parameter in, in order, and the body's value is
//! held in a local, so that everything drops where and when it did:
//! locals, then the body's tail temporaries, then the parameters, last
//! first (`self`, taken by the closure when the body uses it, last of
//! all). The closure's return type, and the local's, is the function's, so
//! every `return`, `?` and the tail converts as it did; an `impl Trait` in
//! it is left to inference (`_`), and has no coercion to make. (A body
//! that never returns makes the last `return` unreachable: that lint is
//! allowed on it alone.)
//!
//! A closure is not the function in two ways, so those functions take the
//! guard instead: its body is not an `unsafe fn`'s unsafe context, and a
//! `#[track_caller]` function's callees would see the closure as their
//! caller. A parameter that is a pattern or a `ref` binding cannot be
//! taken in whole: a guard too. Backtraces name the body `name::{closure}`,
//! inside `name`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::visit_mut::VisitMut;
use syn::{Attribute, Block, Expr, FnArg, Pat, ReturnType, Signature, Stmt, Type};

use super::recall::{all_passable, name_wildcards};
use crate::shared::private_path;

/// Whether the closure form is the function's.
pub(crate) fn fits(sig: &Signature, attrs: &[Attribute]) -> bool {
    let track_caller = attrs.iter().any(|a| a.path().is_ident("track_caller"));
    let unsafe_fn = matches!(sig.safety, syn::Safety::Unsafe(_));
    !track_caller && !unsafe_fn && sig.variadic.is_none() && all_passable(sig)
}

/// Rewrites the function as above; `at` is its site.
pub(crate) fn wrap(sig: &mut Signature, body: &mut Block, site: Expr) {
    name_wildcards(sig);
    let mut takes = Vec::<TokenStream>::new();
    for input in sig.inputs.iter_mut() {
        let FnArg::Typed(typed) = input else {
            continue;
        };
        if let Pat::Ident(name) = &mut *typed.pat {
            let mutability = name.mutability.take();
            let ident = &name.ident;
            takes.push(quote!(let #mutability #ident = #ident;));
        }
    }
    let output = match &sig.output {
        ReturnType::Default => quote!(()),
        ReturnType::Type(_, ty) => {
            let mut ty = (**ty).clone();
            OpaqueToInferred.visit_type_mut(&mut ty);
            quote!(#ty)
        }
    };
    // `!` may be a return type but not yet a local's.
    let never = matches!(&sig.output, ReturnType::Type(_, ty) if matches!(**ty, Type::Never(_)));
    let annotation = (!never).then(|| quote!(: #output));
    let span = Span::mixed_site();
    let stmts = std::mem::take(&mut body.stmts);
    let run_in_scope = private_path("run_in_scope");
    body.stmts = vec![Stmt::Expr(
        Expr::Verbatim(quote_spanned! {span=>
            #run_in_scope(#site, #[inline(always)] move || -> #output {
                #(#takes)*
                let __result #annotation = { #(#stmts)* };
                #[allow(unreachable_code)]
                return __result;
            })
        }),
        None,
    )];
}

/// Makes each `impl Trait` of a type `_`, for a closure's return type.
struct OpaqueToInferred;

impl VisitMut for OpaqueToInferred {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        match ty {
            Type::ImplTrait(_) => *ty = syn::parse_quote!(_),
            _ => syn::visit_mut::visit_type_mut(self, ty),
        }
    }
}
