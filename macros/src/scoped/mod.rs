//! The default mode: an annotated function is a batch scope while it runs.
//!
//! A synchronous function's body runs inside this thread's batch scope: it
//! becomes a closure passed to `function_scope`, which runs it at once when
//! a scope is open already (a caller's: the common case, one thread-local
//! read and a test, with no guard to drop), and otherwise opens the scope
//! around it and closes it when the function returns, however it returns.
//! The closure's return type is the function's, named in the call, so that
//! every `return` and `?` in the body converts as it did. A function whose
//! return type cannot be named there (`impl Trait`, `!`), that is
//! `#[track_caller]` (the closure would be the caller) or `unsafe` (a
//! closure's body is not an unsafe context) starts with a scope guard
//! instead, with the same effect. So
//! everything the function does is served, whatever it is written with:
//! loops, iterator adapters and the closures they call, recursion, a single
//! call into a library (`serde_json::from_str`).
//!
//! A method of an annotated `impl` block needs no closure: it can name
//! itself, so its first line opens the scope where none is open and calls
//! the method again inside it, with its own arguments (see [`reentry`]),
//! and the body stays as written: the compiler sees the method as the user
//! wrote it, and backtraces and profiles name it rather than a closure.
//!
//! A leaf is left as written (see [`is_leaf`]): a function made of method
//! calls, field accesses and operators, as accessors are, runs inside its
//! caller's scope, and a guard would cost more than its body.
//!
//! A future is different: it is suspended at its awaits, and may be resumed
//! on another thread, or dropped, while other tasks run on this one. So the
//! body of an `async fn`, and every `async` block, becomes a future whose
//! every *poll* opens or joins the scope of the thread polling it and closes
//! it before returning. No scope is held while the future is suspended,
//! wherever its awaits are: written out, produced by a macro
//! (`futures::join!`, `tokio::select!`, a local `macro_rules!`), or in the
//! head of a loop. That is right by construction: nothing here needs to
//! find the awaits.
//!
//! A closure is not a scope of its own: called where the function runs
//! (`iter().map(|x| ..)`), it is inside the function's scope. But it may
//! also run after the function returns, on another thread, or many times
//! per call, so each outermost loop of a closure body gets a guard of its
//! own: a closure that loops (the body of a spawned thread, say) is served
//! wherever it runs, and a short closure called per element pays nothing.
//!
//! In every body, each `Box::new(value)` becomes a typed allocation from the
//! open scope (a bump of the run of its size class, known at compile time),
//! or `Box::new` when none is open.

use std::mem;

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::visit_mut::{self, VisitMut};
use syn::{
    Attribute, Block, Expr, ExprAsync, ExprCall, ExprClosure, FnArg, GenericParam, Pat, ReturnType,
    Signature, Stmt, Type,
};

use crate::shared::box_new::{call_hook, is_box_new};
use crate::shared::{block, named_site, private_path, site, take_attrs, Names};

/// Rewrites the body of `sig`'s function: its `Box::new` calls, its
/// closures' loops and its `async` blocks, then makes the body a scope.
/// False, with the body as written, for a leaf (see [`is_leaf`]).
pub(crate) fn rewrite_fn(
    sig: &Signature,
    attrs: &[Attribute],
    body: &mut Block,
    names: &mut Names,
    owner: Option<&Owner>,
) -> bool {
    if sig.asyncness.is_none() && is_leaf(body) {
        return false;
    }
    Body::new(names, Kind::Scoped).visit_block_mut(body);
    let span = Span::mixed_site();
    if sig.asyncness.is_some() {
        // `async fn f(..) -> T { body }` is `fn f(..) -> impl Future<Output
        // = T>` whose future runs `body`; the inner `async move` block is a
        // future with the same output that captures what the body uses, as
        // the outer one did.
        let at = named_site("Future", &sig.ident.to_string(), sig.ident.span());
        let stmts = mem::take(&mut body.stmts);
        let scoped = private_path("scoped_future");
        body.stmts = vec![Stmt::Expr(
            Expr::Verbatim(quote_spanned! {span=>
                #scoped(#at, async move { #(#stmts)* }).await
            }),
            None,
        )];
    } else if let Some(reenter) = owner.and_then(|owner| reentry(sig, attrs, owner)) {
        let at = named_site("Function", &sig.ident.to_string(), sig.ident.span());
        let must_open = private_path("function_must_open");
        let open = private_path("open_and_reenter");
        body.stmts.insert(
            0,
            Stmt::Expr(
                Expr::Verbatim(quote_spanned! {span=>
                    if #must_open() {
                        return #open(#at, move || #reenter);
                    }
                }),
                None,
            ),
        );
    } else if let Some(output) = closure_output(sig, attrs) {
        let at = named_site("Function", &sig.ident.to_string(), sig.ident.span());
        let stmts = mem::take(&mut body.stmts);
        let scoped = private_path("function_scope");
        body.stmts = vec![Stmt::Expr(
            Expr::Verbatim(quote_spanned! {span=>
                #scoped::<#output, _>(#at, move || { #(#stmts)* })
            }),
            None,
        )];
    } else {
        let guard = names.scope();
        let at = named_site("Function", &sig.ident.to_string(), sig.ident.span());
        body.stmts.insert(0, guard_declaration(&guard, at));
    }
    true
}

