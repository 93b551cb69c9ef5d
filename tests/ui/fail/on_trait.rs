use batch_alloc::batch_alloc;

#[batch_alloc]
trait Build {
    fn build(&self, n: u64) -> Vec<Box<u64>> {
        (0..n).map(Box::new).collect()
    }
}

struct Builder;

impl Build for Builder {}

fn main() {
    assert_eq!(Builder.build(2).len(), 2);
}
