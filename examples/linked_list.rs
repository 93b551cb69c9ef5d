//! Linked lists built by `while let` loops and dropped on another thread,
//! with and without `#[batch_alloc]`.
//!
//! ```text
//! cargo run --release --example linked_list
//! cargo run --release --example linked_list -- --edges 5000000 --reps 5
//! ```
//!
//! It generates a graph as an edge list in text (`from to` per line), the
//! way graphs are exchanged, and reads it into adjacency lists: one singly
//! linked list of `Box<Edge>` per vertex, each new edge pushed at its
//! list's head, all in one `while let` loop over the scanner's numbers.
//! Then it walks every list (a checksum) and hands the graph to a second
//! thread that drops it: each box is freed on a thread other than the one
//! that made it. Once through the reader as written (`plain`), once
//! under the attribute (`batched`); both graphs must be equal.
//!
//! The lists drop iteratively (a long list dropped recursively would
//! overflow the stack), as linked lists in Rust must.
//!
//! The program is `workloads::linked_list` (`support/workloads/src/
//! linked_list/`: `graph.rs` holds the graph, the reader written out both
//! ways, the generated edge list and the dropping thread), which the tests
//! and benches run too.

#![forbid(unsafe_code)]

use batch_alloc::BatchAlloc;
use workloads::cli;
use workloads::linked_list::{parse_args, run, Dropper, USAGE};

#[global_allocator]
static GLOBAL: BatchAlloc = BatchAlloc::system();

fn main() -> std::process::ExitCode {
    cli::main(USAGE, parse_args, |options| run(options, &Dropper::start()))
}
