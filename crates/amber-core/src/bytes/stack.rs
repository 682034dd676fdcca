//! Recursion on a bounded stack, shared by the decoder and the encoder.
//!
//! Both walkers recurse once per level of nesting. Callers bound the depth
//! (`max_depth`); this module makes any allowed depth safe on any thread: at
//! every `GROW_EVERY`-th level it checks how much stack is left and, below
//! the red zone, continues on a new heap-allocated segment.

/// When less stack than this is left, recursion continues on a new segment.
pub const STACK_RED_ZONE: usize = 128 * 1024;
/// Size of each new stack segment.
pub const STACK_SEGMENT: usize = 2 * 1024 * 1024;
/// The stack is checked every this many levels of nesting: eight levels of
/// optimised frames take a few KiB, far less than the red zone; unoptimised
/// (debug) frames are much larger, so those builds check every level.
pub const GROW_EVERY: usize = if cfg!(debug_assertions) { 1 } else { 8 };

/// Run `f`, a whole walk (one `dumps` or `loads`), with at least the red
/// zone of stack under it: the caller may be a thread with a small stack,
/// and the levels before the first check of `descend` need room too.
/// `no_stack` makes the error returned if a new segment cannot be had.
#[inline]
pub fn enter<T, E>(f: impl FnOnce() -> Result<T, E>, no_stack: impl FnOnce() -> E) -> Result<T, E> {
    if low() {
        grow(f, no_stack)
    } else {
        f()
    }
}

/// Whether less than the red zone of stack is left (or how much is left is
/// unknown): work that recurses should stop doing so.
#[inline]
pub fn low() -> bool {
    !matches!(stacker::remaining_stack(), Some(left) if left >= STACK_RED_ZONE)
}

/// Run `f`, the work of nesting level `depth`, with enough stack under it.
#[inline(always)]
pub fn descend<T, E>(
    depth: usize,
    f: impl FnOnce() -> Result<T, E>,
    no_stack: impl FnOnce() -> E,
) -> Result<T, E> {
    // (GROW_EVERY is 1 in debug builds, where clippy sees `% 1`.)
    #[allow(clippy::modulo_one)]
    let check = depth % GROW_EVERY == 0;
    if check {
        enter(f, no_stack)
    } else {
        f()
    }
}

/// Run `f` on a new stack segment. The segment's allocation panics when
/// memory runs out (stacker maps it with `mmap`): that panic, and only that
/// one, becomes `no_stack()`; a panic from `f` itself goes on unwinding.
/// (Rust's panic hook still prints the panic's message.)
#[cold]
#[inline(never)]
fn grow<T, E>(f: impl FnOnce() -> Result<T, E>, no_stack: impl FnOnce() -> E) -> Result<T, E> {
    let mut started = false;
    let run = std::panic::AssertUnwindSafe(|| {
        stacker::grow(STACK_SEGMENT, || {
            started = true;
            f()
        })
    });
    match std::panic::catch_unwind(run) {
        Ok(r) => r,
        Err(_) if !started => Err(no_stack()),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}
