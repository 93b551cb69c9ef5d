// A body that forgets its value: "implicitly returns `()`".

fn total(items: &[u64]) -> u64 {
    let sum: u64 = items.iter().sum();
}

async fn total_async(items: &[u64]) -> u64 {
    let sum: u64 = items.iter().sum();
}

fn main() {}
