// A reference to a local returned (E0515).

fn joined(words: &[String]) -> &str {
    let joined = words.join(" ");
    &joined
}

async fn joined_async(words: &[String]) -> &str {
    let joined = words.join(" ");
    &joined
}

fn main() {}
