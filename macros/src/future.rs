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
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{
    Block, Expr, FnArg, GenericParam, Generics, Pat, PatIdent, ReturnType, Signature, Stmt, Type,
    TypeParamBound,
};

use crate::runtime::Runtime;

/// Rewrites `sig` and `body` as above. `impl_generics` are the generics of
/// the impl block the function is in, where the attribute is on the block;
/// `None` where it cannot know them (a function annotated alone).
pub(crate) fn scoped_async_fn(
    runtime: &Runtime,
    sig: &mut Signature,
    body: &mut Block,
    site: Expr,
    impl_generics: Option<&Generics>,
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
    // Where the compiler points for what the block adds: the return type
    // (or, with none written, the name) and the body. Located there, with
    // this crate's hygiene and edition.
    let at_return = Span::mixed_site().located_at(match &sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => sig.ident.span(),
    });
    let at_body = Span::mixed_site().located_at(body.brace_token.span.join());
    let fixed_return = is_writable(&output).then(|| {
        quote_spanned! {at_return=>
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
    let expect = closure_bounds(&output, &sig.generics, impl_generics).map(|bounds| {
        quote_spanned! {at_return=>
            #[allow(clippy::missing_const_for_fn)]
            #[inline(always)]
            fn __expect<__F: #bounds>(value: __F) -> __F {
                value
            }
        }
    });
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
    let value = match &expect {
        Some(_) => quote_spanned!(at_return=> __expect(#user_block)),
        None => quote!(#user_block),
    };
    let block = quote_spanned! {at_body=>
        async move {
            #(#moves)*
            #fixed_return
            #expect
            #value
        }
    };
    let tokens: TokenStream = quote_spanned!(span=> #scoped(#site, #block));
    body.stmts = vec![Stmt::Expr(Expr::Verbatim(tokens), None)];
}

/// The bounds of a return type `impl Fn..(..)`, for the helper that gives a
/// closure returned as the body's value its signature (an `async fn`'s body
/// gets it from the return type; the block's `let` has no type to give it,
/// since `impl Trait` cannot be written there). `None` if the return type
/// is not such an `impl`, or if its bounds might name a generic parameter
/// or `Self`, which the helper, an item, cannot see: the fn's own, the impl
/// block's where they are known, and, where they are not (a function
/// annotated alone), any single-segment type name but the standard
/// library's prelude and primitive types.
fn closure_bounds(
    output: &Type,
    fn_generics: &Generics,
    impl_generics: Option<&Generics>,
) -> Option<syn::punctuated::Punctuated<TypeParamBound, syn::Token![+]>> {
    let Type::ImplTrait(impl_trait) = output else {
        return None;
    };
    let is_closure_trait = |bound: &TypeParamBound| match bound {
        TypeParamBound::Trait(t) => t.path.segments.last().is_some_and(|last| {
            ["Fn", "FnMut", "FnOnce"]
                .iter()
                .any(|name| last.ident == name)
                && matches!(last.arguments, syn::PathArguments::Parenthesized(_))
        }),
        _ => false,
    };
    if !impl_trait.bounds.iter().any(is_closure_trait) {
        return None;
    }
    let mut outer: Vec<String> = vec!["Self".to_owned()];
    for generics in std::iter::once(fn_generics).chain(impl_generics) {
        outer.extend(generics.params.iter().map(|param| match param {
            GenericParam::Type(t) => t.ident.to_string(),
            GenericParam::Lifetime(l) => l.lifetime.ident.to_string(),
            GenericParam::Const(c) => c.ident.to_string(),
        }));
    }
    struct Names<'a> {
        outer: &'a [String],
        known: bool,
        safe: bool,
    }
    impl<'ast> Visit<'ast> for Names<'_> {
        fn visit_path(&mut self, path: &'ast syn::Path) {
            if let [only] = path.segments.iter().collect::<Vec<_>>()[..] {
                let name = only.ident.to_string();
                const STD: [&str; 24] = [
                    "str", "bool", "char", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16",
                    "i32", "i64", "i128", "isize", "f32", "f64", "String", "Vec", "Box", "Option",
                    "Result", "Fn", "FnMut",
                ];
                let prelude = STD.contains(&name.as_str()) || name == "FnOnce";
                if self.outer.contains(&name) || (!self.known && !prelude) {
                    self.safe = false;
                }
            }
            syn::visit::visit_path(self, path);
        }
        fn visit_lifetime(&mut self, lifetime: &'ast syn::Lifetime) {
            if self.outer.contains(&lifetime.ident.to_string()) {
                self.safe = false;
            }
        }
        fn visit_bound_lifetimes(&mut self, _: &'ast syn::BoundLifetimes) {
            // `for<'a>`: the helper's own.
        }
    }
    let mut names = Names {
        outer: &outer,
        known: impl_generics.is_some(),
        safe: true,
    };
    names.visit_type_impl_trait(impl_trait);
    names.safe.then(|| impl_trait.bounds.clone())
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
