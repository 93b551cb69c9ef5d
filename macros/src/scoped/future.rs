//! `async fn`: a scope for each poll.
//!
//! Input:
//! ```text
//! async fn name(a: A, (x, _): (X, W), mut m: M) -> R { body }
//! ```
//! Output:
//! ```text
//! async fn name(a: A, __arg1: (X, W), m: M) -> R {
//!     ::batch_alloc::__private::scoped_future(SITE, async move {
//!         let a = a;
//!         let __arg1 = __arg1;
//!         let (x, _) = __arg1;
//!         let mut m = m;
//!         if false { let __return: R = loop {}; return __return; }
//!         let __result: R = { body };
//!         return __result;
//!     })
//!     .await
//! }
//! ```
//!
//! An `async fn`'s future moves every parameter into its body, in order, a
//! pattern parameter first whole and then into its pattern: the inner
//! `async move` block does the same, so that each parameter is moved into
//! it (even one the body never uses) and everything drops in the order it
//! did as written, whether the future completes, unwinds or is dropped
//! before or between polls. The `if false` return gives the block the
//! function's return type before the body's first `return`, so that every
//! return coerces to it (several concrete boxes as one `Box<dyn Trait>`);
//! a return type naming `impl Trait` cannot be written there and has no
//! coercion to make. The wrapper polls the block inside the polling
//! thread's scope, and is a future of the same output, `Send` and `Unpin`
//! exactly when the block is.
//!
//! The body is a block of its own, whose value is held in a local: its
//! tail expression's temporaries then drop at the end of that `let`, after
//! the body's locals and before the parameters, as an `async fn` drops
//! them.

use std::mem;

use proc_macro2::{Ident, Span};
use quote::{quote, quote_spanned};
use syn::visit::Visit;
use syn::{Block, Expr, FnArg, Pat, PatIdent, ReturnType, Signature, Stmt};

use crate::shared::private_path;

/// Rewrites `sig`'s parameters and `body` as above.
pub(crate) fn scoped_async_fn(sig: &mut Signature, body: &mut Block, site: Expr) {
    let span = Span::mixed_site();
    let mut moves = Vec::new();
    for (index, input) in sig.inputs.iter_mut().enumerate() {
        let FnArg::Typed(typed) = input else {
            // `self` is moved into the block by its first use, and drops
            // after every other parameter, as in the `async fn`.
            continue;
        };
        match &mut *typed.pat {
            Pat::Ident(name) if name.by_ref.is_none() && name.subpat.is_none() => {
                let mutability = name.mutability.take();
                let ident = &name.ident;
                moves.push(quote!(let #mutability #ident = #ident;));
            }
            pat => {
                let hidden = Ident::new(&format!("__arg{index}"), span);
                let pattern = mem::replace(
                    pat,
                    Pat::Ident(PatIdent {
                        attrs: Vec::new(),
                        by_ref: None,
                        mutability: None,
                        ident: hidden.clone(),
                        subpat: None,
                    }),
                );
                moves.push(quote_spanned!(span=> let #hidden = #hidden;));
                moves.push(quote!(let #pattern = #hidden;));
            }
        }
    }
    let output = return_type(&sig.output);
    let fixed_return = output.as_ref().map(|output| {
        quote_spanned! {span=>
            #[allow(
                unreachable_code,
                clippy::diverging_sub_expression,
                clippy::empty_loop,
                clippy::let_unit_value,
                clippy::needless_return
            )]
            if false {
                let __return: #output = loop {};
                return __return;
            }
        }
    });
    let annotation = output.map(|output| quote!(: #output));
    let stmts = mem::take(&mut body.stmts);
    let scoped = private_path("scoped_future");
    body.stmts = vec![Stmt::Expr(
        Expr::Verbatim(quote_spanned! {span=>
            #scoped(#site, async move {
                #(#moves)*
                #fixed_return
                let __result #annotation = { #(#stmts)* };
                #[allow(unreachable_code)]
                return __result;
            })
            .await
        }),
        None,
    )];
}

/// The return type to fix the block's to, if it can be written in a `let`:
/// not with an `impl Trait` or `_` in it.
fn return_type(output: &ReturnType) -> Option<syn::Type> {
    let ty = match output {
        ReturnType::Default => syn::parse_quote!(()),
        ReturnType::Type(_, ty) => (**ty).clone(),
    };
    struct Unwritable(bool);
    impl<'ast> Visit<'ast> for Unwritable {
        fn visit_type_impl_trait(&mut self, _: &'ast syn::TypeImplTrait) {
            self.0 = true;
        }
        fn visit_type_infer(&mut self, _: &'ast syn::TypeInfer) {
            self.0 = true;
        }
        fn visit_type_macro(&mut self, _: &'ast syn::TypeMacro) {
            self.0 = true;
        }
        fn visit_type_never(&mut self, _: &'ast syn::TypeNever) {
            // `!` may be a return type but not yet a local's.
            self.0 = true;
        }
    }
    let mut check = Unwritable(false);
    check.visit_type(&ty);
    (!check.0).then_some(ty)
}
