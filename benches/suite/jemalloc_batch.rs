//! jemalloc's `experimental.batch_alloc`: the one batch-allocation API a C
//! allocator has shipped (jemalloc 5.3). Included by `suite_jemalloc` alone:
//! the pointers it hands out are jemalloc's, so jemalloc must be the global
//! allocator that frees them, and only that binary links jemalloc at all.
//!
//! The control takes a packet `{ void **ptrs; size_t num; size_t size; int
//! flags; }` through `newp` and returns the number of pointers it wrote,
//! a `size_t`, through `oldp` (`src/ctl.c`, `experimental_batch_alloc_ctl`;
//! `src/jemalloc.c`, `batch_alloc`). Flags are `mallocx` flags; 0 asks for
//! the default alignment, which is what `tikv-jemallocator` frees with for
//! the types here. The name is looked up once (`mallctlnametomib`) and
//! every call goes by the numeric key, the cheapest way in.

use std::ffi::{c_int, c_void, CStr};
use std::hint::black_box;
use std::mem::size_of;
use std::ptr;

use tikv_jemalloc_sys::{mallctl, mallctlbymib, mallctlnametomib};

use crate::suite::strategies::{resident_vec, Item, Strategy};

/// The packet `experimental.batch_alloc` reads.
#[repr(C)]
struct Packet {
    ptrs: *mut *mut c_void,
    num: usize,
    size: usize,
    flags: c_int,
}

/// The control's numeric key.
fn batch_alloc_mib() -> [usize; 2] {
    let mut mib = [0usize; 2];
    let mut len = mib.len();
    let name = c"experimental.batch_alloc";
    // SAFETY: a NUL-terminated name, and a key buffer of `len` entries.
    let rc = unsafe { mallctlnametomib(name.as_ptr(), mib.as_mut_ptr(), &mut len) };
    assert_eq!(
        rc, 0,
        "jemalloc has no experimental.batch_alloc (error {rc})"
    );
    assert_eq!(len, 2);
    mib
}

/// jemalloc's version string.
pub fn version() -> String {
    let mut version: *const std::ffi::c_char = ptr::null();
    let mut len = size_of::<*const std::ffi::c_char>();
    // SAFETY: `version` reads a `const char *` into a buffer of that size.
    let rc = unsafe {
        mallctl(
            c"version".as_ptr(),
            (&mut version as *mut *const std::ffi::c_char).cast(),
            &mut len,
            ptr::null_mut(),
            0,
        )
    };
    assert_eq!(rc, 0);
    // SAFETY: jemalloc returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(version) }
        .to_string_lossy()
        .into_owned()
}

/// `N` objects from one `experimental.batch_alloc` call, written through
/// the pointers it returns and kept as real boxes, which the global
/// allocator (jemalloc) frees one by one.
pub struct JemallocBatch<T> {
    held: Vec<Box<T>>,
    mib: [usize; 2],
}

impl<T: Item> Strategy<T> for JemallocBatch<T> {
    fn new(n: usize) -> Self {
        let mut strategy = JemallocBatch {
            held: resident_vec(n),
            mib: batch_alloc_mib(),
        };
        strategy.check(n.min(1024));
        strategy
    }

    #[inline(never)]
    fn fill(&mut self, n: usize) {
        assert!(self.held.is_empty() && self.held.capacity() >= n);
        let slots = self.held.as_mut_ptr().cast::<*mut T>();
        let mut packet = Packet {
            ptrs: slots.cast(),
            num: n,
            size: size_of::<T>(),
            flags: 0,
        };
        let mut filled = 0usize;
        let mut len = size_of::<usize>();
        // SAFETY: the packet names `n` writable pointer slots (the list's
        // spare capacity); `filled` is a `size_t` buffer of `len` bytes.
        let rc = unsafe {
            mallctlbymib(
                self.mib.as_ptr(),
                self.mib.len(),
                (&mut filled as *mut usize).cast(),
                &mut len,
                (&mut packet as *mut Packet).cast(),
                size_of::<Packet>(),
            )
        };
        if rc != 0 || filled != n {
            // Out of memory, or a jemalloc without the control: never a
            // silent short batch.
            panic!("experimental.batch_alloc returned {rc}, {filled} of {n} pointers");
        }
        for i in 0..n {
            // SAFETY: jemalloc wrote `n` pointers into the spare capacity.
            let slot = unsafe { slots.add(i).read() };
            // SAFETY: each is a fresh jemalloc block of at least
            // `size_of::<T>()` bytes at jemalloc's default alignment (16 B
            // or more, checked in `check`), which suits `T`.
            unsafe { slot.write(T::make(black_box(i as u64))) };
        }
        // SAFETY: the first `n` elements now hold pointers to initialised
        // `T`s from the global allocator with `T`'s layout, which is what a
        // `Box<T>` is (it has the representation of a pointer).
        unsafe { self.held.set_len(n) };
    }

    #[inline(never)]
    fn release(&mut self) {
        self.held.clear();
    }
}

impl<T: Item> JemallocBatch<T> {
    /// Checks once, outside any timing, that the control hands back `n`
    /// distinct, aligned, large-enough blocks that keep what is written to
    /// them and that the global allocator frees: the suite measures the real
    /// API, not a stub that fails. (`fill` itself rejects a short batch.)
    fn check(&mut self, n: usize) {
        self.fill(n);
        let mut addresses = Vec::with_capacity(n);
        for (i, object) in self.held.iter().enumerate() {
            assert!(**object == T::make(i as u64), "slot {i} lost its value");
            let at: *const T = &**object;
            assert_eq!(at.addr() % 16, 0, "block {at:p} is not 16-byte aligned");
            // SAFETY: a live block of jemalloc's.
            let usable = unsafe { tikv_jemalloc_sys::malloc_usable_size(at.cast()) };
            assert!(usable >= size_of::<T>(), "block of {usable} bytes");
            addresses.push(at.addr());
        }
        addresses.sort_unstable();
        addresses.dedup();
        assert_eq!(
            addresses.len(),
            n,
            "experimental.batch_alloc repeated a block"
        );
        self.release();
    }
}
