//! The matrix (matrix/mod.rs) on `BatchAlloc<MiMalloc>`.

mod matrix;

#[global_allocator]
static GLOBAL: batch_alloc::BatchAlloc<mimalloc::MiMalloc> =
    batch_alloc::BatchAlloc::new(mimalloc::MiMalloc);

fn main() {
    matrix::main(matrix::Allocator::BatchMimalloc);
}
