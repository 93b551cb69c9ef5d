//! `#[batch_alloc(boxes)]`: finding loop nests, the loops of a body that are
//! not inside another loop of the same body. Each nest gets its batches just
//! outside its outermost loop.
//!
//! A body is a function body, and also a closure body or an `async` block
//! met inside a loop: those may run after the loop ends (or on another
//! thread, or never), so a loop inside one is a nest of its own, with batches
//! inside the closure or block.

use syn::visit_mut::{self, VisitMut};
use syn::Expr;

use crate::emit::{self, Hint, Names};
use crate::sites::Sites;

/// Walks one body and rewrites every loop nest in it.
pub(crate) struct Nests<'a> {
    names: &'a mut Names,
}

impl<'a> Nests<'a> {
    pub(crate) fn new(names: &'a mut Names) -> Self {
        Nests { names }
    }
}

impl VisitMut for Nests<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        match expr {
            Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => rewrite_nest(expr, self.names),
            _ => visit_mut::visit_expr_mut(self, expr),
        }
    }

    visit_only_run_time_code!();
}

/// Input:  a `for`, `while` or `loop` expression that no loop of its body
///         encloses.
/// Output: the same loop, its `Box::new` calls rewritten, inside a block that
///         declares one batch per rewritten call (unchanged if it has none).
fn rewrite_nest(expr: &mut Expr, names: &mut Names) {
    let placeholder = || Expr::Verbatim(Default::default());
    match expr {
        Expr::ForLoop(for_loop) => {
            // The head runs once, before the loop: it belongs to the body.
            Nests::new(names).visit_expr_mut(&mut for_loop.expr);
            let mut sites = Sites::new(names, Hint::Trip);
            sites.visit_block_mut(&mut for_loop.body);
            let sites = sites.finish();
            if sites.is_empty() {
                return;
            }
            let Expr::ForLoop(for_loop) = std::mem::replace(expr, placeholder()) else {
                return;
            };
            *expr = if sites.iter().any(|site| site.hint == Hint::Trip) {
                emit::wrap_for(for_loop, &sites)
            } else {
                emit::wrap_unsized(Expr::ForLoop(for_loop), &sites)
            };
        }
        Expr::While(while_loop) => {
            let mut sites = Sites::new(names, Hint::Unknown);
            sites.visit_expr_mut(&mut while_loop.cond);
            sites.visit_block_mut(&mut while_loop.body);
            let sites = sites.finish();
            if !sites.is_empty() {
                let looped = std::mem::replace(expr, placeholder());
                *expr = emit::wrap_unsized(looped, &sites);
            }
        }
        Expr::Loop(plain_loop) => {
            let mut sites = Sites::new(names, Hint::Unknown);
            sites.visit_block_mut(&mut plain_loop.body);
            let sites = sites.finish();
            if !sites.is_empty() {
                let looped = std::mem::replace(expr, placeholder());
                *expr = emit::wrap_unsized(looped, &sites);
            }
        }
        _ => visit_mut::visit_expr_mut(&mut Nests::new(names), expr),
    }
}
