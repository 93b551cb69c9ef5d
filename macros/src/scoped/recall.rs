//! Whether a function can call itself, and the call: how a synchronous
//! function opens its scope without anything live across its body.
//!
//! The call must name this very function, with this very signature, or
//! the program would change (another function called) or stop compiling.
//! That takes knowing where the function is, which only an annotated
//! `impl` block tells the attribute:
//!
//! - A method of an **inherent** impl calls `Self::name`: inherent methods
//!   come first in path resolution, and one type has one inherent method
//!   of a name.
//! - A method of a **trait** impl calls `<Self as Trait>::name`, through
//!   the trait's signature, which the method may generalise: a parameter
//!   of `&str` where the trait says `&'static str` (or a type alias that
//!   hides a lifetime), a generic bound the method leaves out, a concrete
//!   return type for the trait's `impl Trait`. So only where no parameter
//!   type can hold a lifetime and the method has no generics of its own.
//!   `Drop::drop` cannot be called at all.
//! - A function annotated **alone** cannot tell: `name` in a free
//!   function's body is the function, but in an associated function's it
//!   is whatever `name` the module has; `Self::name` in a trait impl is an
//!   inherent method of the same name if there is one. It takes the
//!   closure form (see [`closure`](super::closure)).
//!
//! The arguments are the parameters, moved: each must be a name (`mut`
//! allowed); a `_` parameter gets a hidden name (a `_` parameter and a
//! named one drop at the same point). A pattern or a `ref` binding has no
//! value left to pass, so it takes the guard, as does a C-variadic
//! function.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, ToTokens};
use syn::visit::Visit;
use syn::{Attribute, Block, FnArg, GenericParam, Pat, PatIdent, ReturnType, Signature, Type};

/// Where a function is, as far as the attribute knows.
pub(crate) enum Owner {
    /// Annotated alone: a free function or any kind of method.
    Unknown,
    /// A method of an annotated inherent `impl` block.
    Inherent,
    /// A method of an annotated `impl Trait for Type` block.
    Trait {
        /// The trait as the impl names it, generic arguments included.
        path: syn::Path,
        /// The impl's own type parameters: the same in the trait's
        /// signature as in the method's.
        impl_params: Vec<Ident>,
    },
}

/// Input:  a synchronous method of an annotated impl block (`owner`)
/// Output: the method calling itself with its own arguments,
///         `Self::name::<T, N>(self, a, b)` or
///         `<Self as Trait>::name(self, a)`, if that call is certain to be
///         this method with this signature; `_` parameters renamed so that
///         they can be passed
pub(crate) fn call_to_itself(
    sig: &mut Signature,
    _attrs: &[Attribute],
    _body: &Block,
    owner: &Owner,
) -> Option<Recall> {
    let path = match owner {
        Owner::Unknown => return None,
        Owner::Inherent => quote!(Self),
        Owner::Trait { path, impl_params } => {
            let is_drop = path.segments.last().is_some_and(|s| s.ident == "Drop");
            if is_drop || !same_as_trait(sig, impl_params) {
                return None;
            }
            quote!(<Self as #path>)
        }
    };
    if sig.variadic.is_some() || !all_passable(sig) {
        return None;
    }
    name_wildcards(sig);
    let mut args = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(receiver) => args.push(receiver.self_token.to_token_stream()),
            FnArg::Typed(typed) => {
                if let Pat::Ident(name) = &*typed.pat {
                    args.push(name.ident.to_token_stream());
                }
            }
        }
    }
    let generics: Vec<TokenStream> = sig
        .generics
        .params
        .iter()
        .filter_map(|param| match param {
            GenericParam::Type(ty) => Some(ty.ident.to_token_stream()),
            GenericParam::Const(c) => Some(c.ident.to_token_stream()),
            GenericParam::Lifetime(_) => None,
        })
        .collect();
    let turbofish = match generics.is_empty() {
        true => TokenStream::new(),
        false => quote!(::<#(#generics),*>),
    };
    let name = &sig.ident;
    Some(Recall {
        function: quote!(#path::#name #turbofish),
        args,
    })
}

/// A function's call to itself: the function, as a path (`Self::name::<T>`),
/// and its arguments.
pub(crate) struct Recall {
    pub(crate) function: TokenStream,
    pub(crate) args: Vec<TokenStream>,
}

/// Gives each `_` parameter a hidden name (`__arg1`), so that it can be
/// passed on: a `_` parameter and a named one drop at the same point.
pub(crate) fn name_wildcards(sig: &mut Signature) {
    for (index, input) in sig.inputs.iter_mut().enumerate() {
        if let FnArg::Typed(typed) = input {
            if matches!(*typed.pat, Pat::Wild(_)) {
                *typed.pat = Pat::Ident(PatIdent {
                    attrs: Vec::new(),
                    by_ref: None,
                    mutability: None,
                    ident: Ident::new(&format!("__arg{index}"), Span::mixed_site()),
                    subpat: None,
                });
            }
        }
    }
}

/// Whether every parameter can be passed on: a name bound by value, or `_`.
pub(crate) fn all_passable(sig: &Signature) -> bool {
    sig.inputs.iter().all(|input| match input {
        FnArg::Receiver(_) => true,
        FnArg::Typed(typed) => match &*typed.pat {
            Pat::Ident(name) => name.by_ref.is_none() && name.subpat.is_none(),
            Pat::Wild(_) => true,
            _ => false,
        },
    })
}

/// Whether a trait-impl method's signature is certainly the trait's: no
/// generics of its own, no parameter type that could hold a lifetime the
/// trait names more narrowly, and a return type that is not `impl Trait`
/// (which the trait may declare where the method names a type).
fn same_as_trait(sig: &Signature, impl_params: &[Ident]) -> bool {
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return false;
    }
    let plain_params = sig.inputs.iter().all(|input| match input {
        FnArg::Receiver(_) => true,
        FnArg::Typed(typed) => is_plain(&typed.ty, impl_params),
    });
    let opaque_return = match &sig.output {
        ReturnType::Default => false,
        ReturnType::Type(_, ty) => has_impl_trait(ty),
    };
    plain_params && !opaque_return
}

