//! The matrix (matrix/mod.rs) on glibc, with the arenas and the `Vec` limit.

mod matrix;

#[global_allocator]
static GLOBAL: std::alloc::System = std::alloc::System;

fn main() {
    matrix::main(matrix::Allocator::System);
}
