// A type of the user's own called `Box`: the attribute sees only syntax, so
// it rewrites `Box::new` here too, and the compiler then reports, at the
// user's `Box::new`, that it is not the standard one. Nothing changes type
// silently.
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
