use batch_alloc::batch_alloc;

#[batch_alloc(= "outermost")]
fn boxes(n: u64) -> Vec<Box<u64>> {
    (0..n).map(Box::new).collect()
}

#[batch_alloc(crate)]
fn no_path(n: u64) -> Vec<Box<u64>> {
    boxes(n)
}

#[batch_alloc(crate = "not a path")]
fn bad_path(n: u64) -> Vec<Box<u64>> {
    no_path(n)
}

fn main() {
    assert_eq!(bad_path(3).len(), 3);
}
