// Temporaries in a `for` head live as long as they did: to the end of the
// loop, and no further, even where the loop is a block's tail expression.
#![forbid(unsafe_code)]
#![deny(warnings)]

use batch_alloc::batch_alloc;
use std::cell::RefCell;

fn make() -> Vec<u64> {
    vec![1, 2, 3]
}

#[batch_alloc]
fn temporary_in_head() -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for x in make().iter() {
        out.push(Box::new(*x));
    }
    out
}

#[batch_alloc]
fn borrow_in_tail(cell: &RefCell<Vec<u64>>, out: &mut Vec<Box<u64>>) {
    let local = RefCell::new(vec![7, 8]);
    for x in local.borrow().iter() {
        out.push(Box::new(*x));
    }
    for x in cell.borrow().iter() {
        out.push(Box::new(*x))
    }
}

#[batch_alloc]
fn while_let_borrow(cell: &RefCell<Vec<u64>>) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    while let Some(x) = cell.borrow_mut().pop() {
        out.push(Box::new(x));
        // As without the attribute, the condition's `borrow_mut` lives
        // through the body.
        assert!(cell.try_borrow_mut().is_err());
    }
    out
}

fn main() {
    assert_eq!(temporary_in_head().len(), 3);
    let cell = RefCell::new(vec![4, 5]);
    let mut out = Vec::new();
    borrow_in_tail(&cell, &mut out);
    assert_eq!(out.len(), 4);
    assert_eq!(while_let_borrow(&cell).len(), 2);
}
