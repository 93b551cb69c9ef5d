// `quiet` takes nothing after it.
use batch_alloc::batch_alloc;

#[batch_alloc(quiet, extra)]
fn boxes(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Box::new(i));
    }
    out
}

#[batch_alloc(quiet = true)]
fn more_boxes(n: u64) -> Vec<Box<u64>> {
    boxes(n)
}

fn main() {
    assert_eq!(more_boxes(3).len(), 3);
}
