//! NumPy arrays and scalars as bytes: an array's shape, memory order and
//! the bytes of its items in that order (read through a flat `uint8` view,
//! which works for every dtype, even those the buffer protocol cannot
//! describe, such as datetime64), and arrays and scalars made back from
//! bytes, a dtype and a shape, holding exactly those bytes.

use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::typeref;

/// How an array lays out its items.
pub struct Layout<'py> {
    pub dtype: Bound<'py, PyAny>,
    pub shape: Vec<u64>,
    /// Fortran order (and not also C order, as 1-d arrays are).
    pub fortran: bool,
    /// Contiguous in C or Fortran order.
    pub contiguous: bool,
    pub nbytes: usize,
}

pub fn layout_of<'py>(arr: &Bound<'py, PyAny>) -> PyResult<Layout<'py>> {
    let py = arr.py();
    let flags = arr.getattr(intern!(py, "flags"))?;
    let c_contig = flags.getattr(intern!(py, "c_contiguous"))?.is_truthy()?;
    let f_contig = flags.getattr(intern!(py, "f_contiguous"))?.is_truthy()?;
    Ok(Layout {
        dtype: arr.getattr(intern!(py, "dtype"))?,
        shape: arr.getattr(intern!(py, "shape"))?.extract()?,
        fortran: f_contig && !c_contig,
        contiguous: c_contig || f_contig,
        nbytes: arr.getattr(intern!(py, "nbytes"))?.extract()?,
    })
}

/// Whether `dtype` is NumPy 2's variable-width string dtype
/// (`numpy.dtypes.StringDType`, kind `"T"`), whose elements are kept as
/// items, not bytes.
pub fn is_strings(dtype: &Bound<'_, PyAny>) -> PyResult<bool> {
    let kind = dtype.getattr(intern!(dtype.py(), "kind"))?;
    Ok(kind.extract::<&str>().is_ok_and(|k| k == "T"))
}

/// The elements of the string array `arr` in C order (Fortran order when
/// `fortran`), each a `str`, or None for a missing value (one that is not a
/// `str`: the dtype's `na_object`).
pub fn string_items<'py>(arr: &Bound<'py, PyAny>, fortran: bool) -> PyResult<Bound<'py, PyList>> {
    let py = arr.py();
    let order = if fortran { "F" } else { "C" };
    let flat = arr.call_method1(intern!(py, "ravel"), (order,))?;
    let items = flat
        .call_method0(intern!(py, "tolist"))?
        .cast_into::<PyList>()?;
    for (i, item) in items.iter().enumerate() {
        if !item.is_exact_instance_of::<PyString>() {
            items.set_item(i, py.None())?;
        }
    }
    Ok(items)
}

/// `numpy.dtypes.StringDType(**kwargs)`.
pub fn string_dtype<'py>(
    py: Python<'py>,
    kwargs: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyAny>> {
    let dtypes = py.import(intern!(py, "numpy.dtypes"))?;
    dtypes
        .getattr(intern!(py, "StringDType"))?
        .call((), Some(kwargs))
}

