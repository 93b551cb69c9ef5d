//! A library as users write them around batch-alloc: it depends on the
//! facade under another name (`ba = { package = "batch-alloc" }`) and
//! annotates its own functions with `#[ba::batch_alloc]`, no argument
//! needed; and it re-exports the attribute and the facade, so that its
//! users, who do not depend on batch-alloc themselves, write
//! `#[batch_alloc_renamed::batch_alloc(crate = batch_alloc_renamed::batch_alloc)]`.
//! The tests are in `user/`, a crate that depends on this one only.

/// The attribute, and the facade under the same name (one is a macro, the
/// other a crate: they do not collide), for `crate = path`.
pub use ba::{self as batch_alloc, batch_alloc};

/// Splits `text` into owned words, in a scope.
#[ba::batch_alloc]
pub fn words(text: &str) -> Vec<String> {
    text.split(' ').map(String::from).collect()
}

/// A list of boxes, in a scope opened by each poll.
#[ba::batch_alloc]
pub async fn boxes(n: u64) -> Vec<Box<u64>> {
    (0..n).map(Box::new).collect()
}

pub struct Lines {
    pub text: String,
}

#[ba::batch_alloc]
impl Lines {
    pub fn lines(&self) -> Vec<Box<str>> {
        self.text.lines().map(Box::from).collect()
    }
}
