//! A synchronous function: a scope guard in front of its body.
//!
//! Input:
//! ```text
//! fn name(a: A, (x, y): (X, Y)) -> R { body }
//! ```
//! Output:
//! ```text
//! fn name(a: A, (x, y): (X, Y)) -> R {
//!     let __scope = <facade>::__private::Guard::new();
//!     <facade>::__private::enter_guard(SITE, &__scope);
//!     body
//! }
//! ```
//!
//! The body is the user's block itself, with its tokens, spans and
//! edition, and the signature is untouched: two statements go in front of
//! the body's first, and nothing else changes. `enter_guard` joins the thread's
//! scope (a thread-local read and a test, inside an open scope: the
//! common case) or, out of line, opens one. The guard is the body's first
//! local, so it drops after every other local of the body, however the
//! function returns or unwinds, and closes the scope if it opened it;
//! the parameters drop after it, as they drop after every local. Its
//! locals are hygienic (mixed-site), so the body can neither see nor
//! shadow them.

use proc_macro2::{Ident, Span};
use syn::{Block, Expr, Stmt};

use crate::runtime::Runtime;

/// Puts the guard in front of `body`'s statements.
pub(crate) fn open_in_front(runtime: &Runtime, body: &mut Block, site: Expr) {
    let span = Span::mixed_site();
    let scope = Ident::new("__scope", span);
    let guard_type = runtime.private("Guard");
    let enter = runtime.private("enter_guard");
    let guard: Block = syn::parse_quote_spanned! {span=>
        {
            let #scope = #guard_type::new();
            #enter(#site, &#scope);
        }
    };
    let mut stmts: Vec<Stmt> = guard.stmts;
    stmts.append(&mut body.stmts);
    body.stmts = stmts;
}
