//! The default mode: batch scopes.
//!
//! Every loop nest of a body (its outermost loops) gets a scope guard just
//! outside it, which opens or joins this thread's batch scope as the loop
//! starts and closes what it opened when the loop ends, however it ends.
//!
//! The guard enters before the loop, not at its first iteration: a check
//! at every iteration costs two instructions each time round, entering
//! costs about six once, and measured over the repository's two parsers
//! (instructions, callgrind) entering first was 3% cheaper on the one whose
//! lexer runs many short loops and 0.5% dearer on the one whose
//! recursive-descent levels mostly run none. It also puts the loop's first
//! condition inside the scope, like every later one. Every `Box::new(value)` of the function takes its
//! slot from the scope's run of its class when a scope is open on the
//! thread (its own, or one a caller opened), and is `Box::new` otherwise.
//! An `.await` inside a nest closes the scope before the await and opens
//! it again after, so that no thread's scope is held while the future is
//! suspended.
//!
//! A body is the function body, and also each closure body and `async`
//! block: those may run after the loop, elsewhere, or never, so their loops
//! are nests of their own with guards inside them, and their awaits are not
//! the outer loop's.

use std::mem;

use proc_macro2::{Ident, Span};
use quote::quote_spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, ExprAwait, ExprCall, ExprPath, Item, Macro, Path, Stmt};

use crate::box_new::is_box_new;
use crate::emit::{block, private_path, site, take_attrs, Names};
use syn::spanned::Spanned;

/// Rewrites one body: its loop nests, its `Box::new` calls, its awaits.
pub(crate) struct Body<'a> {
    names: &'a mut Names,
    /// The guard of the nest being walked, if inside one.
    guard: Option<Ident>,
    /// Calls rewritten and nests guarded, in this body and the ones inside.
    pub(crate) found: Found,
}

/// What a body held that the attribute rewrote.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Found {
    pub loops: usize,
    pub box_news: usize,
}

impl<'a> Body<'a> {
    pub(crate) fn new(names: &'a mut Names) -> Self {
        Body {
            names,
            guard: None,
            found: Found::default(),
        }
    }

    /// Walks a body met inside this one (a closure's, an `async` block's).
    fn inner(&mut self, expr: &mut Expr) {
        let mut inner = Body::new(self.names);
        match expr {
            Expr::Closure(closure) => inner.visit_expr_closure_mut(closure),
            Expr::Async(block) => inner.visit_expr_async_mut(block),
            _ => inner.visit_expr_mut(expr),
        }
        self.found.loops += inner.found.loops;
        self.found.box_news += inner.found.box_news;
    }

    /// Input:  an outermost `for`, `while` or `loop` of this body
    /// Output: `{ let mut __scopeN = Scope::new(); __scopeN.enter(); 'label: loop { body } }`
    fn guard_nest(&mut self, expr: &mut Expr) {
        let guard = self.names.scope();
        self.found.loops += 1;
        if let Expr::ForLoop(for_loop) = expr {
            // The head runs once, before the loop: it belongs to the body.
            self.visit_expr_mut(&mut for_loop.expr);
        }
        let outer = self.guard.replace(guard.clone());
        match expr {
            Expr::ForLoop(for_loop) => self.visit_block_mut(&mut for_loop.body),
            Expr::While(while_loop) => {
                self.visit_expr_mut(&mut while_loop.cond);
                self.visit_block_mut(&mut while_loop.body);
            }
            Expr::Loop(plain_loop) => self.visit_block_mut(&mut plain_loop.body),
            _ => {}
        }
        self.guard = outer;
        let at = site("Loop", expr.span());
        let attrs = take_attrs(expr);
        let looped = mem::replace(expr, Expr::PLACEHOLDER);
        let span = Span::mixed_site();
        let scope = private_path("Scope");
        let enter_at = private_path("enter_at");
        let declaration = Stmt::Expr(
            Expr::Verbatim(quote_spanned! {span=>
                let mut #guard = #scope::new();
                #enter_at(#at, &mut #guard);
            }),
            None,
        );
        *expr = block(attrs, vec![declaration, Stmt::Expr(looped, None)]);
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
                self.found.box_news += 1;
                if let Expr::Call(call) = mem::replace(expr, Expr::PLACEHOLDER) {
                    *expr = boxed_call(call);
                }
            }
            Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_)
                if self.guard.is_none() && !awaits_in_macros(expr) =>
            {
                self.guard_nest(expr)
            }
            Expr::Await(_) if self.guard.is_some() => {
                let Expr::Await(mut awaited) = mem::replace(expr, Expr::PLACEHOLDER) else {
                    return;
                };
                self.visit_expr_mut(&mut awaited.base);
                if let Some(guard) = &self.guard {
                    *expr = suspended_await(awaited, guard);
                }
            }
            Expr::Closure(_) | Expr::Async(_) => self.inner(expr),
            _ => visit_mut::visit_expr_mut(self, expr),
        }
    }

    visit_only_run_time_code!();
}

