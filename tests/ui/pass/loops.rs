// Every loop form, with `Box::new` in every position inside it.
#![forbid(unsafe_code)]
#![deny(warnings)]

use batch_alloc::batch_alloc;

#[batch_alloc]
fn for_loop(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Box::new(i));
    }
    out
}

#[batch_alloc]
fn while_loop(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        out.push(Box::new(i));
        i += 1;
    }
    out
}

#[batch_alloc]
fn while_let(n: u64) -> Option<Box<(u64, Option<Box<u64>>)>> {
    let mut values = (0..n).rev();
    let mut last = None;
    while let Some(value) = values.next() {
        last = Some(Box::new((
            value,
            last.map(|b: Box<(u64, _)>| Box::new(b.0)),
        )));
    }
    last
}

#[batch_alloc]
fn plain_loop(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        if i == n {
            break;
        }
        out.push(Box::new(i));
        i += 1;
    }
    out
}

#[batch_alloc]
fn branches_and_blocks(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        let boxed = if i % 2 == 0 {
            Box::new(i)
        } else {
            match i % 3 {
                0 => Box::new(i * 3),
                1 => {
                    let inner = { Box::new(i * 10) };
                    inner
                }
                _ => 'block: {
                    if i > 4 {
                        break 'block Box::new(i * 100);
                    }
                    Box::new(i * 1000)
                }
            }
        };
        out.push(boxed);
    }
    out
}

#[batch_alloc]
fn loop_values(n: u64) -> (Box<u64>, Box<Box<u64>>) {
    let mut i = 0;
    let first = loop {
        i += 1;
        if i >= n {
            break Box::new(i);
        }
    };
    let second = loop {
        break Box::new(Box::new(i * 2));
    };
    (first, second)
}

#[batch_alloc]
fn diverging_loop(n: u64) -> Box<u64> {
    let mut i = 0;
    loop {
        i += 1;
        if i == n {
            return Box::new(i);
        }
    }
}

#[batch_alloc]
fn condition(n: u64) -> usize {
    let mut seen = Vec::new();
    let mut i = 0;
    while *Box::new(i) < n {
        seen.push(i);
        i += 1;
    }
    seen.len()
}

fn main() {
    let expect: Vec<u64> = (0..10).collect();
    let unbox = |v: Vec<Box<u64>>| v.into_iter().map(|b| *b).collect::<Vec<_>>();
    assert_eq!(unbox(for_loop(10)), expect);
    assert_eq!(unbox(while_loop(10)), expect);
    assert_eq!(unbox(plain_loop(10)), expect);
    let list = while_let(3).unwrap();
    assert_eq!(list.0, 0);
    assert_eq!(list.1.as_deref(), Some(&1));
    assert_eq!(unbox(branches_and_blocks(8)), [0, 10, 2, 9, 4, 500, 6, 70]);
    let (first, second) = loop_values(4);
    assert_eq!((*first, **second), (4, 8));
    assert_eq!(*diverging_loop(5), 5);
    assert_eq!(condition(6), 6);
}
