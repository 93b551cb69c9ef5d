//! `#[batch_alloc(per_site)]`: finding loop nests, the loops of a body that are
//! not inside another loop of the same body. Each nest gets its batches just
//! outside its outermost loop.
//!
//! A body is a function body, and also a closure body or an `async` block
//! met inside a loop: those may run after the loop ends (or on another
//! thread, or never), so a loop inside one is a nest of its own, with batches
//! inside the closure or block.
//!
//! In each nest, every call that runs as part of the nest's iterations is rewritten to
//! allocate from a batch of its own (each call site boxes one type, and a
//! batch serves one size class at a time): calls in the loop body, in a
//! `while` condition, in blocks, branches, `match` arms, `unsafe` blocks and
//! `break` values, and in every inner loop. Inner loops do not get batches of
//! their own: their calls take batches declared at the outermost loop, so a
//! short inner loop inside a long outer one still gets long runs of slots
//! (see "Nested loops" in the crate docs for the measurements).

mod emit;
pub(crate) mod inventory;

use std::mem;

use syn::visit_mut::{self, VisitMut};
use syn::Expr;

use syn::Block;

use crate::shared::box_new::is_box_new;
use crate::shared::Names;
use emit::{Hint, Site};
use inventory::Inventory;

/// Rewrites one function body in the per-site form. Returns why there was
/// nothing to rewrite, if there was not.
pub(crate) fn rewrite_fn(body: &mut Block, names: &mut Names) -> Option<String> {
    let inventory = Inventory::of(body);
    Nests::new(names).visit_block_mut(body);
    inventory.nothing_to_do()
}

/// Walks one body and rewrites every loop nest in it.
struct Nests<'a> {
    names: &'a mut Names,
}

impl<'a> Nests<'a> {
    fn new(names: &'a mut Names) -> Self {
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
            let Expr::ForLoop(for_loop) = mem::replace(expr, placeholder()) else {
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
                let looped = mem::replace(expr, placeholder());
                *expr = emit::wrap_unsized(looped, &sites);
            }
        }
        Expr::Loop(plain_loop) => {
            let mut sites = Sites::new(names, Hint::Unknown);
            sites.visit_block_mut(&mut plain_loop.body);
            let sites = sites.finish();
            if !sites.is_empty() {
                let looped = mem::replace(expr, placeholder());
                *expr = emit::wrap_unsized(looped, &sites);
            }
        }
        _ => visit_mut::visit_expr_mut(&mut Nests::new(names), expr),
    }
}

/// Rewrites the calls of one nest and records a [`Site`] for each.
struct Sites<'a> {
    names: &'a mut Names,
    /// How a call met here is sized: [`Hint::Trip`] directly inside an
    /// outermost `for`, [`Hint::Unknown`] anywhere else.
    hint: Hint,
    found: Vec<Site>,
}

impl<'a> Sites<'a> {
    fn new(names: &'a mut Names, hint: Hint) -> Self {
        Sites {
            names,
            hint,
            found: Vec::new(),
        }
    }

    fn finish(self) -> Vec<Site> {
        self.found
    }

    /// Visits the body of an inner loop, whose trip count is not known where
    /// the batches are declared.
    fn visit_inner<T>(&mut self, node: &mut T, visit: fn(&mut Self, &mut T)) {
        let outer = mem::replace(&mut self.hint, Hint::Unknown);
        visit(self, node);
        self.hint = outer;
    }
}

impl VisitMut for Sites<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        match expr {
            Expr::Call(call) if is_box_new(call) => {
                // Inner calls first: `Box::new(Box::new(x))` rewrites both.
                for arg in call.args.iter_mut() {
                    self.visit_expr_mut(arg);
                }
                let batch = self.names.batch();
                self.found.push(Site {
                    batch: batch.clone(),
                    hint: self.hint,
                });
                if let Expr::Call(call) = mem::replace(expr, Expr::PLACEHOLDER) {
                    *expr = emit::alloc_call(call, &batch);
                }
            }
            Expr::ForLoop(inner) => {
                // An inner `for` head runs once per iteration of the loop
                // around it, like any other expression there.
                self.visit_expr_mut(&mut inner.expr);
                self.visit_inner(&mut inner.body, Self::visit_block_mut);
            }
            Expr::While(inner) => {
                self.visit_inner(&mut *inner.cond, Self::visit_expr_mut);
                self.visit_inner(&mut inner.body, Self::visit_block_mut);
            }
            Expr::Loop(inner) => self.visit_inner(&mut inner.body, Self::visit_block_mut),
            // A closure or an `async` block may run after the loop, or never:
            // its own calls stay `Box::new`, and its own loops are nests of
            // their own.
            Expr::Closure(closure) => Nests::new(self.names).visit_expr_closure_mut(closure),
            Expr::Async(block) => Nests::new(self.names).visit_expr_async_mut(block),
            _ => visit_mut::visit_expr_mut(self, expr),
        }
    }

    visit_only_run_time_code!();
}
