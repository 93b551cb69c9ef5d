// The attribute's one argument, `crate = path` (as a path or a string, as
// serde's and tokio's attributes take it), on a function, an impl block and
// a method inside an annotated block, naming the facade through a module
// that re-exports it.
#![forbid(unsafe_code)]
#![deny(warnings)]

mod reexport {
    pub use batch_alloc::*;
}

#[reexport::batch_alloc(crate = reexport)]
fn by_path(n: u64) -> Vec<Box<u64>> {
    (0..n).map(Box::new).collect()
}

#[reexport::batch_alloc(crate = "crate::reexport")]
fn by_string(n: u64) -> Vec<Box<u64>> {
    (0..n).map(Box::new).collect()
}

struct Counter(u64);

#[reexport::batch_alloc(crate = ::batch_alloc)]
impl Counter {
    fn boxes(&self) -> Vec<Box<u64>> {
        (0..self.0).map(Box::new).collect()
    }

    #[batch_alloc::batch_alloc(crate = self::reexport)]
    fn own(&self) -> Box<u64> {
        Box::new(self.0)
    }
}

fn main() {
    assert_eq!(by_path(3).len(), 3);
    assert_eq!(by_string(2).len(), 2);
    assert_eq!(Counter(4).boxes().len(), 4);
    assert_eq!(*Counter(5).own(), 5);
}
