//! Instructions per box (gungraun) on mimalloc, the allocator BatchAlloc<MiMalloc> wraps: see paths/mod.rs.

#[macro_use]
mod paths;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

paths_main!();
