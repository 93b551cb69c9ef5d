// The attribute's arguments: `quiet`, and the deprecated `per_site` (old
// name `boxes`), which now mean the default form, alone and together, in
// either order.
#![forbid(unsafe_code)]
#![deny(warnings)]

use batch_alloc::batch_alloc;

#[batch_alloc(quiet)]
fn nothing_here(x: u64) -> u64 {
    x * 2
}

#[allow(deprecated)]
#[batch_alloc(per_site)]
fn per_site(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Box::new(i));
    }
    out
}

#[allow(deprecated)]
#[batch_alloc(boxes, quiet)]
fn boxes_outside_loops() -> Box<u64> {
    Box::new(7)
}

#[allow(deprecated)]
#[batch_alloc(quiet, per_site)]
fn also(x: u64) -> u64 {
    x + 1
}

fn main() {
    assert_eq!(nothing_here(2), 4);
    assert_eq!(per_site(3).len(), 3);
    assert_eq!(*boxes_outside_loops(), 7);
    assert_eq!(also(1), 2);
}
