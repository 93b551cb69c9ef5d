use batch_alloc::batch_alloc;

#[batch_alloc]
enum Tree {
    Leaf(u64),
    Node(Box<Tree>, Box<Tree>),
}

fn main() {
    let tree = Tree::Node(Box::new(Tree::Leaf(1)), Box::new(Tree::Leaf(2)));
    assert!(matches!(tree, Tree::Node(..)));
}