/// Input:  a method of an `impl` block, called as `owner::name` (`Self`, or
///         `<Self as Trait>` in a trait impl)
/// Output: the method calling itself with its own arguments,
///         `owner::name::<T, N>(self, a, b)`, if it can be written: the
///         function's scope opens around that call, and the body stays as
///         written (see [`rewrite_fn`]).
///
/// `None`, for the closure instead, where the call could not be written
/// or would not be the same function: a parameter that is a pattern rather
/// than a name, a generic function with an `impl Trait` parameter (no
/// turbofish allowed), an `impl Trait` return (the call's opaque type would
/// be its own), and the cases [`closure_output`] leaves out. In a trait
/// impl the call goes through the trait's signature, which the method may
/// generalise (a bound the trait requires and the method leaves out, a
/// `&str` where the trait says `&'static str`): there, a method with
/// generic parameters (an `impl Trait` parameter included) or a lifetime
/// in a parameter's type keeps the closure too.
fn reentry(sig: &Signature, attrs: &[Attribute], owner: &Owner) -> Option<TokenStream> {
    closure_output(sig, attrs)?;
    if sig.variadic.is_some() {
        return None;
    }
    let through_trait = matches!(owner, Owner::Trait(_));
    let mut args = Vec::new();
    let mut impl_trait_param = false;
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(receiver) => args.push(receiver.self_token.to_token_stream()),
            FnArg::Typed(typed) => {
                let Pat::Ident(name) = &*typed.pat else {
                    return None;
                };
                if name.by_ref.is_some() || name.subpat.is_some() {
                    return None;
                }
                let found = ParamType::of(&typed.ty);
                if through_trait && found.lifetime {
                    return None;
                }
                impl_trait_param |= found.impl_trait;
                args.push(name.ident.to_token_stream());
            }
        }
    }
    let generics: Vec<TokenStream> = sig
        .generics
        .params
        .iter()
        .filter_map(|param| match param {
            GenericParam::Type(ty) => Some(ty.ident.to_token_stream()),
            GenericParam::Const(c) => Some(c.ident.to_token_stream()),
            GenericParam::Lifetime(_) => None,
        })
        .collect();
    // An `impl Trait` parameter is a generic too: with other generics no
    // turbofish may be written, and in a trait impl it may be bound more
    // loosely than the trait's, as a generic may.
    let generic = !generics.is_empty();
    let unwritable = match through_trait {
        true => generic || impl_trait_param,
        false => generic && impl_trait_param,
    };
    if unwritable {
        return None;
    }
    let name = &sig.ident;
    let turbofish = match generics.is_empty() {
        true => TokenStream::new(),
        false => quote::quote!(::<#(#generics),*>),
    };
    let owner = match owner {
        Owner::Inherent => quote::quote!(Self),
        Owner::Trait(path) => quote::quote!(<Self as #path>),
    };
    Some(quote::quote!(#owner::#name #turbofish(#(#args),*)))
}

/// The `impl` block a method is in: how it names itself.
pub(crate) enum Owner {
    /// `impl Type`: `Self::name`.
    Inherent,
    /// `impl Trait for Type`: `<Self as Trait>::name`, so that an inherent
    /// method of the same name is not the one called.
    Trait(syn::Path),
}

/// What a parameter's type holds that decides whether a method can call
/// itself.
#[derive(Default)]
struct ParamType {
    /// An `impl Trait`: no turbofish may name the method's generics.
    impl_trait: bool,
    /// A reference or a lifetime, which a trait's signature may name more
    /// narrowly than the method.
    lifetime: bool,
}

impl ParamType {
    fn of(ty: &Type) -> ParamType {
        let mut found = ParamType::default();
        found.visit_type(ty);
        found
    }
}

impl<'ast> Visit<'ast> for ParamType {
    fn visit_type_impl_trait(&mut self, ty: &'ast syn::TypeImplTrait) {
        self.impl_trait = true;
        syn::visit::visit_type_impl_trait(self, ty);
    }

    fn visit_type_reference(&mut self, ty: &'ast syn::TypeReference) {
        self.lifetime = true;
        syn::visit::visit_type_reference(self, ty);
    }

    fn visit_lifetime(&mut self, _: &'ast syn::Lifetime) {
        self.lifetime = true;
    }
}

/// The function's return type, to name as the closure's, if the body may
/// become a closure: the type names no `impl Trait` and is not `!`, and
/// the function is not `#[track_caller]` (the closure would be the caller)
/// or `unsafe` (a closure's body is not an unsafe context).
fn closure_output(sig: &Signature, attrs: &[Attribute]) -> Option<Type> {
    let track_caller = attrs.iter().any(|a| a.path().is_ident("track_caller"));
    if track_caller || matches!(sig.safety, syn::Safety::Unsafe(_)) {
        return None;
    }
    let output = match &sig.output {
        ReturnType::Default => syn::parse_quote!(()),
        ReturnType::Type(_, ty) => (**ty).clone(),
    };
    struct Unnameable(bool);
    impl<'ast> Visit<'ast> for Unnameable {
        fn visit_type_impl_trait(&mut self, _: &'ast syn::TypeImplTrait) {
            self.0 = true;
        }
        fn visit_type_never(&mut self, _: &'ast syn::TypeNever) {
            self.0 = true;
        }
        fn visit_type_macro(&mut self, _: &'ast syn::TypeMacro) {
            // What it expands to is not known here.
            self.0 = true;
        }
        fn visit_type_infer(&mut self, _: &'ast syn::TypeInfer) {
            self.0 = true;
        }
    }
    let mut check = Unnameable(false);
    check.visit_type(&output);
    (!check.0).then_some(output)
}

/// What kind of body a walk is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
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
struct Body<'a> {
    names: &'a mut Names,
    kind: Kind,
    /// Whether the walk is inside a loop of a closure body that has a guard.
    guarded: bool,
}

impl<'a> Body<'a> {
    fn new(names: &'a mut Names, kind: Kind) -> Self {
        Body {
            names,
            kind,
            guarded: false,
        }
    }

    /// Walks a body of another kind met inside this one.
    fn inner(&mut self, kind: Kind, walk: impl FnOnce(&mut Body)) {
        walk(&mut Body::new(self.names, kind));
    }

    /// Input:  an outermost `for`, `while` or `loop` of a closure body
    /// Output: `{ let mut __scopeN = Scope::new(); enter_at(SITE, &mut __scopeN); 'label: loop { body } }`
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

/// `let mut __scopeN = Scope::new(); enter_at(SITE, &mut __scopeN);`: the
/// guard is declared first, so it is dropped last, after every local of the
/// body it covers.
fn guard_declaration(guard: &Ident, at: Expr) -> Stmt {
    let span = Span::mixed_site();
    let scope = private_path("Scope");
    let enter_at = private_path("enter_at");
    Stmt::Expr(
        Expr::Verbatim(quote_spanned! {span=>
            let mut #guard = #scope::new();
            #enter_at(#at, &mut #guard);
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

/// Whether a body is a leaf: no loop, `async` block or await, no call of a
/// function by path or value, and no macro call but the standard library's
/// formatting and assertion macros: only method calls, field and index
/// accesses, operators, literals, constructors (a called path whose last
/// segment starts with a capital: `Some(x)`, `Point(1, 2)`), closures made
/// of the same (`opt.is_some_and(|b| b.is_ascii_digit())`), and messages
/// (`format!`, `panic!`, `assert!`). Accessors look like this, and are
/// called many times per scope: a leaf opens no scope of its own and runs
/// in its caller's.
fn is_leaf(body: &Block) -> bool {
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
