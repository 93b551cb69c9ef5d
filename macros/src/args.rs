//! The attribute's arguments: none, or `crate = path`.
//!
//! The attribute makes no choice the user could make instead (every
//! function it is on becomes a scope, in one way), so the one argument says
//! where the runtime is: the path of the `batch-alloc` crate, for a user
//! who renamed the dependency in a way the attribute cannot see, or a
//! library that re-exports the attribute. Anything else between the
//! parentheses is an error that names what it found: a typo'd option
//! silently doing nothing would be worse than no option at all.

use syn::parse::{Parse, ParseStream};
use syn::{Error, LitStr, Path, Result, Token};

/// The parsed arguments of `#[batch_alloc(...)]`.
#[derive(Default)]
pub(crate) struct Args {
    /// `crate = path` or `crate = "path"`: where the facade is.
    pub krate: Option<Path>,
}

const EXPECTED: &str = "`#[batch_alloc]` takes no argument, or `crate = path::to::batch_alloc`";

impl Parse for Args {
    fn parse(input: ParseStream) -> Result<Self> {
        let mut args = Args::default();
        while !input.is_empty() {
            if !input.peek(Token![crate]) {
                let found: proc_macro2::TokenTree = input.parse()?;
                let message = match &found {
                    proc_macro2::TokenTree::Ident(name) => {
                        format!("unknown argument `{name}`: {EXPECTED}")
                    }
                    _ => format!("expected an argument: {EXPECTED}"),
                };
                return Err(Error::new_spanned(found, message));
            }
            let keyword: Token![crate] = input.parse()?;
            if args.krate.is_some() {
                return Err(Error::new_spanned(keyword, "`crate` given twice"));
            }
            if !input.peek(Token![=]) {
                let message = format!("expected `=` and a path after `crate`: {EXPECTED}");
                return Err(Error::new_spanned(keyword, message));
            }
            input.parse::<Token![=]>()?;
            let path = if input.peek(LitStr) {
                // `crate = "path"`, as serde's and tokio's attributes take it.
                let text = input.parse::<LitStr>()?;
                text.parse::<Path>().map_err(|_| {
                    let message = format!("expected a path in the string: {EXPECTED}");
                    Error::new_spanned(&text, message)
                })?
            } else {
                Path::parse_mod_style(input)?
            };
            args.krate = Some(path);
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(args)
    }
}
