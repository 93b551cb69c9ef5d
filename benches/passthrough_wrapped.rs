//! Plain allocations under `BatchAlloc<System>`: what the wrapper costs for
//! everything it does not batch. Compare with `passthrough_system`.

mod passthrough;

#[global_allocator]
static GLOBAL: batch_alloc::BatchAlloc = batch_alloc::BatchAlloc::system();

fn main() {
    passthrough::run("batch_alloc_system");
}
