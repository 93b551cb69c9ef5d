//! An annotated function's body runs as a closure whose return type is the
//! function's, named in the call: every `return`, `?` and coercion in the
//! body means what it meant as written (`Box<dyn Trait>` from several
//! concrete boxes, `?` into `Box<dyn Error>`, references tied to `self`,
//! a return type inferred at the call site). Functions whose return type
//! cannot be named there (`impl Trait`, `!`), `#[track_caller]` and `unsafe`
//! ones take the guard instead, with the same scope. Each runs where no scope is open,
//! so it opens one, and the scope is closed after it, however it returns.

use std::error::Error;
use std::panic::{catch_unwind, Location};

use batch_alloc::__private::scope_on_this_thread;
use batch_alloc::{batch_alloc, stats, Capture};

use workloads::testing::with_capture;

trait Shape {
    fn area(&self) -> u64;
}

struct Square(u64);
struct Line(u64);

const LINE_WIDTH: u64 = 0;

impl Shape for Square {
    fn area(&self) -> u64 {
        self.0 * self.0
    }
}

impl Shape for Line {
    fn area(&self) -> u64 {
        LINE_WIDTH * self.0
    }
}

/// Sums `0..n` through boxes, so that every function has a loop that
/// allocates (no leaf) and the scope has something to serve.
#[batch_alloc]
fn boxed_sum(n: u64) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        sum += *Box::new(i);
    }
    sum
}

#[batch_alloc]
fn shape(square: bool, n: u64) -> Box<dyn Shape> {
    let mut side = 0;
    for i in 0..n {
        side += *Box::new(i);
    }
    if square {
        return Box::new(Square(side));
    }
    Box::new(Line(side))
}

#[batch_alloc]
fn parse_sum(text: &str) -> Result<u64, Box<dyn Error>> {
    let mut sum = 0;
    for part in text.split(',') {
        sum += *Box::new(part.trim().parse::<u64>()?);
    }
    if sum == 0 {
        return Err("nothing to add".into());
    }
    Ok(sum)
}

struct Words {
    words: Vec<String>,
}

impl Words {
    #[batch_alloc]
    fn longest(&self) -> &str {
        let mut best = "";
        for word in &self.words {
            if word.len() > best.len() {
                best = word;
            }
        }
        best
    }

    #[batch_alloc]
    fn last_mut(&mut self) -> &mut String {
        let mut n = 0;
        for _ in &self.words {
            n += *Box::new(1);
        }
        &mut self.words[n - 1]
    }
}

#[batch_alloc]
fn collected<C: FromIterator<u64>>(n: u64) -> C {
    let mut v = Vec::new();
    for i in 0..n {
        v.push(*Box::new(i));
    }
    v.into_iter().collect()
}

#[batch_alloc]
fn evens(n: u64) -> impl Iterator<Item = u64> {
    let mut v = Vec::new();
    for i in 0..n {
        v.push(*Box::new(2 * i));
    }
    v.into_iter()
}

#[batch_alloc]
#[track_caller]
fn located(n: u64) -> (u64, &'static Location<'static>) {
    (boxed_sum(n), Location::caller())
}

#[batch_alloc]
fn never_returns(n: u64) -> ! {
    let mut boxes = Vec::new();
    for i in 0..n {
        boxes.push(Box::new(i));
    }
    panic!("{} boxes", boxes.len())
}

#[batch_alloc]
fn panics_in_body(n: u64) -> u64 {
    let sum = boxed_sum(n);
    if sum > 0 {
        panic!("sum {sum}");
    }
    sum
}

/// # Safety
/// `p` points to `n` readable `u64`s.
#[batch_alloc]
unsafe fn read_all(p: *const u64, n: usize) -> u64 {
    let mut sum = 0;
    for i in 0..n {
        // SAFETY: `i < n` (the caller's contract).
        sum += *Box::new(unsafe { *p.add(i) });
    }
    sum
}

/// Runs `f` where no scope is open, checks that none is open after it, and
/// returns what it returned and the allocations its scope served. Also the
/// method tests' (`impl_methods`).
pub(crate) fn opened_by<R>(f: impl FnOnce() -> R) -> (R, u64) {
    assert_eq!(scope_on_this_thread(), None);
    let before = stats().scoped_allocations;
    let out = f();
    assert_eq!(
        scope_on_this_thread(),
        None,
        "the scope outlived its function or method"
    );
    (out, stats().scoped_allocations - before)
}

#[test]
fn returns_coerce_convert_and_borrow_as_written() {
    with_capture(Capture::Boxes, || {
        let (area, served) = opened_by(|| shape(true, 4).area());
        assert_eq!((area, served), (36, 5));
        assert_eq!(opened_by(|| shape(false, 4).area()).0, 0);

        let (sum, served) = opened_by(|| parse_sum("1, 2, 3").unwrap());
        assert_eq!((sum, served), (6, 3));
        let error = opened_by(|| parse_sum("1, x").unwrap_err().to_string()).0;
        assert_eq!(error, "invalid digit found in string");
        let error = opened_by(|| parse_sum("0").unwrap_err().to_string()).0;
        assert_eq!(error, "nothing to add");

        let mut words = Words {
            words: vec!["a".into(), "three".into(), "be".into()],
        };
        assert_eq!(opened_by(|| words.longest().to_owned()).0, "three");
        opened_by(|| words.last_mut().push('e'));
        assert_eq!(words.words[2], "bee");

        let (v, served) = opened_by(|| collected::<Vec<u64>>(5));
        assert_eq!((v, served), (vec![0, 1, 2, 3, 4], 5));
        let set: std::collections::BTreeSet<u64> = opened_by(|| collected(3)).0;
        assert_eq!(set.len(), 3);

        let data = [1u64, 2, 3];
        // SAFETY: `data` has three `u64`s.
        let (sum, served) = opened_by(|| unsafe { read_all(data.as_ptr(), data.len()) });
        assert_eq!((sum, served), (6, 3));
    });
}

#[test]
fn unnameable_returns_and_track_caller_keep_the_guard() {
    with_capture(Capture::Boxes, || {
        let (v, served) = opened_by(|| evens(4).collect::<Vec<_>>());
        assert_eq!((v, served), (vec![0, 2, 4, 6], 4));

        let (((sum, at), served), line) = (opened_by(|| located(3)), line!());
        assert_eq!((sum, served), (3, 3));
        assert_eq!((at.file(), at.line()), (file!(), line), "the caller's line");

        let payload = opened_by(|| catch_unwind(|| never_returns(3)).unwrap_err());
        assert_eq!(payload.0.downcast_ref::<String>().unwrap(), "3 boxes");
    });
}

#[test]
fn a_body_that_unwinds_closes_the_scope_it_opened() {
    with_capture(Capture::Boxes, || {
        let (caught, served) = opened_by(|| catch_unwind(|| panics_in_body(3)));
        assert!(caught.is_err());
        assert_eq!(served, 3);
    });
}
