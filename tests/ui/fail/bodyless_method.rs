use batch_alloc::batch_alloc;

trait Build {
    #[batch_alloc]
    fn build(&self, n: u64) -> Vec<Box<u64>>;
}

struct Builder;

impl Build for Builder {
    fn build(&self, n: u64) -> Vec<Box<u64>> {
        (0..n).map(Box::new).collect()
    }
}

fn main() {
    assert_eq!(Builder.build(2).len(), 2);
}
