// A misspelt argument is an error, not silently the default.
use batch_alloc::batch_alloc;

#[batch_alloc(boxed)]
fn boxes(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Box::new(i));
    }
    out
}

fn main() {
    assert_eq!(boxes(3).len(), 3);
}
