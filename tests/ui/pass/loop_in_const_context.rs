// A loop in a constant position inside an annotated function (an array's
// length, a const generic argument) runs at compile time: the attribute
// leaves it alone (a scope guard could not run there), so the function
// compiles as written, and the rest of the body is a scope as usual.
#![forbid(unsafe_code)]
#![deny(warnings)]

use batch_alloc::batch_alloc;

fn takes<const N: usize>() -> usize {
    N
}

#[batch_alloc]
fn repeat_length() -> usize {
    let zeros = [0u8; {
        let mut n = 0;
        while n < 4 {
            n += 1;
        }
        n
    }];
    zeros.len()
}

#[batch_alloc]
fn const_argument() -> usize {
    takes::<{
        let mut n = 0;
        while n < 4 {
            n += 1;
        }
        n
    }>()
}

fn main() {
    assert_eq!(repeat_length(), 4);
    assert_eq!(const_argument(), 4);
}
