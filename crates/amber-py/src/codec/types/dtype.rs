//! Dtype descriptions (spec §6.12), both halves: NumPy's own dtypes as
//! plain data, with their field titles, record type and metadata, and the
//! dtype rebuilt from such a description. A dtype that a decoder could not
//! rebuild from the description alone is refused here, never written as
//! another dtype; a description that would build a dtype holding Python
//! objects is refused on reading.

use amber_core::bytes::path::{key_segment, PathSeg};
use amber_core::codec::writer as w;
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple};

use crate::codec::decode::PyBuilder;
use crate::codec::encode::{fail, strings, Encoder, OrFail, Within, R};
use crate::errors::{self, DecodeKind, EncodeKind};
use crate::ffi::obj::Obj;
use crate::typeref;

/// NumPy's own dtypes have type numbers 0 (bool) to 23 (half); user-defined
/// (legacy) dtypes have 256 and up, new-style ones none of these.
const NPY_NTYPES_LEGACY: i64 = 24;
const NPY_VOID: i64 = 20;

/// Dtypes lately found to have no extras at any level, most recent last.
#[derive(Default)]
pub(crate) struct Seen(Vec<Obj>);

impl Seen {
    const KEEP: usize = 8;

    fn has(&self, dtype: &Bound<'_, PyAny>) -> bool {
        self.0.iter().any(|d| d.ptr() == dtype.as_ptr())
    }

    fn add(&mut self, dtype: &Bound<'_, PyAny>) {
        if self.0.len() == Self::KEEP {
            self.0.remove(0);
        }
        // SAFETY: `dtype` is a live object; the new reference keeps it (and
        // so its address) alive while it is in the list.
        self.0.push(unsafe { Obj::from_borrowed(dtype.as_ptr()) });
    }
}

/// The parts of a dtype, read once.
enum Form<'py> {
    /// No fields, no subarray: written as its `.str`.
    Simple,
    Subarray {
        base: Bound<'py, PyAny>,
        shape: Bound<'py, PyAny>,
    },
    Struct {
        names: Vec<Bound<'py, PyAny>>,
        formats: Vec<Bound<'py, PyAny>>,
        offsets: Bound<'py, PyList>,
        /// One per field, `None` for untitled ones; only if some field has one.
        titles: Option<Bound<'py, PyList>>,
    },
}

/// What a description carries beyond its plain form.
struct Extras<'py> {
    titles: Option<Bound<'py, PyList>>,
    /// The scalar type is `numpy.record`, not `numpy.void`.
    record: bool,
    /// A copy of `dtype.metadata`.
    metadata: Option<Bound<'py, PyDict>>,
}

impl<'py> Encoder<'py> {
    /// The description of `dtype`, the dtype of the array or scalar
    /// `owner`. Errors are placed under `.dtype`: fields by name, a
    /// subarray's base as `.base`, metadata as `.metadata`.
    pub(crate) fn dtype(&mut self, owner: *mut ffi::PyObject, dtype: &Bound<'py, PyAny>) -> R {
        self.dtype_descr(dtype).within(|| seg(".dtype"), owner)?;
        Ok(())
    }

    /// Write the description of `dtype`; true if no level has extras.
    fn dtype_descr(&mut self, dtype: &Bound<'py, PyAny>) -> R<bool> {
        let py = self.py;
        let known = self.plain_dtypes.has(dtype);
        let mut form = form(py, dtype)?;
        let x = if known {
            None
        } else {
            extras(py, dtype, &mut form)?
        };
        let Some(x) = x else {
            let plain = self.dtype_plain(dtype, form)?;
            if plain && !known {
                self.plain_dtypes.add(dtype);
            }
            return Ok(plain);
        };
        // (description, extras): decoders that predate extras refuse the
        // tuple rather than drop what it carries.
        w::write_tuple_header(&mut self.out, 2);
        self.nested(|e| {
            e.dtype_plain(dtype, form)?;
            e.dtype_extras(dtype, x)
        })?;
        Ok(false)
    }

