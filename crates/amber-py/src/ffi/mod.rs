//! Every raw pointer and CPython layout the edge touches, in one place.
//!
//! Raw reads done here, and the CPython versions they assume (`build.rs`
//! decides which layouts a build reads; `AMBER_PORTABLE=1` builds read none):
//! - `alloc`: the Rust side's global allocator, mimalloc (raw blocks, no
//!   CPython layout).
//! - `borrowed`: `Borrowed`, a typed reference to an object an owner keeps
//!   alive, and its exact-type views (`Str`, `Int`, `List`, `Tuple`,
//!   `Dict`) with safe reads: type checks, a str's UTF-8, an int's value, a
//!   float's value, bytes, lengths, tuple items; a list's items and a
//!   bytearray's bytes only under a `NoCode` token (no Python code runs).
//!   The layouts read are those of `seq`, `text`, `long`, `dict` and
//!   `buffer`.
//! - `seq`: a list's or tuple's length and items (`PyList_GET_ITEM`, a
//!   list's `ob_item` array), and filling a new one.
//! - `obj`: `Obj` owns one reference (incref on clone, decref on drop), and
//!   makes `None`, bools, ints and floats (their constructors' results) and
//!   converts to and from `Bound`; `prefetch` only hints the cache and never
//!   dereferences.
//! - `dict`: a dict's `ma_used` (all versions), and on 3.11 to 3.15 (not
//!   free-threaded) its entry table through `struct _dictkeysobject` from
//!   `Include/internal/pycore_dict.h`, identical in those versions; on 3.11
//!   to 3.13 its version tag (PEP 509) to see whether Python code changed
//!   it, from 3.14 the keys object's address and sizes.
//! - `long`: the digits of an `int` of at most two 30-bit digits: `ob_size`
//!   (3.10, 3.11) or `long_value.lv_tag` (3.12+), used only when
//!   `sys.int_info.bits_per_digit` is 30 (checked at import); a new `int`
//!   from bytes (`PyLong_FromNativeBytes` from 3.13).
//! - `buffer`: the buffer protocol (`PyObject_GetBuffer`, released on drop)
//!   and the bytes of `bytes` and `bytearray` objects in place.
//! - `datetime`: the fields of dates, times, datetimes and timedeltas
//!   (the C API's `PyDateTime_GET_*` macros), read safely from a `Borrowed`
//!   whose type is checked first.
//! - `gc`: `PyGC_Disable`/`PyGC_Enable`, and untracking tuples whose
//!   items cannot be in a cycle (`PyObject_GC_UnTrack`).
//! - `text`: the characters of a compact ASCII `str` read in place (its
//!   `state` bits, checked at import; not on free-threaded builds), and a new
//!   one filled in place.
//! - `slots`: a type's `tp_descr_get` replaced after the type is made
//!   (pyo3's kept and called for what the new one leaves), and a class
//!   attribute found through the type cache
//!   (`_PyType_Lookup`, which returns a borrowed reference: 3.11 to 3.14
//!   with the GIL; free-threaded and portable builds install no slot and
//!   walk `__mro__`).
//! - `numpy`: the slots of a new NumPy object array, found through its
//!   `__array_interface__` (contiguous `PyObject*`s); and the items of a
//!   one-dimensional object array read in place through the start of
//!   NumPy's `PyArrayObject_fields` (data, dimensions, strides), the same
//!   in NumPy 1.x and 2.x, read again for every item.
//! - `libpq`: the few libpq calls amber makes on a psycopg connection
//!   (draining a COPY, reading a result's values), bound at run time to
//!   the very libpq psycopg loaded, through the `PGconn`/`PGresult`
//!   pointers psycopg's objects hold.
//!
//! What keeps each pointer alive: the caller holds the object (an `Obj`, a
//! `Bound`, a `Borrowed`, or the container it was read from while no Python
//! code runs, which a `NoCode` token stands for). Functions that read
//! through a raw pointer are `unsafe fn`s whose `# Safety` section says what
//! the caller must hold; callers say at each `unsafe` block why that holds.
//! `Borrowed` and its views carry that proof in their type, so their
//! methods are safe.

pub mod alloc;
pub mod borrowed;
pub mod buffer;
pub mod datetime;
pub mod dict;
pub mod gc;
pub mod libpq;
pub mod long;
pub mod numpy;
pub mod obj;
pub mod seq;
pub mod slots;
pub mod text;
