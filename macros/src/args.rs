//! The attribute's arguments: there are none.
//!
//! Every decision the attribute makes (which calls to rewrite, where each
//! batch lives, how it is sized) follows from the syntax of the loop it sits
//! in, so there is nothing to configure. Anything between the parentheses
//! is an error that names what it found, rather than being ignored: a typo'd
//! option silently doing nothing would be worse than no option at all.

use proc_macro2::{TokenStream, TokenTree};
use syn::parse::{Parse, ParseStream};
use syn::{Error, Result};

/// The parsed arguments of `#[batch_alloc(...)]`.
#[derive(Debug, Default)]
pub(crate) struct Args {}

impl Parse for Args {
    fn parse(input: ParseStream) -> Result<Self> {
        if input.is_empty() {
            return Ok(Args {});
        }
        let rest: TokenStream = input.parse()?;
        Err(unexpected(rest))
    }
}

/// Input: the tokens between the attribute's parentheses, not empty.
/// Output: one error spanning them, worded after the first token.
fn unexpected(tokens: TokenStream) -> Error {
    let message = match tokens.clone().into_iter().next() {
        Some(TokenTree::Ident(ident)) => {
            format!("unknown argument `{ident}`: `#[batch_alloc]` takes no arguments")
        }
        _ => "expected no arguments: `#[batch_alloc]` takes none".to_owned(),
    };
    Error::new_spanned(tokens, message)
}