    /// The str, `[base, shape]` or structured dict form; true if no part
    /// has extras.
    fn dtype_plain(&mut self, dtype: &Bound<'py, PyAny>, form: Form<'py>) -> R<bool> {
        let py = self.py;
        let (names, formats, offsets) = match form {
            Form::Simple => {
                let s = dtype.getattr(intern!(py, "str")).or_fail()?;
                self.obj(&s)?;
                return Ok(true);
            }
            Form::Subarray { base, shape } => {
                w::write_list_header(&mut self.out, 2);
                return self.nested_with(|e| {
                    let plain = e
                        .dtype_descr(&base)
                        .within(|| seg(".base"), dtype.as_ptr())?;
                    e.obj(&shape)?;
                    Ok(plain)
                });
            }
            Form::Struct {
                names,
                formats,
                offsets,
                ..
            } => (names, formats, offsets),
        };
        let names_list = PyList::new(py, &names).or_fail()?;
        let itemsize = dtype.getattr(intern!(py, "itemsize")).or_fail()?;
        let aligned = dtype
            .getattr(intern!(py, "isalignedstruct"))
            .and_then(|a| a.is_truthy())
            .or_fail()?;
        w::write_dict_header(&mut self.out, if aligned { 5 } else { 4 });
        self.nested_with(|e| {
            e.key_name(intern!(py, "names"))?;
            e.obj(&names_list)?;
            e.key_name(intern!(py, "formats"))?;
            w::write_list_header(&mut e.out, formats.len());
            let plain = e.nested_with(|e| {
                let mut plain = true;
                for (name, format) in names.iter().zip(&formats) {
                    plain &= e
                        .dtype_descr(format)
                        .within(|| field_seg(name), dtype.as_ptr())?;
                }
                Ok(plain)
            })?;
            e.key_name(intern!(py, "offsets"))?;
            e.obj(&offsets)?;
            e.key_name(intern!(py, "itemsize"))?;
            e.obj(&itemsize)?;
            if aligned {
                e.key_name(intern!(py, "aligned"))?;
                w::write_bool(&mut e.out, true);
            }
            Ok(plain)
        })
    }

    /// The extras dict: `titles`, `record`, `metadata`, in this order.
    fn dtype_extras(&mut self, dtype: &Bound<'py, PyAny>, x: Extras<'py>) -> R {
        let py = self.py;
        let n = x.titles.is_some() as usize + x.record as usize + x.metadata.is_some() as usize;
        w::write_dict_header(&mut self.out, n);
        self.nested(|e| {
            if let Some(titles) = &x.titles {
                e.key_name(intern!(py, "titles"))?;
                e.obj(titles)?;
            }
            if x.record {
                e.key_name(intern!(py, "record"))?;
                w::write_bool(&mut e.out, true);
            }
            if let Some(metadata) = &x.metadata {
                e.key_name(intern!(py, "metadata"))?;
                e.obj(metadata)
                    .within(|| seg(".metadata"), dtype.as_ptr())?;
            }
            Ok(())
        })
    }

    /// A str dict key, written like the keys of any dict.
    fn key_name(&mut self, k: &Bound<'py, PyString>) -> R {
        self.str(k.into(), strings::MAX_KEY_LEN, true)
    }

    /// Any live object, as an item.
    fn obj(&mut self, o: &Bound<'py, PyAny>) -> R {
        self.item(o.into())
    }

    /// `nested` for a body that returns a value.
    fn nested_with<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        let mut out = None;
        self.nested(|e| {
            out = Some(f(e)?);
            Ok(())
        })?;
        out.map_or_else(
            || fail(EncodeKind::Unsupported, "dtype description was not written"),
            Ok,
        )
    }
}

/// Read the parts of `dtype`, refusing field titles that are not str.
fn form<'py>(py: Python<'py>, dtype: &Bound<'py, PyAny>) -> R<Form<'py>> {
    let sub = dtype.getattr(intern!(py, "subdtype")).or_fail()?;
    if !sub.is_none() {
        return Ok(Form::Subarray {
            base: sub.get_item(0).or_fail()?,
            shape: sub.get_item(1).or_fail()?,
        });
    }
    let fields = dtype.getattr(intern!(py, "fields")).or_fail()?;
    if fields.is_none() {
        return Ok(Form::Simple);
    }
    let names: Vec<Bound<'py, PyAny>> = dtype
        .getattr(intern!(py, "names"))
        .and_then(|n| n.try_iter()?.collect())
        .or_fail()?;
    let mut formats = Vec::with_capacity(names.len());
    let offsets = PyList::empty(py);
    let titles = PyList::empty(py);
    let mut titled = false;
    for name in &names {
        // (dtype, offset) or (dtype, offset, title)
        let field = fields.get_item(name).or_fail()?;
        formats.push(field.get_item(0).or_fail()?);
        offsets.append(field.get_item(1).or_fail()?).or_fail()?;
        let title = match field.len().or_fail()? {
            3 => field.get_item(2).or_fail()?,
            _ => py.None().into_bound(py),
        };
        if !title.is_none() && !title.is_exact_instance_of::<PyString>() {
            return fail(
                EncodeKind::Unsupported,
                format!(
                    "field {} of NumPy dtype {} has the title {}; amber keeps titles that are str",
                    repr(name),
                    describe(dtype),
                    repr(&title)
                ),
            );
        }
        titled |= !title.is_none();
        titles.append(title).or_fail()?;
    }
    Ok(Form::Struct {
        names,
        formats,
        offsets,
        titles: titled.then_some(titles),
    })
}

