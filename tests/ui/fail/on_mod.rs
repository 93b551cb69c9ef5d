use batch_alloc::batch_alloc;

#[batch_alloc]
mod loops {
    pub fn boxes(n: u64) -> Vec<Box<u64>> {
        let mut out = Vec::new();
        for i in 0..n {
            out.push(Box::new(i));
        }
        out
    }
}

fn main() {
    assert_eq!(loops::boxes(3).len(), 3);
}
