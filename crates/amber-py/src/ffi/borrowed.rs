//! Typed borrowed references: `Borrowed<'a>`, an object some owner keeps
//! alive for `'a`, and the exact-type views made from it (`Str`, `Int`,
//! `List`, `Tuple`), whose reads of CPython's layouts are safe methods.
//!
//! A `Borrowed` is made safely from a `&Bound` or an `&Obj` (the borrow is
//! the owner), or by [`Borrowed::from_ptr`], whose caller vouches for the
//! owner. Either way it is neither `Send` nor `Sync`, so it is used only on
//! the thread that made it, which holds the GIL: work that releases the GIL
//! runs in `Send` closures that cannot capture it.
//!
//! The items of a list are held by the list only while nothing changes it,
//! and any Python code may (a hook, an `__eq__`, a finalizer run by the
//! garbage collector). [`List::items`] therefore lends them only for the
//! borrow of a [`NoCode`] token, which the caller makes (`unsafe`) for a
//! stretch in which it runs no Python code; an item that must outlive that
//! stretch is taken as an owned [`Obj`] first.
//!
//! Every method is `#[inline(always)]`: each is a load or two on the
//! encoder's hottest path.

use pyo3::ffi;
use std::marker::PhantomData;
use std::ptr::NonNull;

use super::obj::Obj;

/// A reference to a live Python object, borrowed for `'a` from an owner
/// that keeps it alive that long, whatever code runs meanwhile.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct Borrowed<'a> {
    p: NonNull<ffi::PyObject>,
    _owner: PhantomData<&'a ffi::PyObject>,
}