/// Check that `dtype` is one NumPy's `dtype()` can rebuild, and collect
/// what its description must carry besides its plain form, if anything.
fn extras<'py>(
    py: Python<'py>,
    dtype: &Bound<'py, PyAny>,
    form: &mut Form<'py>,
) -> R<Option<Extras<'py>>> {
    let num: i64 = dtype
        .getattr(intern!(py, "num"))
        .and_then(|n| n.extract())
        .or_fail()?;
    let mut record = false;
    if num == NPY_VOID {
        let scalar = dtype.getattr(intern!(py, "type")).or_fail()?;
        let subarray = matches!(form, Form::Subarray { .. });
        record = scalar.is(typeref::np_record(py).or_fail()?) && !subarray;
        if !record && !scalar.is(typeref::np_void(py).or_fail()?) {
            return fail(
                EncodeKind::Unsupported,
                format!(
                    "NumPy dtype {} has scalar type {}, not numpy.void or numpy.record; amber \
                 cannot rebuild it",
                    describe(dtype),
                    type_name(&scalar)
                ),
            );
        }
    } else if !(0..NPY_NTYPES_LEGACY).contains(&num) {
        let scalar = dtype.getattr(intern!(py, "type")).or_fail()?;
        return fail(
            EncodeKind::Unsupported,
            format!(
                "NumPy dtype {} (scalar type {}) is not one of NumPy's own dtypes; amber cannot \
             rebuild it",
                describe(dtype),
                type_name(&scalar)
            ),
        );
    }
    let metadata = dtype.getattr(intern!(py, "metadata")).or_fail()?;
    let metadata = if metadata.is_none() {
        None
    } else {
        // A mappingproxy of the dtype's dict: written as a plain dict.
        let copy = PyDict::new(py);
        copy.call_method1(intern!(py, "update"), (metadata,))
            .or_fail()?;
        Some(copy)
    };
    let titles = match form {
        Form::Struct { titles, .. } => titles.take(),
        _ => None,
    };
    if titles.is_none() && !record && metadata.is_none() {
        return Ok(None);
    }
    Ok(Some(Extras {
        titles,
        record,
        metadata,
    }))
}

fn seg(s: &str) -> PathSeg {
    PathSeg::Key(s.to_string())
}

#[cold]
fn field_seg(name: &Bound<'_, PyAny>) -> PathSeg {
    match name.extract::<String>() {
        Ok(s) => PathSeg::Key(key_segment(&s)),
        Err(_) => PathSeg::Key(format!("[{}]", repr(name))),
    }
}

fn repr(o: &Bound<'_, PyAny>) -> String {
    o.repr().map(|r| r.to_string()).unwrap_or_default()
}

fn describe(dtype: &Bound<'_, PyAny>) -> String {
    dtype
        .str()
        .map(|s| s.to_string())
        .unwrap_or_else(|_| "?".into())
}

fn type_name(t: &Bound<'_, PyAny>) -> String {
    let part = |a: &str| {
        t.getattr(a)
            .and_then(|v| v.extract::<String>())
            .unwrap_or_default()
    };
    format!("{}.{}", part("__module__"), part("__qualname__"))
}

