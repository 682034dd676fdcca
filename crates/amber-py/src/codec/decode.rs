//! The decoder: amber-core's walker drives `PyBuilder`, which makes Python
//! objects. The builder never imports a module or calls anything named by
//! the data: classes come only from the registry (see `registry.rs`). The
//! type families outside the hot set are built in `types/`, next to their
//! encoders.

use amber_core::codec::build::{ArrowTable, Build, DateTimeParts, DictKind, NdArray, SeqKind};
use amber_core::codec::error::{DecodeError, ErrorKind, Problem};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;

use crate::codec::registry::Entry;
use crate::errors::{self, DecodeKind};
use crate::ffi::buffer::copy_to_bytes;
use crate::ffi::obj::Obj;

/// Options of one `loads` call.
pub struct Options<'py> {
    /// The input object, for zero-copy views.
    pub input: Bound<'py, PyAny>,
    pub buffers: Option<Vec<Bound<'py, PyAny>>>,
    pub zero_copy: bool,
}

pub struct PyBuilder<'py, 'a> {
    pub py: Python<'py>,
    pub opts: &'a Options<'py>,
    /// A memoryview of the input, made on first zero-copy use.
    input_view: Option<Bound<'py, PyAny>>,
    /// The input is an immutable `bytes`: large copies out of it may run
    /// with the GIL released.
    pub(crate) input_fixed: bool,
}

impl<'py, 'a> PyBuilder<'py, 'a> {
    pub fn new(py: Python<'py>, opts: &'a Options<'py>) -> Self {
        PyBuilder {
            py,
            opts,
            input_view: None,
            input_fixed: opts.input.is_exact_instance_of::<pyo3::types::PyBytes>(),
        }
    }

    /// # Safety
    /// `p` is a new reference or NULL with an exception set: what CPython's
    /// constructors return.
    #[inline(always)]
    pub(crate) unsafe fn own(&self, p: *mut ffi::PyObject) -> PyResult<Obj> {
        // SAFETY: this function's contract.
        unsafe { Obj::from_owned(p) }.ok_or_else(|| PyErr::fetch(self.py))
    }

    #[inline(always)]
    pub(crate) fn check(&self, rc: std::os::raw::c_int) -> PyResult<()> {
        if rc < 0 {
            Err(PyErr::fetch(self.py))
        } else {
            Ok(())
        }
    }

    pub(crate) fn bound(&self, o: &Obj) -> Bound<'py, PyAny> {
        o.bind(self.py)
    }

    pub(crate) fn obj(&self, b: Bound<'py, PyAny>) -> Obj {
        Obj::from_bound(b)
    }

    /// The `i`-th out-of-band buffer.
    pub(crate) fn buffer(&self, i: usize) -> PyResult<&Bound<'py, PyAny>> {
        let Some(bufs) = &self.opts.buffers else {
            return Err(errors::decode_fail(
                self.py,
                DecodeKind::Buffer,
                "the data holds out-of-band buffers; pass them with loads(..., buffers=...)",
            ));
        };
        bufs.get(i).ok_or_else(|| {
            errors::decode_fail(
                self.py,
                DecodeKind::Buffer,
                format!("out-of-band buffer {i} is missing ({} given)", bufs.len()),
            )
        })
    }

    /// A read-only memoryview of `n` input bytes at `offset`.
    pub(crate) fn input_slice(&mut self, offset: usize, n: usize) -> PyResult<Bound<'py, PyAny>> {
        if self.input_view.is_none() {
            // SAFETY: the input is a live object held by the options, and the
            // GIL is held; the call returns a new reference or NULL.
            let mv = unsafe { ffi::PyMemoryView_FromObject(self.opts.input.as_ptr()) };
            // SAFETY: `mv` is that new reference (or NULL, an error).
            let mv = unsafe { Bound::from_owned_ptr_or_err(self.py, mv) }?;
            self.input_view = Some(
                mv.call_method0(intern!(self.py, "toreadonly"))?
                    .call_method1(intern!(self.py, "cast"), ("B",))?,
            );
        }
        let mv = self.input_view.as_ref().expect("set above");
        let slice = pyo3::types::PySlice::new(self.py, offset as isize, (offset + n) as isize, 1);
        mv.get_item(slice)
    }
}

