// The cases of `edition_2024.rs`, included unannotated beside each copy
// of it in the 2024 crate.

pub fn cases() -> Vec<crate::support::Case> {
    vec![
        (
            "tail_borrows_local",
            Box::new(|| {
                event(format!("-> {}", tail_borrows_local(vec![D("v0"), D("v1")])));
                let n = crate::support::block_on(tail_borrows_local_async(vec![D("w")]));
                event(format!("-> {n}"));
                let cells = Cells {
                    cell: RefCell::new(vec![D("c")]),
                };
                event(format!("-> {}", cells.tail_borrows_field()));
            }),
        ),
        (
            "tail_temporary_before_local",
            Box::new(|| event(format!("-> {}", tail_temporary_before_local(D("a"))))),
        ),
    ]
}
