// `?` in a function that returns `()` (E0277).
#[batch_alloc::batch_alloc]
fn read_config(path: &str) {
    let text = std::fs::read_to_string(path)?;
    println!("{text}");
}
#[batch_alloc::batch_alloc]
async fn read_config_async(path: &str) {
    let text = std::fs::read_to_string(path)?;
    println!("{text}");
}

fn main() {}
