//! NumPy arrays and scalars, both halves: an array's dtype description
//! (`dtype.rs`), shape, order and bytes, in band (aligned in the frame) or
//! out of band; a scalar's dtype and bytes. The bytes are read and the
//! arrays made in `values::numpy`.

use amber_core::bytes::path::PathSeg;
use amber_core::codec::build::{NdArray, NdData};
use amber_core::codec::writer as w;
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList};

use crate::codec::decode::PyBuilder;
use crate::codec::encode::{fail, Encoder, OrFail, Within, R};
use crate::errors::{self, DecodeKind, EncodeKind};
use crate::ffi::obj::Obj;
use crate::values::numpy as np;

impl<'py> Encoder<'py> {
    /// A `numpy.ndarray`.
    pub(crate) fn ndarray(&mut self, arr: &Bound<'py, PyAny>) -> R {
        let (o, arr) = (arr.as_ptr(), arr.clone());
        let layout = np::layout_of(&arr).or_fail()?;
        if np::is_strings(&layout.dtype).or_fail()? {
            return self.string_array(o, &arr, &layout.dtype, &layout.shape, layout.fortran);
        }
        if np::holds_objects(&layout.dtype).or_fail()? {
            return objects_refused("arrays", &layout.dtype);
        }
        self.aligned_data_here()?;
        w::write_ndarray_header(&mut self.out);
        self.dtype(o, &layout.dtype)?;
        if layout.nbytes == 0 {
            // Nothing to copy or view (an empty shape or a zero-size dtype):
            // a contiguous copy would turn an unsized S0/U0 into S1/U1.
            w::write_ndarray_shape(&mut self.out, &layout.shape, layout.fortran, None);
            w::write_ndarray_data(&mut self.out, self.frame_start, &[]);
            return Ok(());
        }
        let arr = if layout.contiguous {
            arr
        } else {
            np::contiguous_copy(&arr).or_fail()?
        };
        let flat = np::flat_bytes(&arr, layout.fortran).or_fail()?;
        let oob = if layout.nbytes >= self.opts.oob_threshold {
            self.out_of_band((&flat).into())?
        } else {
            None
        };
        w::write_ndarray_shape(&mut self.out, &layout.shape, layout.fortran, oob);
        if oob.is_none() {
            let start = self.frame_start;
            let out = &mut self.out;
            np::with_bytes(&flat, layout.nbytes, |data| {
                w::write_ndarray_data(out, start, data)
            })
            .or_fail()?;
        }
        Ok(())
    }

    /// A `StringDType` array: its dtype as `{"kind": "T", "coerce": ...,
    /// "na_object": ...}` (no `na_object` key when the dtype has none), then
    /// its elements as a LIST in its memory order (C, or Fortran for an
    /// array that is only Fortran-contiguous), None for a missing value.
    #[inline(never)]
    fn string_array(
        &mut self,
        o: *mut ffi::PyObject,
        arr: &Bound<'py, PyAny>,
        dtype: &Bound<'py, PyAny>,
        shape: &[u64],
        fortran: bool,
    ) -> R {
        let py = self.py;
        let descr = PyDict::new(py);
        descr.set_item(intern!(py, "kind"), "T").or_fail()?;
        let coerce = dtype.getattr(intern!(py, "coerce")).or_fail()?;
        descr.set_item(intern!(py, "coerce"), coerce).or_fail()?;
        if let Ok(na) = dtype.getattr(intern!(py, "na_object")) {
            descr.set_item(intern!(py, "na_object"), na).or_fail()?;
        }
        let items = np::string_items(arr, fortran).or_fail()?;
        w::write_ndarray_header(&mut self.out);
        self.item((&descr).into())
            .within(|| PathSeg::Key(".dtype".into()), o)?;
        w::write_ndarray_items_shape(&mut self.out, shape, fortran);
        self.item((&items).into())
            .within(|| PathSeg::Key(".items".into()), o)?;
        Ok(())
    }

    /// A NumPy scalar (an instance of a `numpy.generic` type defined in
    /// numpy).
    pub(crate) fn npscalar(&mut self, s: &Bound<'py, PyAny>) -> R {
        let o = s.as_ptr();
        let dtype = s.getattr(intern!(self.py, "dtype")).or_fail()?;
        if np::holds_objects(&dtype).or_fail()? {
            return objects_refused("scalars", &dtype);
        }
        w::write_npscalar_header(&mut self.out);
        self.dtype(o, &dtype)?;
        let itemsize: usize = dtype
            .getattr(intern!(self.py, "itemsize"))
            .or_fail()?
            .extract()
            .or_fail()?;
        let raw = np::scalar_bytes(s, itemsize).or_fail()?;
        let raw = raw.as_bytes();
        if raw.len() != itemsize {
            return fail(
                EncodeKind::Unsupported,
                format!(
                    "NumPy scalar of dtype {} has {} bytes, its dtype says {itemsize}",
                    dtype.str().or_fail()?,
                    raw.len()
                ),
            );
        }
        w::write_blob(&mut self.out, raw);
        Ok(())
    }
}

