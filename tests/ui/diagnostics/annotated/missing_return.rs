// A body that forgets its value: "implicitly returns `()`".
#[batch_alloc::batch_alloc]
fn total(items: &[u64]) -> u64 {
    let sum: u64 = items.iter().sum();
}
#[batch_alloc::batch_alloc]
async fn total_async(items: &[u64]) -> u64 {
    let sum: u64 = items.iter().sum();
}

fn main() {}
