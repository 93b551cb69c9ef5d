// Loops used as values: the guard's block has the loop's value and type,
// in both modes.
#![forbid(unsafe_code)]
#![deny(warnings)]

use batch_alloc::batch_alloc;

#[batch_alloc]
fn tail(n: u64) -> Box<u64> {
    let mut i = 0;
    loop {
        i += 1;
        if i >= n {
            break Box::new(i);
        }
    }
}

#[batch_alloc]
fn positions(words: &[&str]) -> (usize, Box<String>, u64) {
    let mut i = 0;
    let first = loop {
        if words[i].len() > 1 {
            break Box::new(words[i].to_string());
        }
        i += 1;
    };
    let labelled = 'outer: loop {
        for word in words {
            if word.is_empty() {
                break 'outer 0;
            }
        }
        break 'outer words.len();
    };
    let sum = std::convert::identity(loop {
        break *Box::new(7u64);
    }) + match loop {
        break 1u64;
    } {
        1 => 1,
        _ => 0,
    };
    let units: [(); 2] = [for _ in 0..2 {}, while false {}];
    assert_eq!(units.len(), 2);
    (labelled, first, sum)
}

#[batch_alloc]
fn boxes_tail(n: u64) -> Box<u64> {
    let mut i = 0;
    loop {
        i += 1;
        if i >= n {
            break Box::new(i);
        }
    }
}

fn main() {
    assert_eq!(*tail(3), 3);
    assert_eq!(*boxes_tail(3), 3);
    let (labelled, first, sum) = positions(&["a", "bc", "d"]);
    assert_eq!((labelled, first.as_str(), sum), (3, "bc", 8));
}
