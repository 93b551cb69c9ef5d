// Each accepted spelling of `Box::new`, and the ones left as written.
#![forbid(unsafe_code)]
#![deny(warnings)]

extern crate alloc;

use batch_alloc::batch_alloc;

#[batch_alloc]
fn spellings(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Box::new(i));
        out.push(Box::<u64>::new(i));
        out.push(std::boxed::Box::new(i));
        out.push(::std::boxed::Box::new(i));
        out.push(std::boxed::Box::<u64>::new(i));
        out.push(alloc::boxed::Box::new(i));
        out.push(::alloc::boxed::Box::new(i));
        // As a value, not a call: left as written.
        out.extend(Some(i).map(Box::new));
        out.push(<Box<u64>>::new(i));
    }
    out
}

fn main() {
    let boxes = spellings(3);
    assert_eq!(boxes.len(), 27);
    assert!(boxes.iter().enumerate().all(|(k, b)| **b == (k / 9) as u64));
}
