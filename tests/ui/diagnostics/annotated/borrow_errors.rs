// A vector grown while a reference into it is held (E0502), and a value
// used after it was moved (E0382).
#[batch_alloc::batch_alloc]
fn first_then_push(items: &mut Vec<Box<u64>>) -> u64 {
    let first = &items[0];
    items.push(Box::new(1));
    **first
}
#[batch_alloc::batch_alloc]
async fn first_then_push_async(items: &mut Vec<Box<u64>>) -> u64 {
    let first = &items[0];
    items.push(Box::new(1));
    **first
}
#[batch_alloc::batch_alloc]
fn moved_twice(name: String) -> (Box<String>, Box<String>) {
    let first = Box::new(name);
    let second = Box::new(name);
    (first, second)
}
#[batch_alloc::batch_alloc]
async fn moved_twice_async(name: String) -> (Box<String>, Box<String>) {
    let first = Box::new(name);
    let second = Box::new(name);
    (first, second)
}

fn main() {}
