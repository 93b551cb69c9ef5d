// The attribute on an impl block and again on one of its methods: the
// block's covers the method, which gets one guard.
#![forbid(unsafe_code)]
#![deny(warnings)]

use batch_alloc::batch_alloc;

struct Pool;

#[batch_alloc]
impl Pool {
    #[batch_alloc]
    fn fill(&self, n: u64) -> Vec<Box<u64>> {
        let mut out = Vec::new();
        for i in 0..n {
            out.push(Box::new(i));
        }
        out
    }
}

fn main() {
    assert_eq!(Pool.fill(3).len(), 3);
}
