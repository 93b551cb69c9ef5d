// `Box::new` inside an `unsafe` block in a loop is rewritten too. (Not under
// `#![forbid(unsafe_code)]`, which would reject the user's own block; the
// expansion adds no `unsafe` of its own, as the other cases show.)
#![deny(warnings)]

use batch_alloc::batch_alloc;

#[batch_alloc]
fn read_all(values: &[u64]) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    let base = values.as_ptr();
    for i in 0..values.len() {
        // SAFETY: `i` is in bounds of `values`.
        out.push(unsafe { Box::new(*base.add(i)) });
    }
    out
}

fn main() {
    assert_eq!(*read_all(&[4, 5])[1], 5);
}