impl<'a> Borrowed<'a> {
    /// Borrow the object `p` points to.
    ///
    /// # Safety
    /// `p` points to a live object that an owner keeps alive for all of
    /// `'a`, whatever code runs meanwhile, and the calling thread holds the
    /// GIL.
    #[inline(always)]
    pub unsafe fn from_ptr(p: *mut ffi::PyObject) -> Borrowed<'a> {
        Borrowed {
            // SAFETY: a live object's address is not null.
            p: unsafe { NonNull::new_unchecked(p) },
            _owner: PhantomData,
        }
    }

    #[inline(always)]
    pub fn ptr(self) -> *mut ffi::PyObject {
        self.p.as_ptr()
    }

    /// The object's type.
    #[inline(always)]
    pub fn ob_type(self) -> *mut ffi::PyTypeObject {
        // SAFETY: the object is live for `'a` (the type's invariant).
        unsafe { ffi::Py_TYPE(self.ptr()) }
    }

    /// Whether its type is exactly `t` (not a subclass).
    #[inline(always)]
    pub fn is_exactly(self, t: *mut ffi::PyTypeObject) -> bool {
        self.ob_type() == t
    }

    /// Its reference count.
    #[inline(always)]
    pub fn refcnt(self) -> isize {
        // SAFETY: the object is live; reading the count runs no code.
        unsafe { ffi::Py_REFCNT(self.ptr()) }
    }

    #[inline(always)]
    pub fn is_none(self) -> bool {
        // SAFETY: `Py_None` only takes the singleton's address.
        self.ptr() == unsafe { ffi::Py_None() }
    }

    #[inline(always)]
    pub fn is_true(self) -> bool {
        // SAFETY: `Py_True` only takes the singleton's address.
        self.ptr() == unsafe { ffi::Py_True() }
    }

    /// A new (owned) reference to the object.
    #[inline(always)]
    pub fn to_owned(self) -> Obj {
        // SAFETY: the object is live and the GIL is held (the type's
        // invariant).
        unsafe { Obj::from_borrowed(self.ptr()) }
    }

    /// The object as a `Bound`, which holds a reference of its own.
    #[inline(always)]
    pub fn to_bound<'py>(self, py: pyo3::Python<'py>) -> pyo3::Bound<'py, pyo3::PyAny> {
        // SAFETY: the object is live; the Bound takes a new reference.
        unsafe { pyo3::Bound::from_borrowed_ptr(py, self.ptr()) }
    }

    /// The object as an exact `str`.
    #[inline(always)]
    pub fn exact_str(self) -> Option<Str<'a>> {
        self.is_exactly(&raw mut ffi::PyUnicode_Type)
            .then_some(Str(self))
    }

    /// The object as an exact `int`.
    #[inline(always)]
    pub fn exact_int(self) -> Option<Int<'a>> {
        self.is_exactly(&raw mut ffi::PyLong_Type)
            .then_some(Int(self))
    }

    /// The value of an exact `float`.
    #[inline(always)]
    pub fn exact_float(self) -> Option<f64> {
        self.is_exactly(&raw mut ffi::PyFloat_Type)
            // SAFETY: the object is a live exact float.
            .then(|| unsafe { ffi::PyFloat_AS_DOUBLE(self.ptr()) })
    }

    /// The bytes of an exact `bytes` object (immutable, held for `'a`).
    #[inline(always)]
    pub fn exact_bytes(self) -> Option<&'a [u8]> {
        self.is_exactly(&raw mut ffi::PyBytes_Type)
            // SAFETY: a live exact bytes object, alive for `'a`.
            .then(|| unsafe { super::buffer::bytes_slice(self.ptr()) })
    }

    /// The bytes of an exact `bytearray`, lent while the token is borrowed
    /// (Python code may resize it).
    #[inline(always)]
    pub fn exact_bytearray<'n>(self, _quiet: &'n NoCode) -> Option<&'n [u8]>
    where
        'a: 'n,
    {
        self.is_exactly(&raw mut ffi::PyByteArray_Type)
            // SAFETY: a live exact bytearray; the `NoCode` borrow keeps
            // Python code, and so any resize, away for `'n`.
            .then(|| unsafe { super::buffer::bytes_like_slice(self.ptr(), true) })
    }

    /// The real and imaginary parts of an exact `complex`.
    #[inline(always)]
    pub fn exact_complex(self) -> Option<(f64, f64)> {
        self.is_exactly(&raw mut ffi::PyComplex_Type).then(|| {
            // SAFETY: a live exact complex, whose value is read in place
            // (no `__complex__` to call).
            let c = unsafe { ffi::PyComplex_AsCComplex(self.ptr()) };
            (c.real, c.imag)
        })
    }

    /// The object as an exact `list`.
    #[inline(always)]
    pub fn exact_list(self) -> Option<List<'a>> {
        self.is_exactly(&raw mut ffi::PyList_Type)
            .then_some(List(self))
    }

    /// The object as an exact `dict`.
    #[inline(always)]
    pub fn exact_dict(self) -> Option<Dict<'a>> {
        self.is_exactly(&raw mut ffi::PyDict_Type)
            .then_some(Dict(self))
    }

    /// The object as a `dict` (or subclass).
    #[inline(always)]
    pub fn dict(self) -> Option<Dict<'a>> {
        // SAFETY: the object is live; the check reads its type's flags.
        (unsafe { ffi::PyDict_Check(self.ptr()) } != 0).then_some(Dict(self))
    }

    /// The object as an exact `tuple`.
    #[inline(always)]
    pub fn exact_tuple(self) -> Option<Tuple<'a>> {
        self.is_exactly(&raw mut ffi::PyTuple_Type)
            .then_some(Tuple(self))
    }

    /// The object as a `tuple` (or subclass: its items are a tuple's).
    #[inline(always)]
    pub fn tuple(self) -> Option<Tuple<'a>> {
        // SAFETY: the object is live; the check reads its type's flags.
        (unsafe { ffi::PyTuple_Check(self.ptr()) } != 0).then_some(Tuple(self))
    }
}

impl<'a, 'py, T> From<&'a pyo3::Bound<'py, T>> for Borrowed<'a> {
    #[inline(always)]
    fn from(b: &'a pyo3::Bound<'py, T>) -> Borrowed<'a> {
        // SAFETY: the Bound owns a reference for as long as it is borrowed,
        // and proves the thread holds the GIL.
        unsafe { Borrowed::from_ptr(b.as_ptr()) }
    }
}

impl Obj {
    /// The object, borrowed from this reference.
    #[inline(always)]
    pub fn borrowed(&self) -> Borrowed<'_> {
        // SAFETY: `self` owns a reference while it is borrowed, and an `Obj`
        // exists only where the GIL is held.
        unsafe { Borrowed::from_ptr(self.ptr()) }
    }
}

