use batch_alloc::batch_alloc;

#[batch_alloc]
const LIMIT: usize = 8;

fn main() {
    assert_eq!(LIMIT, 8);
}
