// The attribute warns when it finds nothing to rewrite, at the function's
// name, and says why; here the warnings are denied, to show them.
#![deny(deprecated)]

use batch_alloc::batch_alloc;

#[batch_alloc]
fn no_loop_no_box(x: u64) -> u64 {
    x + 1
}

#[batch_alloc]
fn only_in_a_macro() -> Vec<Box<u64>> {
    vec![Box::new(1)]
}

#[batch_alloc]
fn only_as_a_value(xs: Vec<u64>) -> Option<Box<u64>> {
    xs.into_iter().map(Box::new).next()
}

#[batch_alloc(boxes)]
fn boxes_only_in_a_closure(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        let make = || Box::new(i);
        out.push(make());
    }
    out
}

#[batch_alloc(boxes)]
fn boxes_outside_loops() -> Box<u64> {
    Box::new(1)
}

// A whole impl block warns once, and only if none of its methods has
// anything to rewrite.
struct Counter(u64);

#[batch_alloc]
impl Counter {
    fn get(&self) -> u64 {
        self.0
    }

    fn bump(&mut self) {
        self.0 += 1;
    }
}

#[batch_alloc]
impl Counter {
    fn boxed(&self) -> Box<u64> {
        Box::new(self.0)
    }

    fn again(&self) -> u64 {
        self.0
    }
}

// Silenced, one way or the other.
#[batch_alloc(quiet)]
fn quiet(x: u64) -> u64 {
    x + 2
}

#[allow(deprecated)]
#[batch_alloc]
fn allowed(x: u64) -> u64 {
    x + 3
}

fn main() {
    let _ = (no_loop_no_box(1), only_in_a_macro(), only_as_a_value(vec![1]));
    let _ = (boxes_only_in_a_closure(2), boxes_outside_loops(), quiet(1), allowed(1));
    let mut counter = Counter(0);
    counter.bump();
    let _ = (counter.get(), counter.boxed(), counter.again());
}
