// Every box is a plain `Box<T>`: coercions, `Box::leak`, `Box::into_pin` and
// closure signatures inferred through the box still work.
#![forbid(unsafe_code)]
#![deny(warnings)]

use batch_alloc::batch_alloc;
use std::any::Any;
use std::fmt::Display;
use std::pin::Pin;

#[batch_alloc]
fn coerce(n: u64) -> (Vec<Box<dyn Display>>, Vec<Box<dyn Any>>, Vec<Pin<Box<u64>>>) {
    let mut shown: Vec<Box<dyn Display>> = Vec::new();
    let mut any = Vec::new();
    let mut pinned = Vec::new();
    for i in 0..n {
        shown.push(Box::new(i));
        shown.push(Box::new(format!("#{i}")));
        any.push(Box::new(i) as Box<dyn Any>);
        pinned.push(Box::into_pin(Box::new(i)));
    }
    (shown, any, pinned)
}

#[batch_alloc]
fn closures(n: usize) -> Vec<Box<dyn Fn(&str) -> usize>> {
    let mut out: Vec<Box<dyn Fn(&str) -> usize>> = Vec::new();
    for i in 0..n {
        let f: Box<dyn Fn(&str) -> usize> = Box::new(move |s| s.len() + i);
        out.push(f);
    }
    out
}

#[batch_alloc]
fn leak(n: u64) -> Vec<&'static mut u64> {
    let mut out = Vec::new();
    for i in 0..n {
        out.push(Box::leak(Box::new(i)));
    }
    out
}

#[batch_alloc]
fn borrowing<'a>(words: &'a [String]) -> Vec<Box<&'a str>> {
    let mut out = Vec::new();
    for word in words {
        let local = word.trim();
        out.push(Box::new(local));
        // Boxing a reference to a per-iteration local compiles too.
        let _short = Box::new(&local);
    }
    out
}

fn main() {
    let (shown, any, pinned) = coerce(2);
    let text: Vec<String> = shown.iter().map(|d| d.to_string()).collect();
    assert_eq!(text, ["0", "#0", "1", "#1"]);
    assert_eq!(any[1].downcast_ref::<u64>(), Some(&1));
    assert_eq!(*pinned[1], 1);
    assert_eq!(closures(2)[1]("ab"), 3);
    let mut leaked = leak(2);
    *leaked[0] += 5;
    assert_eq!(*leaked[0], 5);
    let words = vec![" a ".to_string(), "b".to_string()];
    assert_eq!(*borrowing(&words)[0], "a");
}