impl<'py> Build for PyBuilder<'py, '_> {
    type V = Obj;
    type Err = PyErr;
    type Class = Bound<'py, Entry>;

    #[inline(always)]
    fn none(&mut self) -> PyResult<Obj> {
        Ok(Obj::none(self.py))
    }

    #[inline(always)]
    fn bool(&mut self, v: bool) -> PyResult<Obj> {
        Ok(Obj::bool(self.py, v))
    }

    #[inline(always)]
    fn int(&mut self, v: i64) -> PyResult<Obj> {
        Obj::int(self.py, v)
    }

    fn bigint(&mut self, le: &[u8]) -> PyResult<Obj> {
        Obj::int_from_le_bytes(self.py, le)
    }

    #[inline(always)]
    fn float(&mut self, v: f64) -> PyResult<Obj> {
        Obj::float(self.py, v)
    }

    fn complex(&mut self, re: f64, im: f64) -> PyResult<Obj> {
        self.complex_(re, im)
    }

    #[inline(always)]
    fn str(&mut self, s: &str, ascii: bool) -> PyResult<Obj> {
        // SAFETY: the GIL is held; `s` is ASCII when the walker says so
        // (checked as it read it).
        unsafe { self.own(crate::ffi::text::new_str(s, ascii)) }
    }

    fn str_surrogates(&mut self, raw: &[u8]) -> PyResult<Obj> {
        // SAFETY: `raw` is valid for its length; the decoder returns a new
        // reference or NULL.
        unsafe {
            self.own(ffi::PyUnicode_DecodeUTF8(
                raw.as_ptr().cast(),
                raw.len() as ffi::Py_ssize_t,
                c"surrogatepass".as_ptr(),
            ))
        }
    }

    fn bytes(&mut self, b: &[u8], offset: usize, mutable: bool) -> PyResult<Obj> {
        if self.opts.zero_copy && !mutable {
            let v = self.input_slice(offset, b.len())?;
            return Ok(self.obj(v));
        }
        let copy = copy_to_bytes(self.py, b, mutable, self.input_fixed)?;
        Ok(self.obj(copy))
    }

    fn bytes_oob(&mut self, index: usize, mutable: bool) -> PyResult<Obj> {
        let buf = self.buffer(index)?.clone();
        let py = self.py;
        let v = if mutable {
            py.get_type::<pyo3::types::PyByteArray>().call1((buf,))?
        } else if self.opts.zero_copy {
            pyo3::types::PyMemoryView::from(&buf)?
                .call_method0(intern!(py, "toreadonly"))?
                .call_method1(intern!(py, "cast"), ("B",))?
        } else {
            py.get_type::<pyo3::types::PyBytes>().call1((buf,))?
        };
        Ok(self.obj(v))
    }

    #[inline(always)]
    fn seq_begin(&mut self, kind: SeqKind, n: usize) -> PyResult<Obj> {
        let n = n as ffi::Py_ssize_t;
        // SAFETY: each constructor returns a new reference or NULL.
        unsafe {
            match kind {
                SeqKind::List => self.own(ffi::PyList_New(n)),
                SeqKind::SharedList => self.own(ffi::PyList_New(0)),
                SeqKind::Tuple => self.own(ffi::PyTuple_New(n)),
                SeqKind::Set => self.own(ffi::PySet_New(std::ptr::null_mut())),
                SeqKind::FrozenSet => self.own(ffi::PyFrozenSet_New(std::ptr::null_mut())),
                SeqKind::Deque => unreachable!("deques start with deque_begin"),
            }
        }
    }

    #[inline(always)]
    fn seq_item(&mut self, seq: &Obj, kind: SeqKind, i: usize, item: Obj) -> PyResult<()> {
        // SAFETY: the walker (amber-core) hands back the object `seq_begin`
        // made for this `kind`, and for a list or tuple of `n` items calls
        // this once for each `i < n` before anyone else sees it, so each
        // SET_ITEM fills an empty slot in bounds (and takes `item`'s
        // reference); the other calls take live objects, with the GIL held.
        unsafe {
            match kind {
                SeqKind::List => {
                    // Pre-sized and seen by no one else until complete.
                    crate::ffi::seq::list_fill(seq.ptr(), i, item.into_ptr());
                    Ok(())
                }
                SeqKind::SharedList => self.check(ffi::PyList_Append(seq.ptr(), item.ptr())),
                SeqKind::Tuple => {
                    crate::ffi::seq::tuple_fill(seq.ptr(), i, item.into_ptr());
                    Ok(())
                }
                SeqKind::Set | SeqKind::FrozenSet => {
                    self.check(ffi::PySet_Add(seq.ptr(), item.ptr()))
                }
                SeqKind::Deque => {
                    self.bound(seq)
                        .call_method1(intern!(self.py, "append"), (self.bound(&item),))?;
                    Ok(())
                }
            }
        }
    }

    #[inline(always)]
    fn seq_end(&mut self, seq: Obj, kind: SeqKind) -> PyResult<Obj> {
        if kind == SeqKind::Tuple {
            // SAFETY: `seq` is the exact tuple `seq_begin` made, every slot
            // filled by `seq_item` (the walker calls it `n` times first).
            unsafe { crate::ffi::gc::untrack_atoms_tuple(seq.ptr()) };
        }
        Ok(seq)
    }

    fn deque_begin(&mut self, maxlen: Obj) -> PyResult<Obj> {
        self.deque_begin_(maxlen)
    }

    #[inline(always)]
    fn dict_begin(&mut self, kind: DictKind, n: usize) -> PyResult<Obj> {
        match kind {
            // SAFETY: both constructors return a new reference or NULL.
            DictKind::Dict => unsafe {
                if n > 5 {
                    self.own(crate::ffi::dict::new_presized_raw(n))
                } else {
                    self.own(ffi::PyDict_New())
                }
            },
            DictKind::Ordered => self.ordered_dict_(),
            DictKind::Counter => self.counter_(),
            DictKind::Default(code) => self.defaultdict_(code),
        }
    }

    #[inline(always)]
    fn dict_item(&mut self, dict: &Obj, key: Obj, value: Obj) -> PyResult<()> {
        // SAFETY: `dict`, `key` and `value` are live (owned by their `Obj`s)
        // and the GIL is held; both setters take their own references.
        unsafe {
            if ffi::PyDict_CheckExact(dict.ptr()) != 0
                || ffi::Py_TYPE(dict.ptr()) != crate::typeref::ordered_dict(self.py)?.as_type_ptr()
            {
                self.check(ffi::PyDict_SetItem(dict.ptr(), key.ptr(), value.ptr()))
            } else {
                self.check(ffi::PyObject_SetItem(dict.ptr(), key.ptr(), value.ptr()))
            }
        }
    }

    fn date(&mut self, year: u16, month: u8, day: u8) -> PyResult<Obj> {
        self.date_(year, month, day)
    }
    fn time(&mut self, p: DateTimeParts<Obj>) -> PyResult<Obj> {
        self.time_(p)
    }
    fn datetime(&mut self, p: DateTimeParts<Obj>) -> PyResult<Obj> {
        self.datetime_(p)
    }
    fn timedelta(&mut self, days: i32, seconds: i32, micros: i32) -> PyResult<Obj> {
        self.timedelta_(days, seconds, micros)
    }
    fn tz_utc(&mut self) -> PyResult<Obj> {
        self.tz_utc_()
    }
    fn tz_fixed(&mut self, offset_us: i64, name: Obj) -> PyResult<Obj> {
        self.tz_fixed_(offset_us, name)
    }
    fn tz_zone(&mut self, key: Obj) -> PyResult<Obj> {
        self.tz_zone_(key)
    }
    fn decimal(&mut self, s: &str) -> PyResult<Obj> {
        self.decimal_(s)
    }
    fn uuid(&mut self, bytes: [u8; 16], safe: u8) -> PyResult<Obj> {
        self.uuid_(bytes, safe)
    }
    fn fraction(&mut self, num: Obj, den: Obj) -> PyResult<Obj> {
        self.fraction_(num, den)
    }

    fn class(&mut self, name: &Obj) -> PyResult<Bound<'py, Entry>> {
        self.class_(name)
    }
    fn enum_member(&mut self, class: &Bound<'py, Entry>, value: Obj) -> PyResult<Obj> {
        self.enum_member_(class.get(), value)
    }
    fn object_new(&mut self, class: &Bound<'py, Entry>) -> PyResult<Obj> {
        self.object_new_(class.get())
    }
    fn object_fill(&mut self, class: &Bound<'py, Entry>, obj: &Obj, state: Obj) -> PyResult<()> {
        self.object_fill_(class.get(), obj, state)
    }
    fn object_build(&mut self, class: &Bound<'py, Entry>, state: Obj) -> PyResult<Obj> {
        self.object_build_(class.get(), state)
    }
    fn object_base(&mut self, class: &Bound<'py, Entry>, base: Obj) -> PyResult<Obj> {
        self.object_base_(class.get(), base)
    }
    fn object_setstate(
        &mut self,
        class: &Bound<'py, Entry>,
        obj: &Obj,
        state: Obj,
    ) -> PyResult<()> {
        self.object_setstate_(class.get(), obj, state)
    }
    fn ndarray(&mut self, array: NdArray<'_, Obj>) -> PyResult<Obj> {
        self.ndarray_(array)
    }
    fn ndarray_items(
        &mut self,
        dtype: Obj,
        shape: Vec<u64>,
        fortran: bool,
        items: Obj,
    ) -> PyResult<Obj> {
        self.ndarray_items_(dtype, shape, fortran, items)
    }
    fn arrow(&mut self, table: ArrowTable<'_, Obj>) -> PyResult<Obj> {
        self.arrow_(table)
    }

    fn npscalar(&mut self, dtype: Obj, raw: &[u8]) -> PyResult<Obj> {
        self.npscalar_(dtype, raw)
    }

    fn key_str(&self, key: &Obj) -> Option<String> {
        self.bound(key).extract::<String>().ok()
    }
}