/// A string array of `shape` from its elements (None where the dtype's
/// `na_object` goes) in C order, or in Fortran order when `fortran` (and
/// then laid out in Fortran order), in `dtype`.
pub fn strings_array<'py>(
    items: &Bound<'py, PyList>,
    dtype: &Bound<'py, PyAny>,
    na_object: Option<&Bound<'py, PyAny>>,
    shape: &[u64],
    fortran: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let py = items.py();
    let n = shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| PyValueError::new_err("string array size overflows"))?;
    if n != items.len() as u64 {
        return Err(PyValueError::new_err(format!(
            "a string array of shape {shape:?} needs {n} elements, the frame has {}",
            items.len()
        )));
    }
    let values = PyList::empty(py);
    for item in items.iter() {
        if item.is_none() {
            match na_object {
                Some(na) => values.append(na)?,
                None => {
                    return Err(PyValueError::new_err(
                        "a missing value in a string array whose dtype has no na_object",
                    ))
                }
            }
        } else if item.is_exact_instance_of::<PyString>() {
            values.append(item)?;
        } else {
            return Err(PyValueError::new_err(format!(
                "a string array element is {}, not str or None",
                item.get_type().name()?
            )));
        }
    }
    let np = typeref::numpy(py)?;
    let kwargs = PyDict::new(py);
    kwargs.set_item(intern!(py, "dtype"), dtype)?;
    let flat = np.call_method(intern!(py, "array"), (values,), Some(&kwargs))?;
    // An na_object that is itself a sequence would make NumPy read the
    // elements as rows: the array must have exactly one element per item.
    let got: Vec<u64> = flat.getattr(intern!(py, "shape"))?.extract()?;
    if got != [n] {
        return Err(PyValueError::new_err(format!(
            "the string array's elements made an array of shape {got:?}, not ({n},)"
        )));
    }
    let kwargs = PyDict::new(py);
    kwargs.set_item(intern!(py, "order"), if fortran { "F" } else { "C" })?;
    flat.call_method(
        intern!(py, "reshape"),
        (PyTuple::new(py, shape)?,),
        Some(&kwargs),
    )
}

/// Whether a dtype holds Python objects (anywhere in its fields).
pub fn holds_objects(dtype: &Bound<'_, PyAny>) -> PyResult<bool> {
    dtype.getattr(intern!(dtype.py(), "hasobject"))?.is_truthy()
}

/// A C-contiguous copy of `arr`'s items, copied as raw items (void of the
/// item size): a copy in the array's own dtype goes field by field and
/// leaves the padding between fields as whatever the allocator returned.
pub fn contiguous_copy<'py>(arr: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = arr.py();
    let np = typeref::numpy(py)?;
    let itemsize = arr
        .getattr(intern!(py, "dtype"))?
        .getattr(intern!(py, "itemsize"))?;
    let raw = np
        .getattr(intern!(py, "dtype"))?
        .call1(((np.getattr(intern!(py, "void"))?, itemsize),))?;
    let items = arr.call_method1(intern!(py, "view"), (raw,))?;
    np.call_method1(intern!(py, "ascontiguousarray"), (items,))
}

/// The bytes of the contiguous array `arr` in its memory order, as a flat
/// `uint8` array (a view, no copy).
pub fn flat_bytes<'py>(arr: &Bound<'py, PyAny>, fortran: bool) -> PyResult<Bound<'py, PyAny>> {
    let py = arr.py();
    let c_order = if fortran {
        arr.getattr(intern!(py, "T"))?
    } else {
        arr.clone()
    };
    c_order
        .call_method1(intern!(py, "reshape"), (-1,))?
        .call_method1(intern!(py, "view"), (intern!(py, "u1"),))
}

/// Run `f` on the `nbytes` bytes of a flat `uint8` array.
pub fn with_bytes<T>(
    flat: &Bound<'_, PyAny>,
    nbytes: usize,
    f: impl FnOnce(&[u8]) -> T,
) -> PyResult<T> {
    let buf = pyo3::buffer::PyBuffer::<u8>::get(flat)?;
    if buf.len_bytes() != nbytes || !buf.is_c_contiguous() {
        return Err(PyValueError::new_err(format!(
            "array byte view has {} bytes, the array {nbytes}",
            buf.len_bytes()
        )));
    }
    // SAFETY: `buf` holds the export of `flat`, a C-contiguous buffer of
    // `nbytes` bytes (both checked just above), so the pointer is valid for
    // `nbytes` reads until `buf` drops after `f` returns.
    let data = unsafe { std::slice::from_raw_parts(buf.buf_ptr() as *const u8, nbytes) };
    Ok(f(data))
}

/// A flat `uint8` array over any buffer (a view of it).
pub fn flat_view<'py>(buffer: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = buffer.py();
    let np = typeref::numpy(py)?;
    np.getattr(intern!(py, "frombuffer"))?
        .call1((buffer, np.getattr(intern!(py, "uint8"))?))
}

