// A reference to a local returned (E0515).
#[batch_alloc::batch_alloc]
fn joined(words: &[String]) -> &str {
    let joined = words.join(" ");
    &joined
}
#[batch_alloc::batch_alloc]
async fn joined_async(words: &[String]) -> &str {
    let joined = words.join(" ");
    &joined
}

fn main() {}
