//! What the expansion names: the facade's `__private` module, found where
//! the user's crate has it, and the per-site report's statics.
//!
//! Everything generated names `<facade>::__private::...` and nothing else,
//! so user imports and shadowed prelude names cannot change what it
//! means; every generated local has a `Span::mixed_site()` span, so user
//! code can neither see nor shadow it. There is no `unsafe` in it, so
//! crates under `#![forbid(unsafe_code)]` can use the attribute.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{ToTokens, quote_spanned};
use syn::{Expr, Path};

/// The path of the `batch-alloc` crate as the annotated code can name it.
pub(crate) struct Runtime {
    facade: TokenStream,
}

impl Runtime {
    /// `crate = path` if the user gave one; else the name the crate being
    /// compiled depends on `batch-alloc` by (a renamed dependency,
    /// `ba = { package = "batch-alloc" }`, is `::ba`), read from its
    /// manifest; else `::batch_alloc`, where the manifest cannot be read
    /// (a build that does not run through cargo). An error, at the
    /// attribute, where the manifest says the crate does not depend on
    /// `batch-alloc` at all (a library re-exports the attribute).
    pub(crate) fn find(given: Option<&Path>) -> syn::Result<Runtime> {
        if let Some(path) = given {
            return Ok(Runtime {
                facade: path.to_token_stream(),
            });
        }
        let name = match proc_macro_crate::crate_name("batch-alloc") {
            Ok(proc_macro_crate::FoundCrate::Name(name)) => name,
            // The facade's own examples, tests and doc tests, which name
            // it as users do.
            Ok(proc_macro_crate::FoundCrate::Itself) => "batch_alloc".to_owned(),
            Err(proc_macro_crate::Error::CrateNotFound { .. }) => {
                let message = "`batch-alloc` is not among this crate's dependencies in its \
                               Cargo.toml: add it, or, where a library re-exports the \
                               attribute, name the crate that holds it: \
                               `#[batch_alloc(crate = path::to::batch_alloc)]`";
                return Err(syn::Error::new(Span::call_site(), message));
            }
            Err(_) => "batch_alloc".to_owned(),
        };
        let name = Ident::new(&name, Span::mixed_site());
        Ok(Runtime {
            facade: quote_spanned!(Span::mixed_site()=> ::#name),
        })
    }

    /// `#[<facade>::batch_alloc]`, with `crate = #given` if the user gave
    /// it: this attribute again, to put somewhere else.
    pub(crate) fn attribute(&self, given: Option<&Path>) -> syn::Attribute {
        let facade = &self.facade;
        let args = given.map(|path| quote_spanned!(Span::mixed_site()=> (crate = #path)));
        syn::parse_quote_spanned!(Span::mixed_site()=> #[#facade::batch_alloc #args])
    }

    /// `<facade>::__private::#name`
    pub(crate) fn private(&self, name: &str) -> TokenStream {
        let facade = &self.facade;
        let name = Ident::new(name, Span::mixed_site());
        quote_spanned!(Span::mixed_site()=> #facade::__private::#name)
    }

    /// Input:  a kind of site (`Function`, `Future`) and the function's name
    ///         and span
    /// Output:
    /// ```text
    /// {
    ///     static __SITE: <facade>::__private::Site = <facade>::__private::Site::new(
    ///         <facade>::__private::SiteKind::Function, "name", file!(), line!(), column!());
    ///     &__SITE
    /// }
    /// ```
    ///
    /// One static per site, for the per-site report: with the facade's
    /// `report` feature it counts what happened there; without it, it is
    /// empty, and the functions it is passed to ignore it, so it compiles
    /// to nothing. The location macros carry the user's span, so they name
    /// the user's line.
    pub(crate) fn site(&self, kind: &str, function: &str, place: Span) -> Expr {
        let span = Span::mixed_site();
        let name = Ident::new("__SITE", span);
        let site = self.private("Site");
        let kinds = self.private("SiteKind");
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
}
