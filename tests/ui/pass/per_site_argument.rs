// `#[batch_alloc(per_site)]`: per-site batches instead of batch scopes, on
// every kind of item the attribute takes (an `async fn`: async_fn.rs).
#![forbid(unsafe_code)]
#![deny(warnings)]

use batch_alloc::batch_alloc;

#[batch_alloc(per_site)]
fn for_loop(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Box::new(i));
    }
    out
}

#[batch_alloc(per_site)]
fn generic<T: Clone>(items: &[T]) -> Vec<Box<T>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < items.len() {
        out.push(Box::new(items[i].clone()));
        i += 1;
    }
    out
}

struct Stack(Vec<Box<u64>>);

#[batch_alloc(per_site)]
impl Stack {
    fn push(&mut self, n: u64) -> usize {
        for i in 0..n {
            self.0.push(Box::new(i));
        }
        self.0.len()
    }
}

trait Fill {
    fn fill(&mut self, n: u64) -> u64;
}

impl Fill for Stack {
    #[batch_alloc(per_site)]
    fn fill(&mut self, n: u64) -> u64 {
        let mut i = 0;
        loop {
            if i == n {
                break i;
            }
            self.0.push(Box::new(i));
            i += 1;
        }
    }
}

fn main() {
    assert_eq!(for_loop(3).iter().map(|b| **b).sum::<u64>(), 3);
    assert_eq!(*generic(&["a", "b"])[1], "b");
    let mut stack = Stack(Vec::new());
    assert_eq!(stack.push(4), 4);
    assert_eq!(stack.fill(2), 2);
}
