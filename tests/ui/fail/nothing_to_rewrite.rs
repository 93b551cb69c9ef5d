// Where the attribute leaves a function as written, it warns at the
// function's name, says why and what to write instead. The default form
// leaves leaves alone (accessors: method calls, field accesses, operators),
// which run in their callers' scopes. Here the warnings are denied, to show
// them.
#![deny(deprecated)]

use batch_alloc::batch_alloc;

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

// Silenced, one way or the other; and a function that calls a function
// (which may allocate), not a leaf: silent.
#[batch_alloc(quiet)]
fn quiet(x: u64) -> u64 {
    x + 2
}

#[allow(deprecated)]
#[batch_alloc]
fn allowed(x: u64) -> u64 {
    x + 3
}

#[batch_alloc]
fn scoped(x: u64) -> u64 {
    u64::max(x, 4)
}

fn main() {
    let _ = (quiet(1), allowed(1), scoped(1), leaf("a"));
    let counter = Counter(1);
    let _ = (counter.value(), counter.label(), counter.doubled(), counter.boxed_value());
}
