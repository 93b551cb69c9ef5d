// A method's own `#[batch_alloc(..)]` inside an annotated impl block is
// checked as on a function: a typo is an error, not dropped.

use batch_alloc::batch_alloc;

struct Parser {
    words: Vec<String>,
}

#[batch_alloc]
impl Parser {
    #[batch_alloc(typo)]
    fn words(&self) -> Vec<Box<str>> {
        self.words.iter().map(|w| Box::from(w.as_str())).collect()
    }
}

fn main() {
    let parser = Parser {
        words: vec!["a".to_string()],
    };
    assert_eq!(parser.words().len(), 1);
}
