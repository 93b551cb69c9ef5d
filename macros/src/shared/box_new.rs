//! Which calls are `Box::new(value)`.
//!
//! The attribute sees syntax only, so "is this `Box::new`?" is a question
//! about spelling. The spellings accepted are the ones users write for the
//! standard `Box`:
//!
//! - `Box::new(v)` and `Box::<T>::new(v)`
//! - `std::boxed::Box::new(v)`, `::std::boxed::Box::new(v)`
//! - `alloc::boxed::Box::new(v)`, `::alloc::boxed::Box::new(v)`
//!
//! each with or without one type argument on `Box`. Anything else (`<Box<T>>::new`,
//! an alias such as `use std::boxed::Box as B`, `Box::new` passed as a value)
//! is left alone. Whether the path really names the standard `Box` is checked
//! by the compiler: see `box_in_scope_at` in the runtime's `expansion.rs`.

use syn::punctuated::Punctuated;
use syn::{Expr, ExprCall, ExprPath, GenericArgument, Path, PathArguments, PathSegment};

use super::private_path;

/// Input:  `Box::new(value)` (any accepted spelling), `value` already
///         rewritten
/// Output: `::batch_alloc::__private::HOOK(LEADING.., Box::new, value)`,
///         with the call's attributes and parentheses
///
/// How both forms rewrite a box: the user's own `Box::new` path is passed
/// along unchanged. It is never called; it makes the compiler check, at the
/// user's tokens, that the path names the standard `Box::new` (a function
/// `T -> std::boxed::Box<T>`), so a user type or import called `Box` becomes
/// a compile error rather than a silent change of type.
pub(crate) fn call_hook(
    hook: &str,
    leading: impl IntoIterator<Item = Expr>,
    call: ExprCall,
) -> Expr {
    let ExprCall {
        attrs,
        func,
        paren_token,
        args,
    } = call;
    let mut new_args: Punctuated<Expr, syn::Token![,]> = leading.into_iter().collect();
    new_args.push(*func);
    new_args.extend(args);
    Expr::Call(ExprCall {
        attrs,
        func: Box::new(Expr::Path(ExprPath {
            attrs: Vec::new(),
            qself: None,
            path: private_path(hook),
        })),
        paren_token,
        args: new_args,
    })
}

/// True if `call` is a one-argument call of a `Box::new` spelling.
pub(crate) fn is_box_new(call: &ExprCall) -> bool {
    if call.args.len() != 1 {
        return false;
    }
    match &*call.func {
        Expr::Path(func) => {
            func.attrs.is_empty() && func.qself.is_none() && is_box_new_path(&func.path)
        }
        _ => false,
    }
}

/// True if `path` is one of the `Box::new` spellings (a call's function, or
/// the function named as a value, as in `.map(Box::new)`).
pub(crate) fn is_box_new_path(path: &Path) -> bool {
    let segments: Vec<&PathSegment> = path.segments.iter().collect();
    let Some((new, rest)) = segments.split_last() else {
        return false;
    };
    let Some((boxed, prefix)) = rest.split_last() else {
        return false;
    };
    if new.ident != "new" || !new.arguments.is_none() {
        return false;
    }
    if boxed.ident != "Box" || !one_type_or_none(&boxed.arguments) {
        return false;
    }
    match prefix {
        // `::Box::new` would name a crate called `Box`.
        [] => path.leading_colon.is_none(),
        [krate, module] => {
            (krate.ident == "std" || krate.ident == "alloc")
                && module.ident == "boxed"
                && krate.arguments.is_none()
                && module.arguments.is_none()
        }
        _ => false,
    }
}

/// `Box` or `Box::<T>`: `Box::<T, A>` names an allocator, which a batch
/// cannot stand in for.
fn one_type_or_none(arguments: &PathArguments) -> bool {
    match arguments {
        PathArguments::None => true,
        PathArguments::AngleBracketed(generics) => {
            generics.args.len() == 1
                && matches!(generics.args.first(), Some(GenericArgument::Type(_)))
        }
        PathArguments::Parenthesized(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::is_box_new;
    use syn::{parse_quote, ExprCall};

    #[test]
    fn accepts_the_standard_spellings() {
        let calls: [ExprCall; 7] = [
            parse_quote!(Box::new(1)),
            parse_quote!(Box::<u8>::new(1)),
            parse_quote!(std::boxed::Box::new(1)),
            parse_quote!(::std::boxed::Box::new(1)),
            parse_quote!(alloc::boxed::Box::new(1)),
            parse_quote!(::alloc::boxed::Box::new(1)),
            parse_quote!(std::boxed::Box::<u8>::new(1)),
        ];
        for call in &calls {
            assert!(is_box_new(call), "{}", quote::quote!(#call));
        }
    }

    #[test]
    fn rejects_everything_else() {
        let calls: [ExprCall; 10] = [
            parse_quote!(Box::new(1, 2)),
            parse_quote!(Box::new()),
            parse_quote!(Box::pin(1)),
            parse_quote!(Rc::new(1)),
            parse_quote!(::Box::new(1)),
            parse_quote!(core::boxed::Box::new(1)),
            parse_quote!(my::Box::new(1)),
            parse_quote!(<Box<u8>>::new(1)),
            parse_quote!(Box::<u8, A>::new(1)),
            parse_quote!(Box::new::<u8>(1)),
        ];
        for call in &calls {
            assert!(!is_box_new(call), "{}", quote::quote!(#call));
        }
    }
}
