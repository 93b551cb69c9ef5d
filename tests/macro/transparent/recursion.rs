// The recursions of the stack test (`stack.rs`), included and annotated
// as `corpus.rs` is: a recursive-descent parser's shape (read a byte, go
// down, build a node from what came back), with settings passed down to
// each level and read after the call: an array of 1 to 64 words, by value
// or by reference. A free function, a method and a trait method; the
// deepest level notes where the stack is.

use std::slice::Iter;

use crate::support::{mark_stack, Expr, Settings};

pub fn descend<C: Settings>(depth: u32, input: &mut Iter<'_, u8>, settings: C) -> Box<Expr> {
    let byte = input.next().copied().unwrap_or(0);
    if depth == 0 {
        mark_stack();
        return Box::new(Expr::Number(u64::from(byte) + settings.first()));
    }
    let left = descend(depth - 1, input, settings);
    let label = format!("level {depth}");
    if byte % 2 == 0 {
        Box::new(Expr::Named(label, left))
    } else {
        Box::new(Expr::Add(left, Box::new(Expr::Number(settings.last()))))
    }
}

pub struct Parser<'a> {
    pub input: Iter<'a, u8>,
    pub nodes: usize,
}

impl Parser<'_> {
    pub fn descend<C: Settings>(&mut self, depth: u32, settings: C) -> Box<Expr> {
        let byte = self.input.next().copied().unwrap_or(0);
        self.nodes += 1;
        if depth == 0 {
            mark_stack();
            return Box::new(Expr::Number(u64::from(byte) + settings.first()));
        }
        let left = self.descend(depth - 1, settings);
        let label = format!("level {depth}");
        if byte % 2 == 0 {
            Box::new(Expr::Named(label, left))
        } else {
            Box::new(Expr::Add(left, Box::new(Expr::Number(settings.last()))))
        }
    }
}

pub trait Descend {
    fn descend_by_trait<C: Settings>(&mut self, depth: u32, settings: C) -> Box<Expr>;
}

impl Descend for Parser<'_> {
    fn descend_by_trait<C: Settings>(&mut self, depth: u32, settings: C) -> Box<Expr> {
        let byte = self.input.next().copied().unwrap_or(0);
        self.nodes += 1;
        if depth == 0 {
            mark_stack();
            return Box::new(Expr::Number(u64::from(byte) + settings.first()));
        }
        let left = self.descend_by_trait(depth - 1, settings);
        let label = format!("level {depth}");
        if byte % 2 == 0 {
            Box::new(Expr::Named(label, left))
        } else {
            Box::new(Expr::Add(left, Box::new(Expr::Number(settings.last()))))
        }
    }
}

/// A value of N bytes, boxed: made on the stack as written in a debug
/// build, then moved into the box (the stack test's large boxes).
pub fn boxed<const N: usize>(fill: u8) -> Box<[u8; N]> {
    Box::new([fill; N])
}