/// A token held through a stretch of code that runs no Python code (no
/// call into Python, nothing that may call back: no comparisons, hashes,
/// hooks, nor allocations of objects the garbage collector tracks, nor a
/// reference dropped that may be the last). Borrows of it bound what
/// [`List::items`] and [`NoCode::lend`] lend; an error met in the stretch
/// is reported after the token is dropped, with what it names held.
pub struct NoCode {
    _not_send: PhantomData<*mut ()>,
}

/// Dropping the token ends the stretch: what it lent is no longer
/// reachable, so Python code may run again.
impl Drop for NoCode {
    #[inline(always)]
    fn drop(&mut self) {}
}

impl NoCode {
    /// # Safety
    /// No Python code runs on any thread while the token, or any borrow of
    /// it, lives (the caller holds the GIL and calls nothing that may run
    /// Python code, as the type's comment lists).
    #[inline(always)]
    pub unsafe fn new() -> NoCode {
        NoCode {
            _not_send: PhantomData,
        }
    }

    /// Lend the object `p` points to for the token's borrow.
    ///
    /// # Safety
    /// `p` points to a live object that something (a container) holds for
    /// as long as no Python code runs, and so for the token's borrow.
    #[inline(always)]
    pub unsafe fn lend<'n>(&'n self, p: *mut ffi::PyObject) -> Borrowed<'n> {
        // SAFETY: held while no Python code runs, as the token vouches for
        // `'n` (the caller's contract).
        unsafe { Borrowed::from_ptr(p) }
    }
}

/// A `str` (exactly, where made by [`Borrowed::exact_str`]).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Str<'a>(Borrowed<'a>);

impl<'a, 'py> From<&'a pyo3::Bound<'py, pyo3::types::PyString>> for Str<'a> {
    #[inline(always)]
    fn from(s: &'a pyo3::Bound<'py, pyo3::types::PyString>) -> Str<'a> {
        Str(s.into())
    }
}

impl<'a> Str<'a> {
    #[inline(always)]
    pub fn any(self) -> Borrowed<'a> {
        self.0
    }

    /// Its UTF-8, borrowed from it: read in place when it is compact ASCII
    /// (see [`super::text::compact_ascii`]), else through
    /// `PyUnicode_AsUTF8AndSize` (which caches it in the object). `None`
    /// when it holds lone surrogates (no exception is left set).
    #[inline(always)]
    pub fn utf8(self) -> Option<&'a [u8]> {
        // SAFETY: a live str (or subclass), alive for `'a`; its characters
        // never change nor move while it lives.
        if let Some(b) = unsafe { super::text::compact_ascii(self.0.ptr()) } {
            return Some(b);
        }
        self.utf8_slow()
    }

    #[inline(never)]
    fn utf8_slow(self) -> Option<&'a [u8]> {
        let mut len: ffi::Py_ssize_t = 0;
        // SAFETY: a live str; CPython caches its UTF-8 in the object, valid
        // while it lives, and returns NULL (an exception, cleared here) for
        // lone surrogates.
        unsafe {
            let p = ffi::PyUnicode_AsUTF8AndSize(self.0.ptr(), &mut len);
            if p.is_null() {
                ffi::PyErr_Clear();
                return None;
            }
            Some(std::slice::from_raw_parts(p as *const u8, len as usize))
        }
    }

    /// Its text as UTF-8 with lone surrogates kept (`surrogatepass`), as a
    /// new bytes object; `None` with an exception set if that fails.
    pub fn surrogatepass(self) -> Option<Obj> {
        // SAFETY: a live str; the call returns a new reference (or NULL with
        // an exception set), which `Obj` owns.
        unsafe {
            Obj::from_owned(ffi::PyUnicode_AsEncodedString(
                self.0.ptr(),
                c"utf-8".as_ptr(),
                c"surrogatepass".as_ptr(),
            ))
        }
    }
}

/// What [`Int::to_i64`] found.
pub enum I64 {
    Fits(i64),
    Overflow,
    /// An exception is set.
    Error,
}

/// An exact `int`.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Int<'a>(Borrowed<'a>);