/// Turn a decode error into `amber.DecodeError`, with its kind, offset and
/// path. A builder's error is either a `DecodeError` it made without a place
/// (see `errors::decode_fail`), given its place here, or another exception
/// raised while building a value the bytes describe: malformed data.
#[cold]
pub fn to_pyerr(py: Python<'_>, e: DecodeError<PyErr>) -> PyErr {
    let path = e.path_string();
    let shown = e.path_for_message();
    let offset = e.offset;
    let (kind, msg, cause) = match e.problem {
        Problem::Data(kind, m) => (DecodeKind::Data(kind).name().to_string(), m, None),
        Problem::OutOfMemory(m) => {
            return pyo3::exceptions::PyMemoryError::new_err(format!(
                "{m} (at byte {offset}, {shown})"
            ))
        }
        Problem::Build(err) if errors::passes_through(py, &err) => return err,
        Problem::Build(err) if err.is_instance(py, errors::decode_error(py)) => {
            match placeless(py, &err) {
                Some((kind, msg)) => (kind, msg, err.cause(py)),
                // A complete error from a nested decode.
                None => return err,
            }
        }
        Problem::Build(err) => (
            DecodeKind::Data(ErrorKind::Malformed).name().to_string(),
            errors::described(py, &err),
            Some(err),
        ),
    };
    errors::make(
        py,
        errors::decode_error(py),
        &kind,
        format!("{msg} (at byte {offset}, {shown})"),
        Some(offset),
        Some(path),
        cause,
    )
}

/// The kind and message of a `DecodeError` made without an offset.
fn placeless(py: Python<'_>, err: &PyErr) -> Option<(String, String)> {
    let exc = err.value(py);
    if !exc.getattr(intern!(py, "offset")).ok()?.is_none() {
        return None;
    }
    let kind = exc.getattr(intern!(py, "kind")).ok()?.extract().ok()?;
    Some((kind, exc.str().ok()?.to_string()))
}
