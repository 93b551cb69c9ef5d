//! The matrix (matrix/mod.rs) on jemalloc.

mod matrix;

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    matrix::main(matrix::Allocator::Jemalloc);
}