impl<'py> PyBuilder<'py, '_> {
    /// Rebuild a dtype from its description.
    #[inline(never)]
    pub(crate) fn dtype_(
        &self,
        descr: &Bound<'py, PyAny>,
        depth: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        if depth > 32 {
            return Err(PyValueError::new_err("dtype description nested too deeply"));
        }
        let dtype = match descr.cast_exact::<PyTuple>() {
            Ok(t) => self.dtype_with_extras(t, depth)?,
            Err(_) => self.dtype_plain(descr, depth, None)?,
        };
        if dtype.getattr(intern!(self.py, "hasobject"))?.is_truthy()? {
            return Err(errors::decode_fail(
                self.py,
                DecodeKind::Refused,
                "dtypes holding Python objects are refused",
            ));
        }
        Ok(dtype)
    }

    /// The str, `[base, shape]` or structured dict form; `titles` only for
    /// the last.
    fn dtype_plain(
        &self,
        descr: &Bound<'py, PyAny>,
        depth: usize,
        titles: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let np = typeref::numpy(py)?;
        if let Ok(d) = descr.cast::<PyDict>() {
            return self.dtype_struct(d, depth, titles);
        }
        if titles.is_some() {
            return Err(PyValueError::new_err(
                "dtype titles need a structured dtype",
            ));
        }
        if descr.is_exact_instance_of::<PyString>() {
            np.getattr(intern!(py, "dtype"))?.call1((descr,))
        } else if let Ok(l) = descr.cast::<PyList>() {
            if l.len() != 2 {
                return Err(PyValueError::new_err(
                    "subarray dtype must be [base, shape]",
                ));
            }
            let base = self.dtype_(&l.get_item(0)?, depth + 1)?;
            let shape: Vec<usize> = l.get_item(1)?.extract()?;
            np.getattr(intern!(py, "dtype"))?
                .call1(((base, PyTuple::new(py, shape)?),))
        } else {
            Err(PyValueError::new_err("invalid dtype description"))
        }
    }

    /// `{names, formats, offsets, itemsize[, aligned]}` and the titles.
    fn dtype_struct(
        &self,
        d: &Bound<'py, PyDict>,
        depth: usize,
        titles: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let spec = PyDict::new(py);
        for key in ["names", "offsets", "itemsize"] {
            let v = d
                .get_item(key)?
                .ok_or_else(|| PyValueError::new_err(format!("dtype lacks {key}")))?;
            spec.set_item(key, v)?;
        }
        let formats = d
            .get_item(intern!(py, "formats"))?
            .ok_or_else(|| PyValueError::new_err("dtype lacks formats"))?;
        let formats = formats
            .cast::<PyList>()
            .map_err(|_| PyValueError::new_err("dtype formats must be a list"))?;
        let built = PyList::empty(py);
        for f in formats.iter() {
            built.append(self.dtype_(&f, depth + 1)?)?;
        }
        spec.set_item(intern!(py, "formats"), built)?;
        if let Some(aligned) = d.get_item(intern!(py, "aligned"))? {
            if !aligned.is_exact_instance_of::<PyBool>() {
                return Err(PyValueError::new_err("dtype aligned flag must be a bool"));
            }
            spec.set_item(intern!(py, "aligned"), aligned)?;
        }
        if let Some(titles) = titles {
            let ok = titles.cast_exact::<PyList>().is_ok_and(|t| {
                t.len() == formats.len()
                    && t.iter()
                        .all(|x| x.is_none() || x.is_exact_instance_of::<PyString>())
            });
            if !ok {
                return Err(PyValueError::new_err(
                    "dtype titles must be a list of str or None, one per field",
                ));
            }
            spec.set_item(intern!(py, "titles"), titles)?;
        }
        typeref::numpy(py)?
            .getattr(intern!(py, "dtype"))?
            .call1((spec,))
    }

    /// `(description, extras)`: the description's dtype with the field
    /// titles, record type and metadata that `extras` gives.
    fn dtype_with_extras(
        &self,
        t: &Bound<'py, PyTuple>,
        depth: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let np = typeref::numpy(py)?;
        let bad = |msg: &str| Err(PyValueError::new_err(msg.to_string()));
        if t.len() != 2 {
            return bad("dtype description with extras must be (description, extras)");
        }
        let inner = t.get_item(0)?;
        if inner.is_exact_instance_of::<PyTuple>() {
            return bad("dtype extras cannot wrap dtype extras");
        }
        let extras = t.get_item(1)?;
        let Ok(extras) = extras.cast_exact::<PyDict>() else {
            return bad("dtype extras must be a dict");
        };
        let (mut titles, mut record, mut metadata) = (None, false, None);
        for (k, v) in extras.iter() {
            match k.extract::<String>().as_deref() {
                Ok("titles") => titles = Some(v),
                Ok("record") if v.is(PyBool::new(py, true)) => record = true,
                Ok("metadata") if v.is_exact_instance_of::<PyDict>() => metadata = Some(v),
                _ => return bad("dtype extras: titles (list), record (True), metadata (dict)"),
            }
        }
        if extras.is_empty() {
            return bad("dtype extras must not be empty");
        }
        let mut dtype = self.dtype_plain(&inner, depth, titles.as_ref())?;
        if record {
            let void: i64 = dtype.getattr(intern!(py, "num"))?.extract()?;
            if void != 20 || !dtype.getattr(intern!(py, "subdtype"))?.is_none() {
                return bad("dtype record type needs a void or structured dtype");
            }
            dtype = np
                .getattr(intern!(py, "dtype"))?
                .call1(((np.getattr(intern!(py, "record"))?, dtype),))?;
        }
        if let Some(metadata) = metadata {
            let kw = PyDict::new(py);
            kw.set_item(intern!(py, "metadata"), metadata)?;
            dtype = np
                .getattr(intern!(py, "dtype"))?
                .call((dtype,), Some(&kw))?;
        }
        Ok(dtype)
    }
}
