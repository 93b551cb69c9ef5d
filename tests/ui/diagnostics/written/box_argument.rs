// A `Box::new` of the wrong type, for a local and for a vector's element.

fn boxed_number() -> Box<u64> {
    let boxed: Box<u64> = Box::new("seven");
    boxed
}

fn boxes(words: &[&str]) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for word in words {
        out.push(Box::new(word.len()));
    }
    out
}

async fn boxes_async(words: &[&str]) -> Vec<Box<u64>> {
    let mut out: Vec<Box<u64>> = Vec::new();
    for word in words {
        out.push(Box::new(*word));
    }
    out
}

fn main() {}
