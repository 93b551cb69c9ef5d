//! Instructions per box (gungraun) on BatchAlloc<System>, every case: see paths/mod.rs.

#[macro_use]
mod paths;

#[global_allocator]
static GLOBAL: batch_alloc::BatchAlloc = batch_alloc::BatchAlloc::system();

paths_main!(all);
