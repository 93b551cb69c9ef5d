// Everything the attribute goes on: free, generic, unsafe-free `extern`
// functions, inherent and trait-impl methods, whole impl blocks (generic
// ones too), and trait methods with a default body.
#![forbid(unsafe_code)]
#![deny(warnings)]

use batch_alloc::batch_alloc;
use std::fmt::Debug;

#[batch_alloc]
pub fn generic<T: Clone, I>(items: I) -> Vec<Box<T>>
where
    I: IntoIterator<Item = T>,
{
    let mut out = Vec::new();
    for item in items {
        out.push(Box::new(item.clone()));
    }
    out
}

#[batch_alloc]
extern "C" fn with_abi(n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        sum += *Box::new(i);
    }
    sum
}

#[batch_alloc]
const fn constant(n: u64) -> u64 {
    let mut i = 0;
    while i < n {
        i += 1;
    }
    i
}

struct Stack<T> {
    items: Vec<Box<T>>,
}

impl<T: Copy> Stack<T> {
    #[batch_alloc]
    fn push_all(&mut self, values: &[T]) {
        for value in values {
            self.items.push(Box::new(*value));
        }
    }
}

#[batch_alloc]
impl<T: Copy + Debug> Stack<T> {
    fn new() -> Self {
        Stack { items: Vec::new() }
    }

    fn push_repeated(&mut self, value: T, times: usize) -> &mut Self {
        for _ in 0..times {
            self.items.push(Box::new(value));
        }
        self
    }

    fn describe(self: Box<Self>) -> Vec<String> {
        let mut out = Vec::new();
        for item in &self.items {
            out.push(*Box::new(format!("{item:?}")));
        }
        out
    }

    const NAME: &'static str = "stack";
}

trait Fill {
    fn fill(&mut self, n: usize) -> usize;

    #[batch_alloc]
    fn fill_twice(&mut self, n: usize) -> usize {
        let mut total = 0;
        for _ in 0..2 {
            total += *Box::new(self.fill(n));
        }
        total
    }
}

#[batch_alloc]
impl Fill for Stack<u8> {
    fn fill(&mut self, n: usize) -> usize {
        for i in 0..n {
            self.items.push(Box::new(i as u8));
        }
        self.items.len()
    }
}

fn main() {
    assert_eq!(generic(vec![1, 2]).len(), 2);
    assert_eq!(with_abi(4), 6);
    assert_eq!(constant(3), 3);
    let mut stack = Stack::new();
    stack.push_all(&[1u8, 2]);
    stack.push_repeated(3, 2);
    assert_eq!(stack.fill_twice(1), 5 + 6);
    assert_eq!(Stack::<u8>::NAME, "stack");
    assert_eq!(Box::new(stack).describe().len(), 6);
}
