// A type of the user's own called `Box`: the attribute leaves the body as
// written, so `Box::new` here is the user's, as without it.
#![forbid(unsafe_code)]
#![deny(warnings)]

use batch_alloc::batch_alloc;

struct Box<T>(T);

impl<T> Box<T> {
    fn new(value: T) -> Self {
        Box(value)
    }
}

#[batch_alloc]
fn wrap(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Box::new(i));
    }
    out
}

fn main() {
    assert_eq!(wrap(2)[1].0, 1);
}
