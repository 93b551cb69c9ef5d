use batch_alloc::batch_alloc;

#[batch_alloc(per_site, boxes)]
fn twice(n: u64) -> Vec<Box<u64>> {
    (0..n).map(|i| Box::new(i)).collect()
}

fn main() {
    let _ = (twice(1), quietly(1));
}

#[batch_alloc(quiet, quiet)]
fn quietly(x: u64) -> u64 {
    x
}
