// A tail and an early `return` of the wrong type: the error points at
// the value, and a label at the return type it was expected because of.

fn name() -> String {
    "name"
}

async fn name_async() -> String {
    "name"
}

fn early(flag: bool) -> u64 {
    if flag {
        return "early";
    }
    1
}

async fn early_async(flag: bool) -> u64 {
    if flag {
        return "early";
    }
    1
}

fn main() {}
