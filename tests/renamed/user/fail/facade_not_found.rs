// The attribute re-exported by a library, used without `crate = path`, in
// a crate that does not depend on batch-alloc: the facade is not found.

#[batch_alloc_renamed::batch_alloc]
fn words(text: &str) -> Vec<String> {
    text.split(' ').map(String::from).collect()
}

fn main() {
    assert_eq!(words("a b").len(), 2);
}
