// An unknown argument is an error on a function, on an impl block, and on
// a method's own attribute inside an annotated impl block (which the
// block's attribute covers, but whose arguments are still checked).
use batch_alloc::batch_alloc;

#[batch_alloc(quiet)]
fn boxes(n: u64) -> Vec<Box<u64>> {
    (0..n).map(Box::new).collect()
}

struct Words;

#[batch_alloc(nested)]
impl Words {
    fn one(&self) -> String {
        String::from("one")
    }
}

struct Numbers;

#[batch_alloc]
impl Numbers {
    #[batch_alloc(typo)]
    fn two(&self) -> Vec<u64> {
        vec![2]
    }
}

fn main() {
    assert_eq!(boxes(3).len(), 3);
    assert_eq!(Words.one(), "one");
    assert_eq!(Numbers.two(), [2]);
}
