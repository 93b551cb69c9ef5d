//! What the expansion builds from: the paths generated code names, the
//! per-site report's statics, blocks, and which calls are `Box::new`.
//!
//! Everything generated names `::batch_alloc::__private::...` and nothing
//! else, so user imports and shadowed prelude names cannot change what it
//! means; every generated local has a `Span::mixed_site()` span, so user code
//! can neither see nor shadow it. There is no `unsafe` in it, so crates under
//! `#![forbid(unsafe_code)]` can use the attribute.

pub(crate) mod box_new;

use proc_macro2::{Ident, Span};
use quote::quote_spanned;
use syn::punctuated::Punctuated;
use syn::token;
use syn::{Expr, Path, PathSegment};

/// Input:  a kind of site (`Loop`, `Boxed`, `Batched`) and the user's tokens
///         it stands for
/// Output:
/// ```text
/// {
///     static __SITE: ::batch_alloc::__private::Site = ::batch_alloc::__private::Site::new(
///         ::batch_alloc::__private::SiteKind::Boxed, "", file!(), line!(), column!());
///     &__SITE
/// }
/// ```
///
/// One static per site, for the per-site report: with the facade's
/// `report` feature it counts what happened there; without it, it is empty,
/// and the functions it is passed to ignore it, so it compiles to nothing.
/// The location macros carry the user's span, so they name the user's line.
pub(crate) fn site(kind: &str, place: Span) -> Expr {
    named_site(kind, "", place)
}

/// [`site`], for a site that has a name: the function whose body it is.
pub(crate) fn named_site(kind: &str, function: &str, place: Span) -> Expr {
    let span = Span::mixed_site();
    let name = Ident::new("__SITE", span);
    let site = private_path("Site");
    let kinds = private_path("SiteKind");
    let kind = Ident::new(kind, span);
    let file = quote_spanned!(place=> ::core::file!());
    let line = quote_spanned!(place=> ::core::line!());
    let column = quote_spanned!(place=> ::core::column!());
    Expr::Verbatim(quote_spanned! {span=>
        {
            static #name: #site = #site::new(#kinds::#kind, #function, #file, #line, #column);
            &#name
        }
    })
}

/// `::batch_alloc::__private::#name`
pub(crate) fn private_path(name: &str) -> Path {
    let span = Span::mixed_site();
    let mut segments = Punctuated::new();
    for segment in ["batch_alloc", "__private", name] {
        segments.push(PathSegment::from(Ident::new(segment, span)));
    }
    Path {
        leading_colon: Some(token::PathSep(span)),
        segments,
    }
}
