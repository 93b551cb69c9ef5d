// A tail and an early `return` of the wrong type: the error points at
// the value, and a label at the return type it was expected because of.
#[batch_alloc::batch_alloc]
fn name() -> String {
    "name"
}
#[batch_alloc::batch_alloc]
async fn name_async() -> String {
    "name"
}
#[batch_alloc::batch_alloc]
fn early(flag: bool) -> u64 {
    if flag {
        return "early";
    }
    1
}
#[batch_alloc::batch_alloc]
async fn early_async(flag: bool) -> u64 {
    if flag {
        return "early";
    }
    1
}

fn main() {}
