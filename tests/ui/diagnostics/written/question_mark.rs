// `?` in a function that returns `()` (E0277).

fn read_config(path: &str) {
    let text = std::fs::read_to_string(path)?;
    println!("{text}");
}

async fn read_config_async(path: &str) {
    let text = std::fs::read_to_string(path)?;
    println!("{text}");
}

fn main() {}
