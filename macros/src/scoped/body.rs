//! The walk over a scoped function's body: each `Box::new(value)` becomes a
//! typed allocation from the open scope, each outermost loop of a closure
//! gets a scope guard of its own, and each `async` block becomes a future
//! whose polls run inside the polling thread's scope.

use std::mem;

use proc_macro2::{Ident, Span};
use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, ExprAsync, ExprCall, ExprClosure, Stmt};

use crate::shared::box_new::{call_hook, is_box_new};
use crate::shared::{block, private_path, site, take_attrs, Names};

/// What kind of body a walk is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A function body or an `async` block: all of it runs inside a scope
    /// (the function's, or each poll's), so its loops need no guard.
    Scoped,
    /// A closure body: its outermost loops get guards of their own.
    Closure,
    /// An `async` closure's body: it may await anywhere, so no guard may be
    /// held across its statements; it is served by whatever scope is open
    /// where it is polled.
    AsyncClosure,
}

/// Rewrites one body.
pub(crate) struct Body<'a> {
    names: &'a mut Names,
    kind: Kind,
    /// Whether the walk is inside a loop of a closure body that has a guard.
    guarded: bool,
}

impl<'a> Body<'a> {
    pub(crate) fn new(names: &'a mut Names, kind: Kind) -> Self {
        Body {
            names,
            kind,
            guarded: false,
        }
    }

    /// Rewrites a function body.
    pub(crate) fn visit_block(&mut self, body: &mut Block) {
        self.visit_block_mut(body);
    }

    /// Walks a body of another kind met inside this one.
    fn inner(&mut self, kind: Kind, walk: impl FnOnce(&mut Body)) {
        walk(&mut Body::new(self.names, kind));
    }

    /// Input:  an outermost `for`, `while` or `loop` of a closure body
    /// Output: `{ let __scopeN = pin!(guard()); enter(SITE, __scopeN.as_ref()); 'label: loop { body } }`
    ///
    /// A closure cannot await, so nothing in the loop, its head included,
    /// can suspend while the guard holds the scope.
    fn guard_loop(&mut self, expr: &mut Expr) {
        self.guarded = true;
        visit_mut::visit_expr_mut(self, expr);
        self.guarded = false;
        let guard = self.names.scope();
        let at = site("Loop", expr.span());
        let attrs = take_attrs(expr);
        let looped = mem::replace(expr, Expr::PLACEHOLDER);
        *expr = block(
            attrs,
            vec![guard_declaration(&guard, at), Stmt::Expr(looped, None)],
        );
    }
}

impl VisitMut for Body<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        match expr {
            Expr::Call(call) if is_box_new(call) => {
                // Inner calls first: `Box::new(Box::new(x))` rewrites both.
                for arg in call.args.iter_mut() {
                    self.visit_expr_mut(arg);
                }
                if let Expr::Call(call) = mem::replace(expr, Expr::PLACEHOLDER) {
                    *expr = boxed_call(call);
                }
            }
            Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_)
                if self.kind == Kind::Closure && !self.guarded =>
            {
                self.guard_loop(expr)
            }
            Expr::Closure(closure) => {
                let kind = match closure.asyncness {
                    Some(_) => Kind::AsyncClosure,
                    None => Kind::Closure,
                };
                self.inner(kind, |body| body.visit_expr_closure_mut(closure));
            }
            Expr::Async(_) => {
                let Expr::Async(mut future) = mem::replace(expr, Expr::PLACEHOLDER) else {
                    return;
                };
                self.inner(Kind::Scoped, |body| body.visit_expr_async_mut(&mut future));
                *expr = scoped_async_block(future);
            }
            _ => visit_mut::visit_expr_mut(self, expr),
        }
    }

    fn visit_expr_closure_mut(&mut self, closure: &mut ExprClosure) {
        // Only the body: the parameters are patterns.
        self.visit_expr_mut(&mut closure.body);
    }

    visit_only_run_time_code!();
}

/// `let __scopeN = pin!(guard()); enter(SITE, __scopeN.as_ref());`: the
/// guard is declared first, so it is dropped last, after every local of the
/// body it covers.
fn guard_declaration(guard: &Ident, at: Expr) -> Stmt {
    let span = Span::mixed_site();
    let new_guard = private_path("guard");
    let pin = private_path("pin");
    let enter = private_path("enter");
    Stmt::Expr(
        Expr::Verbatim(quote_spanned! {span=>
            let #guard = #pin!(#new_guard());
            #enter(#at, #guard.as_ref());
        }),
        None,
    )
}

/// Input:  `async move { body }` (or `async { body }`), `body` already rewritten
/// Output: `::batch_alloc::__private::scoped_future(SITE, async move { body })`
///
/// The block's type becomes the wrapper's, which is a future of the same
/// output, `Send` and `Unpin` exactly when the block is.
fn scoped_async_block(future: ExprAsync) -> Expr {
    let span = Span::mixed_site();
    let at = site("Future", future.async_token.span);
    let scoped = private_path("scoped_future");
    Expr::Verbatim(quote_spanned! {span=>
        #scoped(#at, #future)
    })
}

/// Input:  `Box::new(value)` (any accepted spelling), `value` already rewritten
/// Output: `::batch_alloc::__private::box_in_scope_at(SITE, Box::new, value)`
///         (the path passed along: see [`call_hook`])
fn boxed_call(call: ExprCall) -> Expr {
    let at = site("Boxed", call.span());
    call_hook("box_in_scope_at", [at], call)
}
