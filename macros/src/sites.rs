//! Rewriting the `Box::new` calls of one loop nest.
//!
//! Every call that runs as part of the nest's iterations is rewritten to
//! allocate from a batch of its own (each call site boxes one type, and a
//! batch serves one size class at a time): calls in the loop body, in a
//! `while` condition, in blocks, branches, `match` arms, `unsafe` blocks and
//! `break` values, and in every inner loop. Inner loops do not get batches of
//! their own: their calls take batches declared at the outermost loop, so a
//! short inner loop inside a long outer one still gets long runs of slots
//! (see "Nested loops" in the crate docs for the measurements).

use std::mem;

use syn::visit_mut::{self, VisitMut};
use syn::Expr;

use crate::box_new::is_box_new;
use crate::emit::{self, Hint, Names, Site};
use crate::nests::Nests;

/// Rewrites the calls of one nest and records a [`Site`] for each.
pub(crate) struct Sites<'a> {
    names: &'a mut Names,
    /// How a call met here is sized: [`Hint::Trip`] directly inside an
    /// outermost `for`, [`Hint::Unknown`] anywhere else.
    hint: Hint,
    found: Vec<Site>,
}

impl<'a> Sites<'a> {
    pub(crate) fn new(names: &'a mut Names, hint: Hint) -> Self {
        Sites {
            names,
            hint,
            found: Vec::new(),
        }
    }

    pub(crate) fn finish(self) -> Vec<Site> {
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
