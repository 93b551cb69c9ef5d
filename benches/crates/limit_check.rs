//! A check of the limit's allocator (workloads/limit.rs), run by
//! benches/crates/crates.py before the limit builds are timed, once for
//! each setting of its switches: random allocations of 1 B to 3 KB aligned
//! to 1 B to 4 KiB, freed and reallocated at random (grown at the top, grown
//! elsewhere, shrunk), their bytes checked; a 2 MiB-aligned block and its
//! reallocation; a request larger than the region; four rounds with a
//! reset after each; a survivor, which must make the reset refuse; a
//! thread of its own (served by the system allocator).

#[global_allocator]
static GLOBAL: limit::Limit = limit::Limit;
pub mod limit {
    // BY_CLASS, HUGE_PAGES and REUSE, written by crates.py.
    include!("switches.rs");
    include!("limit.rs");
}
use std::alloc::{alloc, dealloc, realloc, Layout};
fn fill(p: *mut u8, n: usize, seed: u8) {
    for i in 0..n {
        unsafe { *p.add(i) = seed.wrapping_add(i as u8) }
    }
}
fn check(p: *const u8, n: usize, seed: u8) {
    for i in 0..n {
        assert_eq!(unsafe { *p.add(i) }, seed.wrapping_add(i as u8), "byte {i}")
    }
}
fn round() -> usize {
    let mut keep: Vec<(usize, Layout, u8)> = Vec::with_capacity(20000);
    let mut x: u64 = 12345;
    for i in 0..20000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let size = 1 + (x % 3000) as usize;
        let align = 1usize << (x >> 40) % 13; // up to 4096
        let l = Layout::from_size_align(size, align).unwrap();
        let p = unsafe { alloc(l) };
        assert!(!p.is_null());
        assert_eq!(p as usize % align, 0);
        let seed = i as u8;
        fill(p, size, seed);
        keep.push((p as usize, l, seed));
        if x % 3 == 0 {
            let (q, l, s) = keep.swap_remove((x as usize / 7) % keep.len());
            check(q as *const u8, l.size(), s);
            unsafe { dealloc(q as *mut u8, l) };
        } else if x % 5 == 0 {
            let k = (x as usize / 11) % keep.len();
            let (q, l, s) = keep[k];
            let new = 1 + (x as usize / 13) % 6000;
            let r = unsafe { realloc(q as *mut u8, l, new) };
            assert!(!r.is_null());
            assert_eq!(r as usize % l.align(), 0);
            check(r, l.size().min(new), s);
            fill(r, new, s);
            keep[k] = (
                r as usize,
                Layout::from_size_align(new, l.align()).unwrap(),
                s,
            );
        }
    }
    // Over-aligned and huge.
    let big = Layout::from_size_align(3 << 20, 2 << 20).unwrap();
    let p = unsafe { alloc(big) };
    assert!(!p.is_null() && p as usize % (2 << 20) == 0);
    fill(p, 3 << 20, 7);
    let q = unsafe { realloc(p, big, 5 << 20) };
    check(q, 3 << 20, 7);
    unsafe { dealloc(q, Layout::from_size_align(5 << 20, 2 << 20).unwrap()) };
    let huge = Layout::from_size_align(100usize << 30, 8).unwrap();
    let h = unsafe { alloc(huge) }; // past the region: the system's (null is allowed)
    if !h.is_null() {
        unsafe { dealloc(h, huge) }
    }
    let n = keep.len();
    for (q, l, s) in keep.drain(..) {
        check(q as *const u8, l.size(), s);
        unsafe { dealloc(q as *mut u8, l) }
    }
    n
}
fn main() {
    limit::begin();
    for _ in 0..4 {
        let n = round();
        std::hint::black_box(n);
        limit::settle();
    }
    // A survivor: the next settle must refuse, not reset over it.
    let survivor = Box::new([9u8; 64]);
    let v: Vec<u8> = vec![1; 100];
    drop(v);
    limit::settle();
    let r = limit::report();
    assert!(
        r.contains("\"resets\":3,\"refused\":1,"),
        "three resets after the warm-up round, then one refused: {r}"
    );
    assert_eq!(*survivor, [9u8; 64]);
    let t = std::thread::spawn(|| {
        let v = vec![5u8; 1000];
        v.iter().map(|&b| b as u32).sum::<u32>()
    })
    .join()
    .unwrap();
    assert_eq!(t, 5000);
    println!("{r}");
}
