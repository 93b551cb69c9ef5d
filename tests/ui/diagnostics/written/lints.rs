// Warnings the user denied: an unused variable and a needless `mut`, in
// a crate that also exports a small function under its own name.
#![deny(warnings)]

fn unused(items: Vec<u64>) -> usize {
    let extra = items.len();
    items.len()
}

async fn needless_mut(mut items: Vec<u64>) -> usize {
    items.len()
}

#[no_mangle]
pub extern "C" fn exported() -> u32 {
    7
}

fn main() {}
