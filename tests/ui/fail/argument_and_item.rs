use batch_alloc::batch_alloc;

// Both mistakes are reported, each at its own tokens.
#[batch_alloc(growth)]
struct Boxes(Vec<Box<u64>>);

fn main() {
    let boxes = Boxes(vec![Box::new(1)]);
    assert_eq!(boxes.0.len(), 1);
}