impl<'a> Int<'a> {
    /// Its value if it has at most two 30-bit digits (read in place).
    #[inline(always)]
    pub fn small(self) -> Option<i64> {
        // SAFETY: a live exact int.
        unsafe { super::long::small_int(self.0.ptr()) }
    }

    /// Its value as an `i64` (`PyLong_AsLongLongAndOverflow`).
    #[inline(always)]
    pub fn to_i64(self) -> I64 {
        let mut overflow = 0;
        // SAFETY: a live exact int (no `__index__` to call); `overflow` is a
        // valid out-pointer.
        let v = unsafe { ffi::PyLong_AsLongLongAndOverflow(self.0.ptr(), &mut overflow) };
        if overflow != 0 {
            I64::Overflow
        // SAFETY: the GIL is held (the type's invariant).
        } else if v == -1 && unsafe { !ffi::PyErr_Occurred().is_null() } {
            I64::Error
        } else {
            I64::Fits(v)
        }
    }
}

/// An exact `list`.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct List<'a>(Borrowed<'a>);

impl<'a> List<'a> {
    #[inline(always)]
    pub fn any(self) -> Borrowed<'a> {
        self.0
    }

    /// Its length now.
    #[inline(always)]
    pub fn len(self) -> usize {
        // SAFETY: a live list.
        unsafe { super::seq::list_len(self.0.ptr()) }
    }

    /// Its items, lent while the token is borrowed: with no Python code
    /// running, nothing resizes the list, moves its item array or drops an
    /// item. (A list that Python code can see has no empty slots: the C
    /// API fills a new one before it lets code see it.)
    #[inline(always)]
    pub fn items<'n>(self, quiet: &'n NoCode) -> &'n [Borrowed<'n>]
    where
        'a: 'n,
    {
        let n = self.len();
        self.items_of_len(n, quiet).unwrap_or_default()
    }

    /// [`List::items`], if there are `n` of them (a list walked from its
    /// length checks each time that it still has that many).
    #[inline(always)]
    pub fn items_of_len<'n>(self, n: usize, _quiet: &'n NoCode) -> Option<&'n [Borrowed<'n>]>
    where
        'a: 'n,
    {
        if self.len() != n {
            return None;
        }
        if n == 0 {
            return Some(&[]);
        }
        // SAFETY: a live list, so its layout can be read.
        let items = unsafe { super::seq::list_items(self.0.ptr()) };
        // SAFETY: a list of `n > 0` items has an item array.
        unsafe { std::hint::assert_unchecked(!items.is_null()) };
        // SAFETY: a live list of `n` items, whose array holds `n` live
        // (non-null) references; `Borrowed` has the layout of a pointer.
        // The `NoCode` borrow keeps Python code, and so any change to the
        // list, away for `'n`.
        Some(unsafe { std::slice::from_raw_parts(items as *const Borrowed, n) })
    }
}

/// A `tuple` (or subclass).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Tuple<'a>(Borrowed<'a>);

impl<'a> Tuple<'a> {
    #[inline(always)]
    pub fn any(self) -> Borrowed<'a> {
        self.0
    }

    #[inline(always)]
    pub fn len(self) -> usize {
        // SAFETY: a live tuple.
        unsafe { super::seq::tuple_len(self.0.ptr()) }
    }

    /// Item `i`, held by the tuple (which never changes) for `'a`.
    #[inline(always)]
    pub fn get(self, i: usize) -> Option<Borrowed<'a>> {
        // SAFETY: a live tuple, `i` below its length; the tuple holds the
        // item for as long as it lives.
        (i < self.len())
            .then(|| unsafe { Borrowed::from_ptr(super::seq::tuple_item(self.0.ptr(), i)) })
    }
}

/// A `dict` (or subclass).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Dict<'a>(Borrowed<'a>);

impl<'a> Dict<'a> {
    #[inline(always)]
    pub fn any(self) -> Borrowed<'a> {
        self.0
    }

    /// Its number of entries now.
    #[inline(always)]
    pub fn len(self) -> usize {
        // SAFETY: a live dict.
        unsafe { super::dict::len(self.0.ptr()) }
    }
}
