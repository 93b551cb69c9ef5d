//! An `async fn`: one future, each of whose polls runs inside the scope of
//! the thread polling it.
//!
//! Input:
//! ```text
//! async fn name(self, a: A, (x, _): (X, W), mut m: M) -> R { body }
//! ```
//! Output:
//! ```text
//! fn name(self, a: A, __arg2: (X, W), m: M) -> impl Future<Output = R> {
//!     <facade>::__private::scoped_future(SITE, async move {
//!         let _ = &self;
//!         let a = a;
//!         let mut __arg2 = __arg2;
//!         let (x, _) = __arg2;
//!         let mut m = m;
//!         if false { let __return: R = loop {}; return __return; }
//!         let __result: R = body;
//!         __result
//!     })
//! }
//! ```
//!
//! This is what the compiler makes of an `async fn` itself: a function
//! that returns a future holding every parameter, moved into its body in
//! order (a pattern parameter first whole, then into its pattern; a
//! parameter `_` still moved, and dropped when the body ends). The only
//! addition is the wrapper, which opens or joins the polling thread's
//! scope for each poll and closes what it opened before the poll returns,
//! so no scope is held while the future is suspended. Parameters are
//! stored once, in the block: the future is the size the `async fn`'s
//! would be, and `Send`, `Sync` and `Unpin` exactly when it would be.
//!
//! - `let _ = &self` makes the block capture the whole `self`, not the
//!   fields its body uses (closures and `async` blocks capture disjoint
//!   fields): a by-value `self` then drops whole, after the other
//!   parameters, as in the `async fn`. (`self` cannot be re-bound by a
//!   `let`; as a capture it drops when the future does, which is when
//!   `.await` finishes with it.)
//! - The return type: the `impl Future` is spelt with tokens of this crate,
//!   whose edition (2024) makes it capture every lifetime and type of the
//!   signature, as an `async fn`'s future does in every edition.
//! - The `if false` return gives the block the function's return type
//!   before the body's first `return`, so that every return coerces to it
//!   (several concrete boxes as one `Box<dyn Trait>`); a return type naming
//!   `impl Trait` cannot be written there and has no coercion to make.
//! - The body is the user's block, braces and all (its edition decides
//!   when its tail's temporaries drop), and its value is held in a local,
//!   so that those temporaries drop before the parameters, as an `async
//!   fn` drops them.
//! - Attributes of a parameter (`#[cfg(..)]`, lint levels) go on the
//!   statements that move it, so a parameter configured out is moved
//!   nowhere.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::visit::Visit;
use syn::{Block, Expr, FnArg, Pat, PatIdent, ReturnType, Signature, Stmt, Type};

use crate::runtime::Runtime;

/// Rewrites `sig` and `body` as above.
pub(crate) fn scoped_async_fn(
    runtime: &Runtime,
    sig: &mut Signature,
    body: &mut Block,
    site: Expr,
) {
    let span = Span::mixed_site();
    let mut moves = Vec::new();
    for (index, input) in sig.inputs.iter_mut().enumerate() {
        let typed = match input {
            FnArg::Receiver(receiver) => {
                let attrs = &receiver.attrs;
                let self_token = &receiver.self_token;
                moves.push(quote_spanned!(span=> #(#attrs)* let _ = &#self_token;));
                continue;
            }
            FnArg::Typed(typed) => typed,
        };
        let attrs = &typed.attrs;
        match &mut *typed.pat {
            Pat::Ident(name) if name.by_ref.is_none() && name.subpat.is_none() => {
                let mutability = name.mutability.take();
                let ident = &name.ident;
                moves.push(quote!(#(#attrs)* let #mutability #ident = #ident;));
            }
            pat => {
                let hidden = Ident::new(&format!("__arg{index}"), span);
                let pattern = std::mem::replace(
                    pat,
                    Pat::Ident(PatIdent {
                        attrs: Vec::new(),
                        by_ref: None,
                        mutability: None,
                        ident: hidden.clone(),
                        subpat: None,
                    }),
                );
                // `mut`, since the pattern may bind by `ref mut`.
                moves.push(quote_spanned! {span=>
                    #(#attrs)* #[allow(unused_mut)] let mut #hidden = #hidden;
                });
                moves.push(quote!(#(#attrs)* let #pattern = #hidden;));
            }
        }
    }
    let output = match &sig.output {
        ReturnType::Default => syn::parse_quote!(()),
        ReturnType::Type(_, ty) => (**ty).clone(),
    };
    let writable = is_writable(&output);
    let fixed_return = writable.then(|| {
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
    let annotation = writable.then(|| quote!(: #output));
    let future = runtime.private("Future");
    let arrow = match &sig.output {
        ReturnType::Type(arrow, _) => *arrow,
        ReturnType::Default => syn::Token![->](span),
    };
    sig.output = ReturnType::Type(
        arrow,
        Box::new(Type::Verbatim(
            quote_spanned!(span=> impl #future<Output = #output>),
        )),
    );
    sig.asyncness = None;
    let user_block = Block {
        brace_token: body.brace_token,
        stmts: std::mem::take(&mut body.stmts),
    };
    let scoped = runtime.private("scoped_future");
    let result = Ident::new("__result", span);
    let tokens: TokenStream = quote_spanned! {span=>
        #scoped(#site, async move {
            #(#moves)*
            #fixed_return
            let #result #annotation = #user_block;
            #result
        })
    };
    body.stmts = vec![Stmt::Expr(Expr::Verbatim(tokens), None)];
}

/// Whether `ty` can be written as a local's type: not with an `impl Trait`,
/// `_`, `!` or a macro in it.
fn is_writable(ty: &Type) -> bool {
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
    check.visit_type(ty);
    !check.0
}
