use batch_alloc::batch_alloc;

#[batch_alloc]
static NAME: &str = "batch";

fn main() {
    assert_eq!(NAME, "batch");
}
