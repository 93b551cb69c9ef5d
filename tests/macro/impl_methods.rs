//! Methods of an annotated `impl` block. Where the method can name itself
//! (`Self::name`, or `<Self as Trait>::name` in a trait impl), its body
//! stays as written and a first line opens the scope and calls the method
//! again inside it when none is open; elsewhere (a pattern parameter, an
//! `impl Trait` parameter of a generic method, an `impl Trait` return) the
//! body becomes a closure as for a free function. Either way every method
//! opens the scope where none is open, serves what it allocates, returns
//! what it returned as written, and leaves no scope behind, however it
//! returns.

use std::fmt::Debug;
use std::panic::catch_unwind;
use std::pin::Pin;

use batch_alloc::__private::scope_on_this_thread;
use batch_alloc::{batch_alloc, Capture};

use crate::return_types::opened_by;
use workloads::testing::with_capture;

/// Sums `0..n` through boxes, so that no method is a leaf; annotated, so
/// that its boxes count as served inside a method's scope.
#[batch_alloc]
fn boxed_sum(n: u64) -> u64 {
    (0..n).map(|i| *Box::new(i)).sum()
}

/// A counter whose methods each box something and report whether the
/// scope was open inside them.
#[derive(Debug, Default)]
struct Counter {
    total: u64,
}

/// A trait whose method has the same name as an inherent one of
/// `Counter`: the trait impl must call its own, not the inherent one.
trait Add {
    fn add(&mut self, n: u64) -> (u64, Option<bool>);
}

#[batch_alloc]
impl Counter {
    fn add(&mut self, n: u64) -> (u64, Option<bool>) {
        // The inherent one adds twice as much, so that calling the wrong
        // one shows.
        self.total += 2 * boxed_sum(n);
        (self.total, scope_on_this_thread())
    }

    fn new_with(n: u64) -> Counter {
        Counter {
            total: boxed_sum(n),
        }
    }

    fn into_total(self) -> u64 {
        let mut total = self.total;
        for i in 0..2 {
            total += *Box::new(i);
        }
        total
    }

    fn boxed_total(self: Box<Self>) -> u64 {
        self.total + boxed_sum(1)
    }

    fn pinned(self: Pin<&mut Self>) -> u64 {
        self.total + boxed_sum(2)
    }

    fn generic<T: Debug + Clone, const N: usize>(&self, item: T) -> Vec<T> {
        let mut out = Vec::new();
        for _ in 0..N {
            out.push(*Box::new(item.clone()));
        }
        out
    }

    fn pattern_param(&self, (a, b): (u64, u64)) -> u64 {
        boxed_sum(a) + boxed_sum(b)
    }

    fn impl_trait_param<T: Into<u64>>(&self, n: T, extra: impl Into<u64>) -> u64 {
        boxed_sum(n.into()) + extra.into()
    }

    fn impl_trait_return(&self, n: u64) -> impl Iterator<Item = u64> {
        (0..n).map(|i| *Box::new(i)).collect::<Vec<_>>().into_iter()
    }

    fn result(&self, text: &str) -> Result<u64, std::num::ParseIntError> {
        let n: u64 = text.parse()?;
        Ok(boxed_sum(n))
    }

    fn panics(&self, n: u64) -> u64 {
        let sum = boxed_sum(n);
        if sum > 0 {
            panic!("sum {sum}");
        }
        sum
    }

    fn recursive(&self, depth: u64) -> u64 {
        match depth {
            0 => *Box::new(0),
            _ => 1 + self.recursive(depth - 1),
        }
    }
}

/// A trait whose implementation is more general than its signature: a
/// bound the trait requires and the method leaves out, a `&str` where the
/// trait says `&'static str`, an `impl Trait` parameter without the
/// trait's `Send`. The method cannot be called through the
/// trait with its own arguments, so it keeps the closure.
trait Named {
    fn label<T: Debug>(&self, item: T) -> String;
    fn measure(&self, name: &'static str) -> usize;
    fn count(&self, items: impl Iterator<Item = u64> + Send) -> u64;
}

#[batch_alloc]
impl Named for Counter {
    fn label<T>(&self, _item: T) -> String {
        let mut out = String::new();
        for _ in 0..2 {
            out.push(*Box::new('x'));
        }
        out
    }

    fn measure(&self, name: &str) -> usize {
        boxed_sum(2) as usize + name.len()
    }

    fn count(&self, items: impl Iterator<Item = u64>) -> u64 {
        items.map(|i| *Box::new(i)).sum()
    }
}

#[batch_alloc]
impl Add for Counter {
    fn add(&mut self, n: u64) -> (u64, Option<bool>) {
        self.total += boxed_sum(n);
        (self.total, scope_on_this_thread())
    }
}

#[test]
fn each_method_opens_the_scope_and_calls_the_method_it_is() {
    with_capture(Capture::Boxes, || {
        let mut counter = Counter::default();
        let ((total, inside), served) = opened_by(|| counter.add(3));
        assert_eq!((total, inside, served), (6, Some(false), 3));
        let ((total, inside), served) = opened_by(|| Add::add(&mut counter, 3));
        assert_eq!(
            (total, inside, served),
            (9, Some(false), 3),
            "the trait's method, not the inherent one of the same name"
        );

        let (made, served) = opened_by(|| Counter::new_with(4));
        assert_eq!((made.total, served), (6, 4));
        assert_eq!(opened_by(|| made.into_total()), (7, 2));
        let boxed = Box::new(Counter { total: 5 });
        assert_eq!(opened_by(|| boxed.boxed_total()), (5, 1));
        let mut pinned = Counter { total: 1 };
        assert_eq!(opened_by(|| Pin::new(&mut pinned).pinned()), (2, 2));

        let (items, served) = opened_by(|| counter.generic::<&str, 3>("x"));
        assert_eq!((items, served), (vec!["x"; 3], 3));
        assert_eq!(opened_by(|| counter.pattern_param((2, 3))), (4, 5));
        assert_eq!(opened_by(|| counter.impl_trait_param(3u8, 7u32)), (10, 3));
        let (evens, served) = opened_by(|| counter.impl_trait_return(3).sum::<u64>());
        assert_eq!((evens, served), (3, 3));

        assert_eq!(opened_by(|| counter.result("4")), (Ok(6), 4));
        assert!(opened_by(|| counter.result("x")).0.is_err());
        assert_eq!(opened_by(|| counter.recursive(5)), (5, 1));

        assert_eq!(opened_by(|| counter.label(1u8)), ("xx".to_string(), 2));
        assert_eq!(opened_by(|| counter.measure("abc")), (4, 2));
        assert_eq!(opened_by(|| counter.count(0..4)), (6, 4));
    });
}

#[test]
fn a_method_that_unwinds_closes_the_scope_it_opened() {
    with_capture(Capture::Boxes, || {
        let counter = Counter::default();
        assert_eq!(scope_on_this_thread(), None);
        assert!(catch_unwind(|| counter.panics(3)).is_err());
        assert_eq!(scope_on_this_thread(), None, "closed by the unwinding");
    });
}
