// The same mistakes in methods of an impl block.

struct Parser {
    words: Vec<String>,
}

impl Parser {
    fn first(&self) -> &str {
        let word = self.words[0].clone();
        &word
    }

    async fn count(&self) -> u32 {
        self.words.len()
    }

    fn consume(self) -> Vec<String> {
        let words = self.words;
        let again = self.words;
        again
    }
}

fn main() {}
