//! The attribute's arguments: none, `boxes`, `quiet`, or both.
//!
//! Every decision the attribute makes (which calls to rewrite, where each
//! batch or scope lives, how it is sized) follows from the syntax of the
//! function, so the only choices left to the user are what a loop's scope
//! does and whether to hear that there was nothing to rewrite. Anything else
//! between the parentheses is an error that names what it found, rather
//! than being ignored: a typo'd option silently doing nothing would be worse
//! than no option at all.

use proc_macro2::{TokenStream, TokenTree};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Error, Ident, Result, Token};

/// What the attribute does with the function's loops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `#[batch_alloc]`: the function opens (or joins) this thread's batch
    /// scope while it runs (an `async` body, for each poll), which serves
    /// its `Box::new`s and, if the process captures, every allocation made
    /// while it is open.
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
    /// `quiet`: no warning when the attribute leaves a function as written.
    pub quiet: bool,
}

const EXPECTED: &str = "`#[batch_alloc]` takes no argument, `boxes`, `quiet`, or both";

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
                    Some(TokenTree::Ident(name)) if name != "boxes" && name != "quiet" => {
                        format!("unknown argument `{name}`: {EXPECTED}")
                    }
                    _ => format!("expected arguments separated by commas: {EXPECTED}"),
                };
                return Err(Error::new_spanned(rest, message));
            }
        };
        input.parse::<TokenStream>()?;
        let (mut boxes, mut quiet) = (None, None);
        for name in names {
            let slot = if name == "boxes" {
                &mut boxes
            } else if name == "quiet" {
                &mut quiet
            } else {
                return Err(Error::new_spanned(
                    &name,
                    format!("unknown argument `{name}`: {EXPECTED}"),
                ));
            };
            if slot.is_some() {
                return Err(Error::new_spanned(&name, format!("`{name}` given twice")));
            }
            *slot = Some(name);
        }
        if boxes.is_some() {
            args.mode = Mode::Boxes;
        }
        args.quiet = quiet.is_some();
        Ok(args)
    }
}
