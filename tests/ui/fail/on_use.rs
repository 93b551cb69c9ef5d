use batch_alloc::batch_alloc;

#[batch_alloc]
use std::collections::HashMap;

fn main() {
    let map: HashMap<u8, u8> = HashMap::new();
    assert!(map.is_empty());
}
