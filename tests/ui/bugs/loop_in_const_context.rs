// Known bug (run by the ignored test `ui_known_bugs` in tests/ui.rs): a loop
// in a const context inside an annotated function (an array repeat length,
// a const generic argument) gets a scope guard, whose `enter` and `Drop`
// cannot run at compile time, so a function that compiles as written does
// not compile under `#[batch_alloc]` (E0015, E0493). Boxes mode leaves such
// a loop alone, since it has no `Box::new` in it.
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
