//! What a function body holds that the attribute could rewrite, counted
//! before it rewrites anything: so that when it finds nothing to do, it can
//! say why.

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::{self, Visit};
use syn::{Block, Expr, ExprConst, ExprRepeat, GenericArgument, Item, Macro};

use crate::shared::box_new::{is_box_new, is_box_new_path};

/// Counts of one function body.
#[derive(Debug, Default)]
pub(crate) struct Inventory {
    /// `for`, `while` and `loop` expressions, at any depth.
    pub loops: usize,
    /// `Box::new(..)` calls the attribute sees, at any depth.
    pub calls: usize,
    /// Of those, calls that run as part of a loop's iterations, outside
    /// closures and `async` blocks (what the per-site form rewrites).
    pub calls_in_loops: usize,
    /// Of those, calls in closures and `async` blocks.
    pub calls_in_closures: usize,
    /// `Box::new` spelled inside a macro invocation's tokens.
    pub in_macros: usize,
    /// `Box::new` named as a value (`.map(Box::new)`).
    pub as_values: usize,
}

impl Inventory {
    pub(crate) fn of(body: &Block) -> Inventory {
        let mut counter = Counter {
            counts: Inventory::default(),
            loop_depth: 0,
            closure_depth: 0,
        };
        counter.visit_block(body);
        counter.counts
    }

    /// Why the per-site form has nothing to rewrite in this body, or `None`
    /// when it has something: a `Box::new` call that runs as part of a
    /// loop's iterations.
    pub(crate) fn nothing_to_do(&self) -> Option<String> {
        if self.calls_in_loops > 0 {
            return None;
        }
        let mut reasons = Vec::new();
        match self.loops {
            0 => reasons.push("no loop".to_owned()),
            _ => reasons.push("no `Box::new(..)` call inside a loop".to_owned()),
        }
        if self.calls_in_closures > 0 {
            reasons.push(
                "`Box::new` only inside closures or `async` blocks, which may run after the loop"
                    .to_owned(),
            );
        }
        if self.in_macros > 0 {
            reasons.push(
                "`Box::new` inside a macro call such as `vec![..]`, whose tokens it cannot see \
                 (write `let b = Box::new(x);` before the call)"
                    .to_owned(),
            );
        }
        if self.as_values > 0 {
            reasons.push(
                "`Box::new` passed as a value, as in `.map(Box::new)`, called elsewhere".to_owned(),
            );
        }
        Some(reasons.join("; "))
    }
}

struct Counter {
    counts: Inventory,
    loop_depth: usize,
    closure_depth: usize,
}

impl Counter {
    fn in_loop(&mut self, walk: impl FnOnce(&mut Self)) {
        self.counts.loops += 1;
        self.loop_depth += 1;
        walk(self);
        self.loop_depth -= 1;
    }
}

impl<'ast> Visit<'ast> for Counter {
    fn visit_expr(&mut self, expr: &'ast Expr) {
        match expr {
            Expr::Call(call) if is_box_new(call) => {
                self.counts.calls += 1;
                if self.closure_depth > 0 {
                    self.counts.calls_in_closures += 1;
                } else if self.loop_depth > 0 {
                    self.counts.calls_in_loops += 1;
                }
                for arg in &call.args {
                    self.visit_expr(arg);
                }
            }
            Expr::Path(path) if path.qself.is_none() && is_box_new_path(&path.path) => {
                self.counts.as_values += 1;
            }
            Expr::ForLoop(for_loop) => {
                // The head runs once, before the loop.
                self.visit_expr(&for_loop.expr);
                self.in_loop(|this| this.visit_block(&for_loop.body));
            }
            Expr::While(_) | Expr::Loop(_) => self.in_loop(|this| visit::visit_expr(this, expr)),
            Expr::Closure(_) | Expr::Async(_) => {
                self.closure_depth += 1;
                visit::visit_expr(self, expr);
                self.closure_depth -= 1;
            }
            _ => visit::visit_expr(self, expr),
        }
    }

    fn visit_item(&mut self, _: &'ast Item) {
        // Nested items are not part of this function.
    }

    fn visit_expr_const(&mut self, _: &'ast ExprConst) {
        // `const` blocks run at compile time.
    }

    fn visit_expr_repeat(&mut self, repeat: &'ast ExprRepeat) {
        // An array's length is a constant.
        self.visit_expr(&repeat.expr);
    }

    fn visit_generic_argument(&mut self, _: &'ast GenericArgument) {
        // Types or constants.
    }

    fn visit_macro(&mut self, mac: &'ast Macro) {
        self.counts.in_macros += box_news_in(mac.tokens.clone());
    }
}

/// `Box::new` spellings among a macro's tokens, at any depth: `Box :: new`,
/// with or without `::<T>` between.
fn box_news_in(tokens: TokenStream) -> usize {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut found = 0;
    for (i, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Group(group) => found += box_news_in(group.stream()),
            TokenTree::Ident(ident) if ident == "Box" => {
                let rest: String = tokens[i + 1..]
                    .iter()
                    .take(8)
                    .map(|t| t.to_string())
                    .collect();
                if rest.starts_with("::new") || (rest.starts_with("::<") && rest.contains(">::new"))
                {
                    found += 1;
                }
            }
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn inventory(body: Block) -> Inventory {
        Inventory::of(&body)
    }

    #[test]
    fn counts_what_the_per_site_form_would_rewrite() {
        let counts = inventory(parse_quote!({
            let a = Box::new(1);
            for i in 0..3 {
                v.push(Box::new(i));
                let f = || Box::new(i);
            }
            let w = vec![Box::new(1), Box::<u8>::new(2)];
            let m: Vec<_> = xs.into_iter().map(Box::new).collect();
        }));
        assert_eq!(counts.loops, 1);
        assert_eq!(counts.calls, 3);
        assert_eq!(counts.calls_in_loops, 1);
        assert_eq!(counts.calls_in_closures, 1);
        assert_eq!(counts.in_macros, 2);
        assert_eq!(counts.as_values, 1);
        assert!(counts.nothing_to_do().is_none());
    }

    #[test]
    fn says_why_there_is_nothing_to_do() {
        let empty = inventory(parse_quote!({ x + 1 }));
        assert_eq!(empty.nothing_to_do().unwrap(), "no loop");
        let macro_only = inventory(parse_quote!({
            loop {
                break vec![Box::new(1)];
            }
        }));
        let why = macro_only.nothing_to_do().unwrap();
        assert!(
            why.starts_with("no `Box::new(..)` call inside a loop"),
            "{why}"
        );
        assert!(why.contains("macro call"), "{why}");
        let closure_only = inventory(parse_quote!({
            for i in 0..3 {
                f(|| Box::new(i));
            }
        }));
        let why = closure_only.nothing_to_do().unwrap();
        assert!(why.contains("closures"), "{why}");
    }
}
