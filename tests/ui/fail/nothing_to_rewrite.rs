// Where the attribute leaves a function as written, it warns at the
// function's name, says why and what to write instead. The default form
// leaves leaves alone (accessors: method calls, field accesses, operators),
// which run in their callers' scopes; the per-site form, `#[batch_alloc(per_site)]`,
// serves only `Box::new` calls inside loops. Here the warnings are denied,
// to show them.
#![deny(deprecated)]

use batch_alloc::batch_alloc;

#[batch_alloc(per_site)]
fn boxes_only_in_a_closure(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        let make = || Box::new(i);
        out.push(make());
    }
    out
}

#[batch_alloc(per_site)]
fn boxes_outside_loops() -> Box<u64> {
    Box::new(1)
}

#[batch_alloc(per_site)]
fn boxes_in_a_macro_and_as_a_value(xs: Vec<u64>) -> Vec<Box<u64>> {
    let mut out = vec![Box::new(0)];
    out.extend(xs.into_iter().map(Box::new));
    out
}

#[batch_alloc]
fn leaf(name: &str) -> String {
    name.to_uppercase()
}

// A whole impl block says nothing in the default form, even when every
// method is a leaf: annotating the block is how a user says "all of
// these", accessors included.
struct Counter(u64);

#[batch_alloc]
impl Counter {
    fn value(&self) -> u64 {
        self.0
    }

    fn label(&self) -> String {
        self.0.to_string()
    }
}

// One method that is not a leaf: no warning for the others.
#[batch_alloc]
impl Counter {
    fn doubled(&self) -> u64 {
        self.0 * 2
    }

    fn boxed_value(&self) -> Box<u64> {
        Box::new(self.0)
    }
}

#[batch_alloc(per_site)]
impl Counter {
    fn get(&self) -> u64 {
        self.0
    }

    fn bump(&mut self) {
        self.0 += 1;
    }
}

#[batch_alloc(per_site)]
impl Counter {
    fn boxed(&self) -> Vec<Box<u64>> {
        (0..self.0).map(|i| Box::new(i)).collect()
    }

    fn looped(&self) -> Vec<Box<u64>> {
        let mut out = Vec::new();
        for i in 0..self.0 {
            out.push(Box::new(i));
        }
        out
    }
}

// Silenced, one way or the other; and the default form, silent.
#[batch_alloc(per_site, quiet)]
fn quiet(x: u64) -> u64 {
    x + 2
}

#[allow(deprecated)]
#[batch_alloc(per_site)]
fn allowed(x: u64) -> u64 {
    x + 3
}

#[batch_alloc]
fn scoped(x: u64) -> u64 {
    u64::max(x, 4)
}

fn main() {
    let _ = (boxes_only_in_a_closure(2), boxes_outside_loops());
    let _ = boxes_in_a_macro_and_as_a_value(vec![1]);
    let _ = (quiet(1), allowed(1), scoped(1), leaf("a"));
    let mut counter = Counter(0);
    counter.bump();
    let _ = (counter.get(), counter.boxed(), counter.looped());
    let _ = (counter.value(), counter.label(), counter.doubled(), counter.boxed_value());
}
