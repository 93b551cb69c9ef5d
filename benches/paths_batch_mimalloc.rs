//! Instructions per box (gungraun) on BatchAlloc<MiMalloc>, no scope open: see paths/mod.rs.

#[macro_use]
mod paths;

#[global_allocator]
static GLOBAL: batch_alloc::BatchAlloc<mimalloc::MiMalloc> =
    batch_alloc::BatchAlloc::new(mimalloc::MiMalloc);

paths_main!();
