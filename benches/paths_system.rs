//! Instructions per box (gungraun) on System, the allocator BatchAlloc<System> wraps: see paths/mod.rs.

#[macro_use]
mod paths;

#[global_allocator]
static GLOBAL: std::alloc::System = std::alloc::System;

paths_main!();