/// Whether a loop's body holds an `.await` the attribute cannot rewrite:
/// one inside a macro invocation (`assert_eq!(f.await, x)`, `select!`),
/// outside the closures and `async` blocks the loop runs. Such a nest gets
/// no guard (its `Box::new`s still take slots from a scope a caller
/// opened): a guard could not close the scope before that await, and a
/// scope must not stay open while the future is suspended.
fn awaits_in_macros(looped: &Expr) -> bool {
    struct Finder(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            match expr {
                Expr::Closure(_) | Expr::Async(_) => {}
                _ => syn::visit::visit_expr(self, expr),
            }
        }
        fn visit_item(&mut self, _: &'ast Item) {}
        fn visit_macro(&mut self, mac: &'ast Macro) {
            self.0 |= has_await(mac.tokens.clone());
        }
    }
    fn has_await(tokens: proc_macro2::TokenStream) -> bool {
        tokens.into_iter().any(|token| match token {
            proc_macro2::TokenTree::Ident(ident) => ident == "await",
            proc_macro2::TokenTree::Group(group) => has_await(group.stream()),
            _ => false,
        })
    }
    let mut finder = Finder(false);
    syn::visit::Visit::visit_expr(&mut finder, looped);
    finder.0
}

/// Input:  `Box::new(value)` (any accepted spelling), `value` already rewritten
/// Output: `::batch_alloc::__private::boxed_at(SITE, Box::new, value)`
///
/// As in `boxes` mode, the user's own `Box::new` path is passed along and
/// never called, so that the compiler checks it is the standard one.
fn boxed_call(call: ExprCall) -> Expr {
    let at = site("Boxed", call.span());
    let ExprCall {
        attrs,
        func,
        paren_token,
        args,
    } = call;
    let mut new_args = syn::punctuated::Punctuated::new();
    new_args.push(at);
    new_args.push(*func);
    new_args.extend(args);
    Expr::Call(ExprCall {
        attrs,
        func: Box::new(Expr::Path(ExprPath {
            attrs: Vec::new(),
            qself: None,
            path: private_path("boxed_at"),
        })),
        paren_token,
        args: new_args,
    })
}

/// Input:  `future.await` inside a nest guarded by `__scopeN`
/// Output:
/// ```text
/// match future {
///     __future => {
///         __scopeN.suspend();
///         let __output = __future.await;
///         __scopeN.resume();
///         __output
///     }
/// }
/// ```
///
/// The `match` keeps the temporaries of `future` alive until the await is
/// done, as they were; the guard holds nothing while the future is
/// suspended, and a future dropped at the await leaves it holding nothing.
fn suspended_await(awaited: ExprAwait, guard: &Ident) -> Expr {
    let span = Span::mixed_site();
    let ExprAwait {
        attrs,
        base,
        dot_token,
        await_token,
    } = awaited;
    let future = Ident::new("__future", span);
    let output = Ident::new("__output", span);
    let resumed = ExprAwait {
        attrs,
        base: Box::new(Expr::Path(ExprPath {
            attrs: Vec::new(),
            qself: None,
            path: Path::from(future.clone()),
        })),
        dot_token,
        await_token,
    };
    Expr::Verbatim(quote_spanned! {span=>
        match #base {
            #future => {
                #guard.suspend();
                let #output = #resumed;
                #guard.resume();
                #output
            }
        }
    })
}