/// The error for arrays or scalars whose dtype holds Python objects: the
/// object dtype, or a structured dtype with such a field.
#[cold]
fn objects_refused(what: &str, dtype: &Bound<'_, PyAny>) -> R {
    let shown = dtype
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".into());
    fail(
        EncodeKind::Unsupported,
        format!("NumPy {what} of dtype {shown} hold Python objects and cannot be encoded"),
    )
}

impl<'py> PyBuilder<'py, '_> {
    #[inline(never)]
    pub(crate) fn ndarray_(&mut self, a: NdArray<'_, Obj>) -> PyResult<Obj> {
        let dtype = self.dtype_(&self.bound(&a.dtype), 0)?;
        let Some(nbytes) = np::size_of(&dtype, &a.shape)? else {
            return Err(PyValueError::new_err("ndarray size overflows"));
        };
        // The array's bytes as a flat uint8 array: a copy of the frame's
        // bytes (padding included), a view of them when asked, or a view of
        // the caller's out-of-band buffer.
        let flat = match a.data {
            NdData::Inline { bytes, offset } => {
                if bytes.len() != nbytes {
                    return Err(PyValueError::new_err(format!(
                        "ndarray data is {} bytes, its shape and dtype need {nbytes}",
                        bytes.len()
                    )));
                }
                if nbytes == 0 {
                    None
                } else {
                    let flat = np::flat_view(&self.input_slice(offset, nbytes)?)?;
                    Some(if self.opts.zero_copy {
                        flat
                    } else {
                        flat.call_method0(intern!(self.py, "copy"))?
                    })
                }
            }
            NdData::OutOfBand { index } => {
                let flat = np::flat_view(self.buffer(index)?)?;
                let len: usize = flat.len()?;
                if len != nbytes {
                    return Err(errors::decode_fail(
                        self.py,
                        DecodeKind::Buffer,
                        format!(
                            "out-of-band buffer {index} is {len} bytes, the array needs {nbytes}"
                        ),
                    ));
                }
                (nbytes > 0).then_some(flat)
            }
        };
        let arr = np::array_from_bytes(flat, &dtype, &a.shape, a.fortran, nbytes)?;
        Ok(self.obj(arr))
    }

    /// A `StringDType` array: the dtype from its `{"kind": "T", ...}`
    /// description, the elements from `items` (a list, None for missing,
    /// in Fortran order when `fortran`).
    #[inline(never)]
    pub(crate) fn ndarray_items_(
        &mut self,
        dtype: Obj,
        shape: Vec<u64>,
        fortran: bool,
        items: Obj,
    ) -> PyResult<Obj> {
        let py = self.py;
        let descr = self.bound(&dtype);
        let Ok(descr) = descr.cast_exact::<PyDict>() else {
            return Err(PyValueError::new_err(
                "an ndarray of items needs a string dtype description (a dict)",
            ));
        };
        let kind = descr.get_item(intern!(py, "kind"))?;
        if !kind.is_some_and(|k| k.extract::<&str>().is_ok_and(|k| k == "T")) {
            return Err(PyValueError::new_err(
                "an ndarray of items needs the dtype description {\"kind\": \"T\", ...}",
            ));
        }
        let mut coerce = true;
        let mut na_object = None;
        for (key, value) in descr.iter() {
            match key.extract::<&str>() {
                Ok("kind") => {}
                Ok("coerce") if value.is_exact_instance_of::<PyBool>() => {
                    coerce = value.is_truthy()?
                }
                Ok("na_object") => na_object = Some(value),
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "string dtype description has an unknown or ill-typed entry {}",
                        key.repr()?
                    )))
                }
            }
        }
        let kwargs = PyDict::new(py);
        kwargs.set_item(intern!(py, "coerce"), coerce)?;
        if let Some(na) = &na_object {
            kwargs.set_item(intern!(py, "na_object"), na)?;
        }
        let dtype = np::string_dtype(py, &kwargs)?;
        let items = self.bound(&items);
        let Ok(items) = items.cast_exact::<PyList>() else {
            return Err(PyValueError::new_err(
                "a string array's elements must be a list",
            ));
        };
        let arr = np::strings_array(items, &dtype, na_object.as_ref(), &shape, fortran)?;
        Ok(self.obj(arr))
    }

    #[inline(never)]
    pub(crate) fn npscalar_(&mut self, dtype: Obj, raw: &[u8]) -> PyResult<Obj> {
        let dtype = self.dtype_(&self.bound(&dtype), 0)?;
        Ok(self.obj(np::new_scalar(&dtype, raw)?))
    }
}
