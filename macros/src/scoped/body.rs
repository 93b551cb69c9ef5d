//! The walk over a scoped function's body: each `Box::new(value)` becomes a
//! typed allocation from the open scope, and each `async` block becomes a
//! future whose polls run inside the polling thread's scope. Closures are
//! walked too (their boxes are typed allocations like the function's), and
//! get nothing else: a closure runs in whatever scope is open where it is
//! called, the function's when it is called there.

use std::mem;

use proc_macro2::Span;
use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, ExprAsync, ExprCall, ExprClosure};

use crate::shared::box_new::{call_hook, is_box_new};
use crate::shared::{private_path, site};

/// Rewrites a function body's boxes and `async` blocks.
pub(crate) fn rewrite(body: &mut Block) {
    Body.visit_block_mut(body);
}

struct Body;

impl VisitMut for Body {
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
            Expr::Async(_) => {
                let Expr::Async(mut future) = mem::replace(expr, Expr::PLACEHOLDER) else {
                    return;
                };
                self.visit_expr_async_mut(&mut future);
                *expr = scoped_async_block(future);
            }
            _ => visit_mut::visit_expr_mut(self, expr),
        }
    }

    fn visit_expr_closure_mut(&mut self, closure: &mut ExprClosure) {
        // Only the body: the parameters are patterns.
        self.visit_expr_mut(&mut closure.body);
    }

    // The walk goes only where code runs when the function runs. Not into
    // nested items (a nested `fn` is not part of this function, and carries
    // its own `#[batch_alloc]` if it wants one), macro invocations (their
    // tokens mean whatever the macro makes of them: `vec![Box::new(x)]`
    // keeps what the user wrote), `const` blocks or an array repeat's
    // length (compile time, where no scope can run), generic arguments,
    // types or patterns.

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}

    fn visit_macro_mut(&mut self, _: &mut syn::Macro) {}

    fn visit_expr_const_mut(&mut self, _: &mut syn::ExprConst) {}

    fn visit_expr_repeat_mut(&mut self, repeat: &mut syn::ExprRepeat) {
        self.visit_expr_mut(&mut repeat.expr);
    }

    fn visit_generic_argument_mut(&mut self, _: &mut syn::GenericArgument) {}

    fn visit_type_mut(&mut self, _: &mut syn::Type) {}

    fn visit_pat_mut(&mut self, _: &mut syn::Pat) {}
}

/// Input:  `async move { body }` (or `async { body }`), `body` already rewritten
/// Output: `::batch_alloc::__private::scoped_future(SITE, async move { body })`
///
/// The block's type becomes the wrapper's, which is a future of the same
/// output, `Send` and `Unpin` exactly when the block is.
fn scoped_async_block(future: ExprAsync) -> Expr {
    let span = Span::mixed_site();
    let site = site("Future", future.async_token.span);
    let scoped = private_path("scoped_future");
    Expr::Verbatim(quote_spanned! {span=>
        #scoped(#site, #future)
    })
}

/// Input:  `Box::new(value)` (any accepted spelling), `value` already rewritten
/// Output: `::batch_alloc::__private::box_in_scope_at(SITE, Box::new, value)`
///         (the path passed along: see [`call_hook`])
fn boxed_call(call: ExprCall) -> Expr {
    call_hook("box_in_scope_at", [site("Boxed", call.span())], call)
}
