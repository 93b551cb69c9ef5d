//! The attribute's arguments: none, or `boxes`.
//!
//! Every decision the attribute makes (which calls to rewrite, where each
//! batch or scope lives, how it is sized) follows from the syntax of the
//! function, so the only choice left to the user is what a loop's scope
//! does. Anything else between the parentheses is an error that names what
//! it found, rather than being ignored: a typo'd option silently doing
//! nothing would be worse than no option at all.

use proc_macro2::{TokenStream, TokenTree};
use syn::parse::{Parse, ParseStream};
use syn::{Error, Ident, Result};

/// What the attribute does with the function's loops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `#[batch_alloc]`: each outermost loop opens (or joins) this thread's
    /// batch scope, which serves the function's `Box::new`s and, if the
    /// process captures, every allocation made while it is open.
    #[default]
    Scoped,
    /// `#[batch_alloc(boxes)]`: each `Box::new` inside a loop allocates from
    /// a batch of its own declared just outside the loop; nothing else
    /// changes.
    Boxes,
}

/// The parsed arguments of `#[batch_alloc(...)]`.
#[derive(Debug, Default)]
pub(crate) struct Args {
    pub mode: Mode,
}

impl Parse for Args {
    fn parse(input: ParseStream) -> Result<Self> {
        if input.is_empty() {
            return Ok(Args::default());
        }
        if input.peek(Ident) {
            let fork = input.fork();
            let ident: Ident = fork.parse()?;
            if ident == "boxes" && fork.is_empty() {
                input.parse::<Ident>()?;
                return Ok(Args { mode: Mode::Boxes });
            }
        }
        let rest: TokenStream = input.parse()?;
        Err(unexpected(rest))
    }
}

/// Input: the tokens between the attribute's parentheses, not `boxes`.
/// Output: one error spanning them, worded after the first token.
fn unexpected(tokens: TokenStream) -> Error {
    let message = match tokens.clone().into_iter().next() {
        Some(TokenTree::Ident(ident)) if ident != "boxes" => {
            format!("unknown argument `{ident}`: `#[batch_alloc]` takes no argument, or `boxes`")
        }
        _ => "expected no argument, or `boxes`".to_owned(),
    };
    Error::new_spanned(tokens, message)
}
