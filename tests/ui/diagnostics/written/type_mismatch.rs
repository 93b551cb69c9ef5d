// A value of the wrong type for a local, and for an argument.

fn count_words(text: &str) -> usize {
    let count: u32 = "three";
    text.split(' ').count() + count as usize
}

async fn count_words_async(text: &str) -> usize {
    let count: u32 = "three";
    text.split(' ').count() + count as usize
}

fn takes_number(n: u64) -> u64 {
    n
}

fn passes_text(text: &str) -> u64 {
    takes_number(text)
}

async fn passes_text_async(text: &str) -> u64 {
    takes_number(text)
}

fn main() {}
