// `user_box_type.rs` in the per-site form: the rewritten `Box::new` passes the
// user's own path along there too, and the compiler rejects it.
use batch_alloc::batch_alloc;

struct Box<T>(T);

impl<T> Box<T> {
    fn new(value: T) -> Self {
        Box(value)
    }
}

#[batch_alloc(per_site)]
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
