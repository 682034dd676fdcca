//! The Rust side's global allocator: mimalloc, through its plain entry
//! points where the alignment allows.

/// The Rust side's allocator: parsed messages, their containers and the
/// encoders' buffers make many small allocations, and mimalloc's take and
/// give back about a third of the system allocator's instructions. Python
/// objects still come from CPython's own allocator.
#[global_allocator]
static ALLOCATOR: Mimalloc = Mimalloc;

/// mimalloc, called through its plain entry points whenever the alignment
/// asked for is one every mimalloc block already has: the aligned entry
/// points cost about 80 more instructions per allocation and take a slow
/// generic path on every reallocation.
struct Mimalloc;

/// Every block mimalloc hands out is aligned to at least a pointer's size
/// (its smallest size class is one machine word, and its pages start
/// aligned), so layouts aligned to no more than this need no aligned call.
const PLAIN_ALIGN: usize = std::mem::size_of::<usize>();

// SAFETY: each method forwards to the mimalloc function of the same contract
// (`mi_malloc`/`mi_zalloc`/`mi_realloc` give blocks aligned to at least
// `PLAIN_ALIGN`, the `_aligned` variants to the alignment asked for, null on
// failure), and every block is freed by `mi_free`, which takes blocks of
// either kind.
unsafe impl std::alloc::GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys as mi;
        // SAFETY: plain mimalloc calls; the alignment rule is above.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_malloc(layout.size()).cast()
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys as mi;
        // SAFETY: as in `alloc`.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_zalloc(layout.size()).cast()
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from this allocator, so from mimalloc.
        unsafe { libmimalloc_sys::mi_free(ptr.cast()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        use libmimalloc_sys as mi;
        // SAFETY: `ptr` came from this allocator with `layout`; the new
        // block keeps `layout`'s alignment by the rule above (`mi_realloc`
        // of a block keeps at least `PLAIN_ALIGN`).
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_realloc(ptr.cast(), new_size).cast()
            } else {
                mi::mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
            }
        }
    }
}
