//! The code the per-site form generates: batch declarations around a loop
//! nest, and the call that replaces each `Box::new`.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::token;
use syn::{Expr, ExprCall, ExprForLoop, ExprPath, ExprReference, Path, Stmt};

use crate::shared::box_new::call_hook;
use crate::shared::{block, private_path, site, take_attrs};

/// How a batch is sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hint {
    /// From the lower bound of the `for` iterator's `size_hint()`: the call
    /// runs at most once per iteration of the loop the batch is declared at.
    Trip,
    /// No trip count (`while`, `while let`, `loop`, or an inner loop): the
    /// batch's refills grow geometrically.
    Unknown,
}

/// One rewritten `Box::new` call: the batch it allocates from.
#[derive(Debug)]
pub(crate) struct Site {
    pub batch: Ident,
    pub hint: Hint,
}

/// Input:  `Box::new(value)` (any accepted spelling), `value` already rewritten
/// Output: `::batch_alloc::__private::box_from_batch_at(SITE, &mut __batchN, Box::new, value)`
///         (`SITE`: see [`site`]; the path passed along: see [`call_hook`])
pub(crate) fn alloc_call(call: ExprCall, batch: &Ident) -> Expr {
    let span = Span::mixed_site();
    let at = site("Batched", call.span());
    let batch_ref = Expr::Reference(ExprReference {
        attrs: Vec::new(),
        and_token: token::And(span),
        mutability: Some(token::Mut(span)),
        expr: Box::new(Expr::Path(ExprPath {
            attrs: Vec::new(),
            qself: None,
            path: Path::from(batch.clone()),
        })),
    });
    call_hook("box_from_batch_at", [at, batch_ref], call)
}

/// Input:  `#[attrs] 'label: while cond { body }` (or `loop`, or `for` with no
///         call site sized by its trip count)
/// Output: `#[attrs] { let mut __batchN = ErasedBatch::with_capacity(0); ... 'label: while cond { body } }`
pub(crate) fn wrap_unsized(mut looped: Expr, sites: &[Site]) -> Expr {
    let attrs = take_attrs(&mut looped);
    let mut stmts = declarations(sites, &TokenStream::new());
    stmts.push(Stmt::Expr(looped, None));
    block(attrs, stmts)
}

/// Input:  `#[attrs] 'label: for pat in head { body }`
/// Output:
/// ```text
/// #[attrs] {
///     match IntoIterator::into_iter(head) {
///         __iter => {
///             let __hint = Iterator::size_hint(&__iter).0;
///             let mut __batchN = ErasedBatch::with_capacity(__hint);
///             'label: for pat in __iter { body }
///         }
///     };
/// }
/// ```
///
/// This is how the compiler itself lowers `for`: the head's temporaries live
/// in the `match` scrutinee until the loop ends (so `for x in make().iter()`
/// still compiles), and `into_iter` runs once, on the user's value; the inner
/// `for` calls it again on the iterator, where it is the identity. The `;`
/// ends those temporaries with the statement, as the compiler's lowering
/// does, even where the loop is a block's tail expression.
pub(crate) fn wrap_for(mut for_loop: ExprForLoop, sites: &[Site]) -> Expr {
    let span = Span::mixed_site();
    let attrs = std::mem::take(&mut for_loop.attrs);
    let iter = Ident::new("__iter", span);
    let hint = Ident::new("__hint", span);
    let head = std::mem::replace(
        &mut *for_loop.expr,
        Expr::Path(ExprPath {
            attrs: Vec::new(),
            qself: None,
            path: Path::from(iter.clone()),
        }),
    );
    let into_iter = private_path("IntoIterator");
    let iterator = private_path("Iterator");
    let hint_tokens = hint.to_token_stream();
    let declarations = declarations(sites, &hint_tokens);
    let scrutinee = quote_spanned! {span=>
        #into_iter::into_iter(#head)
    };
    let matched = quote_spanned! {span=>
        match #scrutinee {
            #iter => {
                let #hint = #iterator::size_hint(&#iter).0;
                #(#declarations)*
                #for_loop
            }
        }
    };
    block(
        attrs,
        vec![Stmt::Expr(Expr::Verbatim(matched), Some(token::Semi(span)))],
    )
}

/// `let mut __batchN = ErasedBatch::with_capacity(..);` for each site.
fn declarations(sites: &[Site], trip: &TokenStream) -> Vec<Stmt> {
    let span = Span::mixed_site();
    let raw_batch = private_path("ErasedBatch");
    sites
        .iter()
        .map(|site| {
            let batch = &site.batch;
            let capacity = match site.hint {
                Hint::Trip => trip.clone(),
                Hint::Unknown => quote_spanned!(span=> 0),
            };
            Stmt::Expr(
                Expr::Verbatim(quote_spanned! {span=>
                    let mut #batch = #raw_batch::with_capacity(#capacity);
                }),
                None,
            )
        })
        .collect()
}
