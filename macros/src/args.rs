//! The attribute's arguments: none, `per_site`, `quiet`, or both (`boxes`
//! is `per_site`'s old name, kept with a deprecation warning).
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
    /// `#[batch_alloc(per_site)]`: each `Box::new` inside a loop allocates
    /// from a batch of its own declared just outside the loop; nothing else
    /// changes.
    PerSite,
}

/// The parsed arguments of `#[batch_alloc(...)]`.
#[derive(Debug, Default)]
pub(crate) struct Args {
    pub mode: Mode,
    /// `quiet`: no warning when the attribute leaves a function as written.
    pub quiet: bool,
    /// `boxes`, as the user wrote it, when it named the per-site form: the
    /// expansion warns there that the name is deprecated.
    pub old_name: Option<Ident>,
}

/// The arguments there are, old names included.
const KNOWN: [&str; 3] = ["per_site", "quiet", "boxes"];

const EXPECTED: &str = "`#[batch_alloc]` takes no argument, `per_site`, `quiet`, or both";

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
        let (mut per_site, mut quiet) = (None, None);
        for name in names {
            let slot = if name == "per_site" || name == "boxes" {
                &mut per_site
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
        if let Some(name) = per_site {
            args.mode = Mode::PerSite;
            args.old_name = (name == "boxes").then_some(name);
        }
        args.quiet = quiet.is_some();
        Ok(args)
    }
}