/// The bytes an array of `dtype` and `shape` holds, or None if the size
/// overflows.
pub fn size_of(dtype: &Bound<'_, PyAny>, shape: &[u64]) -> PyResult<Option<usize>> {
    let itemsize: u64 = dtype.getattr(intern!(dtype.py(), "itemsize"))?.extract()?;
    let count = shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d));
    Ok(count
        .and_then(|c| c.checked_mul(itemsize))
        .and_then(|n| usize::try_from(n).ok()))
}

/// An array of `dtype` and `shape` over the bytes of `flat` (a flat `uint8`
/// array of exactly its size, viewed, not copied), or over no bytes when
/// `flat` is None (an empty shape or a zero-size dtype). The array must
/// hold the bytes it was given and no others, by the item size of the
/// dtype NumPy actually built.
pub fn array_from_bytes<'py>(
    flat: Option<Bound<'py, PyAny>>,
    dtype: &Bound<'py, PyAny>,
    shape: &[u64],
    fortran: bool,
    nbytes: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let py = dtype.py();
    let np = typeref::numpy(py)?;
    let dims = PyTuple::new(py, shape)?;
    let kw = PyDict::new(py);
    kw.set_item(intern!(py, "order"), if fortran { "F" } else { "C" })?;
    let arr = match flat {
        Some(flat) => flat
            .call_method1(intern!(py, "view"), (dtype,))?
            .call_method(intern!(py, "reshape"), (dims,), Some(&kw))?,
        None => {
            // The ndarray constructor keeps the dtype as given; np.empty
            // would not (it makes an unsized S0/U0 into S1/U1 of memory it
            // never wrote, and a generic >M8 into <M8).
            kw.set_item(intern!(py, "dtype"), dtype)?;
            np.getattr(intern!(py, "ndarray"))?
                .call((dims,), Some(&kw))?
        }
    };
    let built: usize = arr.getattr(intern!(py, "nbytes"))?.extract()?;
    if built != nbytes {
        return Err(PyValueError::new_err(format!(
            "NumPy built an array of {built} bytes from dtype {} and shape {shape:?}, the data \
             is {nbytes}",
            dtype.str()?,
        )));
    }
    Ok(arr)
}

/// The bytes of a NumPy scalar: exactly its dtype's item size (a zero-size
/// str_ or bytes_ still shows NumPy's NUL padding in `tobytes()`; its value
/// is its dtype alone).
pub fn scalar_bytes<'py>(s: &Bound<'py, PyAny>, itemsize: usize) -> PyResult<Bound<'py, PyBytes>> {
    let py = s.py();
    if itemsize == 0 {
        return Ok(PyBytes::new(py, b""));
    }
    let raw = s.call_method0(intern!(py, "tobytes"))?;
    Ok(raw.cast_into::<PyBytes>()?)
}

/// The NumPy scalar of `dtype` (not a subarray) whose bytes are `raw`.
pub fn new_scalar<'py>(dtype: &Bound<'py, PyAny>, raw: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let py = dtype.py();
    let np = typeref::numpy(py)?;
    if !dtype.getattr(intern!(py, "subdtype"))?.is_none() {
        return Err(PyValueError::new_err(
            "numpy scalar dtype must not be a subarray",
        ));
    }
    let itemsize: usize = dtype.getattr(intern!(py, "itemsize"))?.extract()?;
    if itemsize != raw.len() {
        return Err(PyValueError::new_err(
            "numpy scalar size does not match its dtype",
        ));
    }
    let kw = PyDict::new(py);
    kw.set_item(intern!(py, "dtype"), dtype)?;
    if itemsize == 0 {
        // frombuffer refuses a zero itemsize: a 0-d array without bytes
        // gives the scalar, which reads none.
        return np
            .getattr(intern!(py, "ndarray"))?
            .call(((),), Some(&kw))?
            .get_item(());
    }
    kw.set_item(intern!(py, "count"), 1)?;
    np.getattr(intern!(py, "frombuffer"))?
        .call((PyBytes::new(py, raw),), Some(&kw))?
        .get_item(0)
}
