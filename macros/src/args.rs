//! The attribute's arguments: none, or `quiet`. `per_site` and its older
//! name `boxes` are still accepted, with a deprecation warning at the
//! argument: they named the per-site form, which the default form has
//! replaced (it serves every box the per-site form did, and everything
//! else the function allocates).
//!
//! Every decision the attribute makes (how the function opens its scope,
//! which calls to rewrite) follows from the syntax of the function, so the
//! only choice left to the user is whether to hear that there was nothing
//! to rewrite. Anything else between the parentheses is an error that names
//! what it found, rather than being ignored: a typo'd option silently
//! doing nothing would be worse than no option at all.

use proc_macro2::{TokenStream, TokenTree};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Error, Ident, Result, Token};

/// The parsed arguments of `#[batch_alloc(...)]`.
#[derive(Debug, Default)]
pub(crate) struct Args {
    /// `quiet`: no warning when the attribute leaves a function as written.
    pub quiet: bool,
    /// `per_site` or `boxes`, as the user wrote it: the expansion warns
    /// there that the argument is deprecated and does nothing.
    pub deprecated: Option<Ident>,
}

/// The arguments there are, old names included.
const KNOWN: [&str; 3] = ["quiet", "per_site", "boxes"];

const EXPECTED: &str = "`#[batch_alloc]` takes no argument, or `quiet`";

impl Parse for Args {
    fn parse(input: ParseStream) -> Result<Self> {
        let mut args = Args::default();
        if input.is_empty() {
            return Ok(args);
        }
        let fork = input.fork();
        let names = match Punctuated::<Ident, Token![,]>::parse_terminated(&fork) {
            Ok(names) if fork.is_empty() => names,
            _ => {
                let rest: TokenStream = input.parse()?;
                let message = match rest.clone().into_iter().next() {
                    Some(TokenTree::Ident(name)) if !KNOWN.iter().any(|known| name == known) => {
                        format!("unknown argument `{name}`: {EXPECTED}")
                    }
                    _ => format!("expected arguments separated by commas: {EXPECTED}"),
                };
                return Err(Error::new_spanned(rest, message));
            }
        };
        input.parse::<TokenStream>()?;
        let (mut deprecated, mut quiet) = (None::<Ident>, None::<Ident>);
        for name in names {
            let slot = if name == "per_site" || name == "boxes" {
                &mut deprecated
            } else if name == "quiet" {
                &mut quiet
            } else {
                return Err(Error::new_spanned(
                    &name,
                    format!("unknown argument `{name}`: {EXPECTED}"),
                ));
            };
            if let Some(first) = slot {
                let message = match first == &name {
                    true => format!("`{name}` given twice"),
                    false => "`per_site` given twice: `boxes` is its old name".to_string(),
                };
                return Err(Error::new_spanned(&name, message));
            }
            *slot = Some(name);
        }
        args.deprecated = deprecated;
        args.quiet = quiet.is_some();
        Ok(args)
    }
}
