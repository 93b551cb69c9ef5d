//! The ways of making `N` objects that the suite compares.
//!
//! Every strategy makes the same values (`[i; K]` words, `i` through
//! `black_box`) and keeps a pointer to each object in a `Vec` made once,
//! outside the timed code, as a program keeps what it allocates; the `Vec`
//! limit stores the objects themselves. Each strategy is told `N` in advance
//! where its API takes a size: the batch's trip-count hint,
//! `Vec::with_capacity`, `Arena::with_capacity`, `Bump::with_capacity`.

use std::hint::black_box;
use std::mem::{size_of, MaybeUninit};

use batch_alloc::batch_alloc;
use bumpalo::Bump;

/// An object the suite allocates: `K` words, made from a counter.
pub trait Item: Copy + PartialEq + Send + 'static {
    fn make(i: u64) -> Self;
}

impl<const K: usize> Item for [u64; K] {
    #[inline(always)]
    fn make(i: u64) -> Self {
        [i; K]
    }
}

pub type T16 = [u64; 2];
pub type T64 = [u64; 8];
pub type T256 = [u64; 32];

/// One way of allocating `N` objects and releasing them.
///
/// A value of the strategy is made once per bench with room for `N` objects
/// (outside the timed code); `fill` allocates `N` objects and keeps them
/// alive, `release` drops all of them. Values are `Send`, so that the objects
/// can be released on another thread.
pub trait Strategy<T: Item>: Send + 'static {
    fn new(n: usize) -> Self;
    fn fill(&mut self, n: usize);
    fn release(&mut self);
}

/// A `Vec` with room for `n` elements whose pages are resident already, so
/// that memory measurements see the objects and not the list of them.
pub fn resident_vec<X>(n: usize) -> Vec<X> {
    let mut v = Vec::with_capacity(n);
    for slot in v.spare_capacity_mut() {
        *slot = MaybeUninit::zeroed();
    }
    v
}

/// `Box::new` per item, on whatever the global allocator is.
pub struct Boxes<T> {
    held: Vec<Box<T>>,
}

impl<T: Item> Strategy<T> for Boxes<T> {
    fn new(n: usize) -> Self {
        Boxes {
            held: resident_vec(n),
        }
    }

    #[inline(never)]
    fn fill(&mut self, n: usize) {
        fill_boxes(&mut self.held, n);
    }

    #[inline(never)]
    fn release(&mut self) {
        self.held.clear();
    }
}

/// The loop as written, without the attribute.
#[inline(always)]
pub fn fill_boxes<T: Item>(held: &mut Vec<Box<T>>, n: usize) {
    for i in 0..n as u64 {
        held.push(Box::new(T::make(black_box(i))));
    }
}

/// The same loop under `#[batch_alloc]`: what a user writes.
pub struct Batched<T> {
    held: Vec<Box<T>>,
}

impl<T: Item> Strategy<T> for Batched<T> {
    fn new(n: usize) -> Self {
        Batched {
            held: resident_vec(n),
        }
    }

    #[inline(never)]
    fn fill(&mut self, n: usize) {
        fill_batched(&mut self.held, n);
    }

    #[inline(never)]
    fn release(&mut self) {
        self.held.clear();
    }
}

/// The loop of [`fill_boxes`], batched by the attribute.
#[batch_alloc]
#[inline(always)]
pub fn fill_batched<T: Item>(held: &mut Vec<Box<T>>, n: usize) {
    for i in 0..n as u64 {
        held.push(Box::new(T::make(black_box(i))));
    }
}

/// A `Batch<T>` per loop, told `N`: the typed run of `T`'s class.
pub struct Typed<T> {
    held: Vec<Box<T>>,
}

impl<T: Item> Strategy<T> for Typed<T> {
    fn new(n: usize) -> Self {
        Typed {
            held: resident_vec(n),
        }
    }

    #[inline(never)]
    fn fill(&mut self, n: usize) {
        let mut batch = batch_alloc::Batch::with_capacity(n);
        for i in 0..n as u64 {
            self.held.push(batch.alloc(T::make(black_box(i))));
        }
    }

    #[inline(never)]
    fn release(&mut self) {
        self.held.clear();
    }
}

/// The limit: all `N` objects in one allocation.
pub struct Limit<T> {
    held: Vec<T>,
}

impl<T: Item> Strategy<T> for Limit<T> {
    fn new(_n: usize) -> Self {
        Limit { held: Vec::new() }
    }

    #[inline(never)]
    fn fill(&mut self, n: usize) {
        let mut all = Vec::with_capacity(n);
        for i in 0..n as u64 {
            all.push(T::make(black_box(i)));
        }
        self.held = all;
    }

    #[inline(never)]
    fn release(&mut self) {
        self.held = Vec::new();
    }
}

/// bumpalo, one arena per loop, sized for the loop: the arena's lifetime is
/// the batch's. Objects cannot be freed one by one; dropping the arena frees
/// them all. The addresses are kept as integers, which is all the suite
/// needs of them and keeps the strategy `Send` without `unsafe`.
pub struct BumpFresh<T> {
    bump: Option<Bump>,
    held: Vec<usize>,
    _items: std::marker::PhantomData<T>,
}

impl<T: Item> Strategy<T> for BumpFresh<T> {
    fn new(n: usize) -> Self {
        BumpFresh {
            bump: None,
            held: resident_vec(n),
            _items: std::marker::PhantomData,
        }
    }

    #[inline(never)]
    fn fill(&mut self, n: usize) {
        let bump = Bump::with_capacity(n * size_of::<T>());
        for i in 0..n as u64 {
            let object: &mut T = bump.alloc(T::make(black_box(i)));
            self.held.push((object as *mut T).addr());
        }
        self.bump = Some(bump);
    }

    #[inline(never)]
    fn release(&mut self) {
        self.held.clear();
        self.bump = None;
    }
}

/// bumpalo at its best: one arena reused for every loop, `reset` between
/// them, so that after the first loop no allocation reaches the allocator.
pub struct BumpReset<T> {
    bump: Bump,
    held: Vec<usize>,
    _items: std::marker::PhantomData<T>,
}

impl<T: Item> Strategy<T> for BumpReset<T> {
    fn new(n: usize) -> Self {
        BumpReset {
            bump: Bump::new(),
            held: resident_vec(n),
            _items: std::marker::PhantomData,
        }
    }

    #[inline(never)]
    fn fill(&mut self, n: usize) {
        for i in 0..n as u64 {
            let object: &mut T = self.bump.alloc(T::make(black_box(i)));
            self.held.push((object as *mut T).addr());
        }
    }

    #[inline(never)]
    fn release(&mut self) {
        self.held.clear();
        self.bump.reset();
    }
}

/// typed-arena, one arena per loop, sized for the loop.
pub struct TypedArena<T> {
    arena: Option<typed_arena::Arena<T>>,
    held: Vec<usize>,
}

impl<T: Item> Strategy<T> for TypedArena<T> {
    fn new(n: usize) -> Self {
        TypedArena {
            arena: None,
            held: resident_vec(n),
        }
    }

    #[inline(never)]
    fn fill(&mut self, n: usize) {
        let arena = typed_arena::Arena::with_capacity(n);
        for i in 0..n as u64 {
            let object: &mut T = arena.alloc(T::make(black_box(i)));
            self.held.push((object as *mut T).addr());
        }
        self.arena = Some(arena);
    }

    #[inline(never)]
    fn release(&mut self) {
        self.held.clear();
        self.arena = None;
    }
}
