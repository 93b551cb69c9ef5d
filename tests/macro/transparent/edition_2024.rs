// Functions valid only in edition 2024, added to the corpus of that
// edition's crate (edition2024/lib.rs) and annotated as `corpus.rs` is.
//
// A tail expression's temporaries drop before the block's locals in
// 2024, so a tail may borrow a local through a temporary: as a 2021 tail,
// `cell.borrow()` would outlive `cell` (E0597).

use std::cell::RefCell;

use crate::support::{busy, event, temp, yield_now, D};

pub fn tail_borrows_local(v: Vec<D>) -> usize {
    busy();
    let cell = RefCell::new(v);
    cell.borrow().len()
}

pub async fn tail_borrows_local_async(v: Vec<D>) -> usize {
    busy();
    yield_now().await;
    let cell = RefCell::new(v);
    cell.borrow().len()
}

pub struct Cells {
    pub cell: RefCell<Vec<D>>,
}

impl Cells {
    pub fn tail_borrows_field(self) -> usize {
        busy();
        let cell = self.cell;
        cell.borrow().len()
    }
}

/// A tail's temporary that drops before a local: the order is what 2024
/// changed.
pub fn tail_temporary_before_local(a: D) -> usize {
    busy();
    let local = D("local");
    let guard = RefCell::new(temp("in cell"));
    event(format!("has {}", local.0));
    guard.borrow().0.len() + temp("tail").0.len() + a.0.len()
}
