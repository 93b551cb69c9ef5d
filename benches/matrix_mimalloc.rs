//! The matrix (matrix/mod.rs) on mimalloc.

mod matrix;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    matrix::main(matrix::Allocator::Mimalloc);
}
