// `per_site` and its older name `boxes` named the per-site form, which the
// default form has replaced: both still compile, as the default form, with a
// deprecation warning at the argument (an error here, under
// `deny(deprecated)`), on a function and on an impl block.
#![deny(deprecated)]

use batch_alloc::batch_alloc;

#[batch_alloc(per_site)]
fn squares(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Box::new(i * i));
    }
    out
}

struct Builder;

#[batch_alloc(boxes, quiet)]
impl Builder {
    fn cubes(n: u64) -> Vec<Box<u64>> {
        let mut out = Vec::new();
        for i in 0..n {
            out.push(Box::new(i * i * i));
        }
        out
    }
}

fn main() {
    let _ = squares(3);
    let _ = Builder::cubes(3);
}
