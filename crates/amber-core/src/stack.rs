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
#[inline]
pub fn enter<T>(f: impl FnOnce() -> T) -> T {
    stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, f)
}

/// Run `f`, the work of nesting level `depth`, with enough stack under it.
#[inline(always)]
pub fn descend<T>(depth: usize, f: impl FnOnce() -> T) -> T {
    // (GROW_EVERY is 1 in debug builds, where clippy sees `% 1`.)
    #[allow(clippy::modulo_one)]
    let check = depth % GROW_EVERY == 0;
    if check {
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, f)
    } else {
        f()
    }
}
