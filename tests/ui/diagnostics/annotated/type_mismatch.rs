// A value of the wrong type for a local, and for an argument.
#[batch_alloc::batch_alloc]
fn count_words(text: &str) -> usize {
    let count: u32 = "three";
    text.split(' ').count() + count as usize
}
#[batch_alloc::batch_alloc]
async fn count_words_async(text: &str) -> usize {
    let count: u32 = "three";
    text.split(' ').count() + count as usize
}
#[batch_alloc::batch_alloc]
fn takes_number(n: u64) -> u64 {
    n
}
#[batch_alloc::batch_alloc]
fn passes_text(text: &str) -> u64 {
    takes_number(text)
}
#[batch_alloc::batch_alloc]
async fn passes_text_async(text: &str) -> u64 {
    takes_number(text)
}

fn main() {}
