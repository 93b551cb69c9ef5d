// What the attribute leaves as written: closures, `async` blocks, nested
// items, macro invocations. Loops inside closures and `async` blocks get
// batches of their own.
#![forbid(unsafe_code)]
#![deny(warnings)]

use batch_alloc::batch_alloc;

#[batch_alloc]
fn closures(n: u64) -> Vec<Box<u64>> {
    let mut makers = Vec::new();
    for i in 0..n {
        makers.push(move || Box::new(i));
    }
    let build = |m: u64| {
        let mut out = Vec::new();
        for j in 0..m {
            out.push(Box::new(j));
        }
        out
    };
    let mut out: Vec<Box<u64>> = makers.into_iter().map(|f| f()).collect();
    out.extend(build(n));
    out
}

#[batch_alloc]
fn items_and_macros(n: u64) -> Vec<Box<u64>> {
    fn helper(i: u64) -> Vec<Box<u64>> {
        let mut out = Vec::new();
        for k in 0..i {
            out.push(Box::new(k));
        }
        out
    }
    let mut out = Vec::new();
    for i in 0..n {
        out.extend(vec![Box::new(i), Box::new(i + 1)]);
        out.extend(helper(i));
        assert_eq!(stringify!(Box::new(i)), "Box::new(i)");
    }
    out
}

#[batch_alloc]
fn async_blocks(n: u64) -> Vec<impl std::future::Future<Output = Box<u64>>> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(async move {
            let mut sum = Box::new(0);
            for k in 0..i {
                sum = Box::new(*sum + k);
            }
            sum
        });
    }
    out
}

fn main() {
    assert_eq!(closures(3).len(), 6);
    assert_eq!(items_and_macros(3).len(), 6 + 3);
    assert_eq!(async_blocks(3).len(), 3);
}
