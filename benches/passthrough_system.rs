//! Plain allocations under `System`: the baseline for `passthrough_wrapped`.

mod passthrough;

#[global_allocator]
static GLOBAL: std::alloc::System = std::alloc::System;

fn main() {
    passthrough::run("system");
}
