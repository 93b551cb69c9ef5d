//! Leaves: functions the attribute leaves as written, since they run in
//! their caller's scope and a check would cost more than their body.

use syn::{Block, Expr};

/// Whether a body is a leaf: no loop, `async` block or await, no call of a
/// function by path or value, and no macro call but the standard library's
/// formatting and assertion macros: only method calls, field and index
/// accesses, operators, literals, constructors (a called path whose last
/// segment starts with a capital: `Some(x)`, `Point(1, 2)`), closures made
/// of the same (`opt.is_some_and(|b| b.is_ascii_digit())`), and messages
/// (`format!`, `panic!`, `assert!`). Accessors look like this, and are
/// called many times per scope: a leaf opens no scope of its own and runs
/// in its caller's.
pub(crate) fn is_leaf(body: &Block) -> bool {
    struct Finder {
        branches: bool,
        /// Locals bound to closures, whose calls are part of this body.
        closures: Vec<syn::Ident>,
    }
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_local(&mut self, local: &'ast syn::Local) {
            if let (syn::Pat::Ident(name), Some(init)) = (&local.pat, &local.init) {
                if matches!(*init.expr, Expr::Closure(_)) {
                    self.closures.push(name.ident.clone());
                }
            }
            syn::visit::visit_local(self, local);
        }
        fn visit_expr(&mut self, expr: &'ast Expr) {
            self.branches |= match expr {
                Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => true,
                Expr::Async(_) | Expr::Await(_) => true,
                Expr::Call(call) => !is_constructor(&call.func) && !self.calls_closure(&call.func),
                _ => false,
            };
            if !self.branches {
                syn::visit::visit_expr(self, expr);
            }
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            self.branches |= !mac
                .path
                .segments
                .last()
                .is_some_and(|name| MESSAGE_MACROS.iter().any(|known| name.ident == known));
        }
    }
    impl Finder {
        fn calls_closure(&self, func: &Expr) -> bool {
            match func {
                Expr::Path(path) => path
                    .path
                    .get_ident()
                    .is_some_and(|name| self.closures.contains(name)),
                _ => false,
            }
        }
    }
    let mut finder = Finder {
        branches: false,
        closures: Vec::new(),
    };
    syn::visit::Visit::visit_block(&mut finder, body);
    !finder.branches
}

/// The standard macros that format or check: in an accessor they build an
/// error's message or guard an invariant, off the path that runs.
const MESSAGE_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "format",
    "format_args",
    "matches",
    "panic",
    "todo",
    "unimplemented",
    "unreachable",
    "write",
    "writeln",
];

/// Whether a called expression names a tuple struct or an enum variant.
fn is_constructor(func: &Expr) -> bool {
    match func {
        Expr::Path(path) => path
            .path
            .segments
            .last()
            .and_then(|segment| segment.ident.to_string().chars().next())
            .is_some_and(char::is_uppercase),
        _ => false,
    }
}
