use batch_alloc::batch_alloc;

#[batch_alloc]
struct Points {
    xs: Vec<Box<u64>>,
}

fn main() {
    // The struct is still emitted: no second error follows the first.
    let points = Points { xs: Vec::new() };
    assert!(points.xs.is_empty());
}
