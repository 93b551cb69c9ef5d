// User names that look like generated ones, and user items shadowing the
// std names that generated code might have used, break nothing.
#![forbid(unsafe_code)]
#![deny(warnings)]
#![allow(non_camel_case_types, dead_code)]

use batch_alloc::batch_alloc;

struct Vec;
struct Option;
struct IntoIterator;
trait Iterator {}
enum Result {
    Ok,
}
fn alloc() {}
mod __private {}

#[batch_alloc]
fn generated_names(n: u64) -> std::vec::Vec<Box<u64>> {
    let __batch0 = 1000;
    let __iter = 100;
    let __hint = 10;
    let mut out = std::vec::Vec::new();
    for i in (0..n).map(|i| i + __hint) {
        let __batch1 = i;
        out.push(Box::new(__batch0 + __iter + __batch1));
    }
    let mut __batch2 = 0;
    while __batch2 < n {
        out.push(Box::new(__batch2));
        __batch2 += 1;
    }
    out
}

#[batch_alloc]
fn shadowed_std() -> std::vec::Vec<Box<u64>> {
    let _ = (Vec, Option, IntoIterator, Result::Ok);
    alloc();
    let mut out = std::vec::Vec::new();
    for i in 0..2 {
        out.push(Box::new(i));
    }
    out
}

fn main() {
    let values: std::vec::Vec<u64> = generated_names(2).into_iter().map(|b| *b).collect();
    assert_eq!(values, [1110, 1111, 0, 1]);
    assert_eq!(shadowed_std().len(), 2);
}
