use batch_alloc::batch_alloc;

#[batch_alloc(capacity = 64)]
fn boxes(n: u64) -> Vec<Box<u64>> {
    (0..n).map(Box::new).collect()
}

fn main() {
    assert_eq!(boxes(3).len(), 3);
}
