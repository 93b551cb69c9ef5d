//! The matrix (matrix/mod.rs) on `BatchAlloc<System>`.

mod matrix;

#[global_allocator]
static GLOBAL: batch_alloc::BatchAlloc = batch_alloc::BatchAlloc::system();

fn main() {
    matrix::main(matrix::Allocator::BatchSystem);
}