/// The standard types, by the name users write, that take no lifetime.
const STD_TYPES: &[&str] = &["Option", "Result", "Vec", "Box", "String", "Rc", "Arc"];

/// The primitive types.
const PRIMITIVES: &[&str] = &[
    "bool", "char", "str", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64",
    "i128", "isize", "f32", "f64",
];

/// Whether `ty` certainly holds no lifetime: primitives, `Self` and its
/// associated types, the impl's type parameters, and the standard
/// containers, tuples and arrays of those. Any other path may be a type
/// alias or a struct whose lifetime parameter is elided.
fn is_plain(ty: &Type, impl_params: &[Ident]) -> bool {
    match ty {
        Type::Paren(inner) => is_plain(&inner.elem, impl_params),
        Type::Tuple(tuple) => tuple.elems.iter().all(|e| is_plain(e, impl_params)),
        Type::Array(array) => is_plain(&array.elem, impl_params),
        Type::Path(path) if path.qself.is_none() => {
            let segments = &path.path.segments;
            let Some(first) = segments.first() else {
                return false;
            };
            if first.ident == "Self" {
                return segments.iter().all(|s| s.arguments.is_none());
            }
            if segments.len() != 1 || path.path.leading_colon.is_some() {
                return false;
            }
            let name = &first.ident;
            let bare = first.arguments.is_none();
            if PRIMITIVES.iter().any(|p| name == p) || impl_params.contains(name) {
                return bare;
            }
            if !STD_TYPES.iter().any(|p| name == p) {
                return false;
            }
            match &first.arguments {
                syn::PathArguments::None => true,
                syn::PathArguments::AngleBracketed(args) => args.args.iter().all(|arg| match arg {
                    syn::GenericArgument::Type(ty) => is_plain(ty, impl_params),
                    _ => false,
                }),
                syn::PathArguments::Parenthesized(_) => false,
            }
        }
        _ => false,
    }
}

/// Whether a type names an `impl Trait`.
fn has_impl_trait(ty: &Type) -> bool {
    struct Finder(bool);
    impl<'ast> Visit<'ast> for Finder {
        fn visit_type_impl_trait(&mut self, _: &'ast syn::TypeImplTrait) {
            self.0 = true;
        }
    }
    let mut finder = Finder(false);
    finder.visit_type(ty);
    finder.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn call(sig: Signature, owner: &Owner) -> Option<String> {
        let mut sig = sig;
        let body: Block = parse_quote!({});
        call_to_itself(&mut sig, &[], &body, owner).map(|recall| {
            let (function, args) = (recall.function, recall.args);
            quote!(#function(#(#args),*)).to_string()
        })
    }

    fn trait_owner() -> Owner {
        Owner::Trait {
            path: parse_quote!(Greet<T>),
            impl_params: vec![parse_quote!(T)],
        }
    }

    #[test]
    fn an_inherent_method_calls_itself_with_its_generics() {
        let sig: Signature = parse_quote!(fn f<'a, T: Clone, const N: usize>(&'a self, x: T, _: [u8; N], y: impl Copy));
        assert_eq!(
            call(sig, &Owner::Inherent).unwrap(),
            "Self :: f :: < T , N > (self , x , __arg2 , y)"
        );
    }

    #[test]
    fn a_function_annotated_alone_cannot() {
        assert_eq!(call(parse_quote!(fn f(x: u8)), &Owner::Unknown), None);
    }

    #[test]
    fn patterns_and_ref_bindings_cannot_be_passed() {
        assert_eq!(
            call(parse_quote!(fn f((a, b): (u8, u8))), &Owner::Inherent),
            None
        );
        assert_eq!(call(parse_quote!(fn f(ref a: u8)), &Owner::Inherent), None);
    }

    #[test]
    fn a_trait_method_calls_through_its_trait_only_when_certainly_the_same() {
        let owner = trait_owner();
        let plain: Signature =
            parse_quote!(fn f(&mut self, x: u64, t: T, v: Vec<Option<T>>) -> Self::Out);
        assert_eq!(
            call(plain, &owner).unwrap(),
            "< Self as Greet < T > > :: f (self , x , t , v)"
        );
        for sig in [
            parse_quote!(fn f(&self, who: &str)),
            parse_quote!(fn f(&self, who: Name)),
            parse_quote!(fn f<U: Debug>(&self, u: U)),
            parse_quote!(fn f(&self, u: impl Debug)),
            parse_quote!(fn f(&self) -> impl Iterator<Item = u8>),
            parse_quote!(fn f(&self, c: Cow<str>)),
        ] {
            let shown = quote!(#sig).to_string();
            assert_eq!(call(sig, &owner), None, "{shown}");
        }
        let drop = Owner::Trait {
            path: parse_quote!(Drop),
            impl_params: Vec::new(),
        };
        assert_eq!(call(parse_quote!(fn drop(&mut self)), &drop), None);
    }
}
