// Loops in expression positions the rewrite must keep parsing the same:
// as a method receiver at the start of a statement, as an operand, in a
// `match` arm without braces, as a function's tail.
#![forbid(unsafe_code)]
#![deny(warnings)]

use batch_alloc::batch_alloc;

#[batch_alloc]
fn receiver(n: u64) -> usize {
    let mut total = 0;
    loop {
        break vec![Box::new(n)];
    }
    .len();
    total += loop {
        break Box::new(n);
    }
    .to_string()
    .len();
    total += 1 + *loop {
        break Box::new(n);
    } as usize;
    total
}

#[batch_alloc]
fn arm(kind: u8, out: &mut Vec<Box<u8>>) {
    match kind {
        0 => {
            for i in 0..3 {
                out.push(Box::new(i))
            }
        }
        _ => {
            while out.len() < 5 {
                out.push(Box::new(kind))
            }
        }
    }
}

#[batch_alloc]
fn tail(n: u64) -> Box<u64> {
    loop {
        break Box::new(n);
    }
}

fn main() {
    assert_eq!(receiver(7), 1 + 1 + 7);
    let mut out = Vec::new();
    arm(0, &mut out);
    arm(9, &mut out);
    assert_eq!(out.iter().map(|b| **b).collect::<Vec<_>>(), [0, 1, 2, 9, 9]);
    assert_eq!(*tail(4), 4);
}
