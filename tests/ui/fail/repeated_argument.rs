use batch_alloc::batch_alloc;

#[batch_alloc(crate = batch_alloc, crate = batch_alloc)]
fn twice(n: u64) -> Vec<Box<u64>> {
    (0..n).map(Box::new).collect()
}

fn main() {
    let _ = twice(1);
}
