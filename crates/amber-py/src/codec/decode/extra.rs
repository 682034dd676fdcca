//! Builders for the stdlib types, registered classes and NumPy.

use amber_core::codec::build::{DateTimeParts, NdArray, NdData};
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyList, PyString, PyTuple};

use super::PyBuilder;
use crate::codec::state;
use crate::ffi::obj::Obj;
use crate::types::{self, datetime_api, mode, Entry};

impl<'py> PyBuilder<'py, '_> {
    /// A tzinfo argument: None or a tzinfo instance.
    fn tzinfo(&self, tz: &Option<Obj>) -> PyResult<*mut ffi::PyObject> {
        match tz {
            None => Ok(unsafe { ffi::Py_None() }),
            Some(t) => {
                let ok =
                    unsafe { ffi::PyObject_TypeCheck(t.ptr(), datetime_api().TZInfoType) } != 0;
                if !ok {
                    return Err(PyValueError::new_err("tzinfo is not a tzinfo instance"));
                }
                Ok(t.ptr())
            }
        }
    }

    pub(super) fn date_(&mut self, year: u16, month: u8, day: u8) -> PyResult<Obj> {
        let api = datetime_api();
        self.own(unsafe {
            (api.Date_FromDate)(year as i32, month as i32, day as i32, api.DateType)
        })
    }

    pub(super) fn time_(&mut self, p: DateTimeParts<Obj>) -> PyResult<Obj> {
        let api = datetime_api();
        let tz = self.tzinfo(&p.tz)?;
        self.own(unsafe {
            (api.Time_FromTimeAndFold)(
                p.hour as i32,
                p.minute as i32,
                p.second as i32,
                p.microsecond as i32,
                tz,
                p.fold as i32,
                api.TimeType,
            )
        })
    }

    pub(super) fn datetime_(&mut self, p: DateTimeParts<Obj>) -> PyResult<Obj> {
        let api = datetime_api();
        let tz = self.tzinfo(&p.tz)?;
        if p.microsecond > 999_999 {
            return Err(PyValueError::new_err("microsecond must be in 0..999999"));
        }
        self.own(unsafe {
            (api.DateTime_FromDateAndTimeAndFold)(
                p.year as i32,
                p.month as i32,
                p.day as i32,
                p.hour as i32,
                p.minute as i32,
                p.second as i32,
                p.microsecond as i32,
                tz,
                p.fold as i32,
                api.DateTimeType,
            )
        })
    }

    pub(super) fn timedelta_(&mut self, days: i32, seconds: i32, micros: i32) -> PyResult<Obj> {
        // The C constructor trusts normalized fields; check them first.
        if !(0..86_400).contains(&seconds)
            || !(0..1_000_000).contains(&micros)
            || days.unsigned_abs() > 999_999_999
        {
            return Err(PyValueError::new_err(format!(
                "timedelta fields out of range: days={days} seconds={seconds} microseconds={micros}"
            )));
        }
        let api = datetime_api();
        self.own(unsafe { (api.Delta_FromDelta)(days, seconds, micros, 0, api.DeltaType) })
    }

    pub(super) fn tz_fixed_(&mut self, offset_us: i64, name: Obj) -> PyResult<Obj> {
        let py = self.py;
        let kw = PyDict::new(py);
        kw.set_item("microseconds", offset_us)?;
        let delta = py
            .import("datetime")?
            .getattr("timedelta")?
            .call((), Some(&kw))?;
        let name = self.bound(&name);
        let tz = if name.is_none() {
            types::timezone(py)?.call1((delta,))?
        } else if name.is_exact_instance_of::<PyString>() {
            types::timezone(py)?.call1((delta, name))?
        } else {
            return Err(PyValueError::new_err("timezone name must be None or a str"));
        };
        Ok(self.obj(tz))
    }

    pub(super) fn uuid_(&mut self, bytes: [u8; 16], safe: u8) -> PyResult<Obj> {
        let py = self.py;
        let safe_uuid = types::safe_uuid(py)?;
        let is_safe = match safe {
            0 => safe_uuid.getattr("unknown")?,
            1 => safe_uuid.getattr("safe")?,
            2 => safe_uuid.getattr("unsafe")?,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "unknown UUID safety code {safe}"
                )))
            }
        };
        let kw = PyDict::new(py);
        kw.set_item("bytes", pyo3::types::PyBytes::new(py, &bytes))?;
        kw.set_item("is_safe", is_safe)?;
        Ok(self.obj(types::uuid(py)?.call((), Some(&kw))?))
    }

    pub(super) fn fraction_(&mut self, num: Obj, den: Obj) -> PyResult<Obj> {
        let (num, den) = (self.bound(&num), self.bound(&den));
        if !num.is_exact_instance_of::<PyInt>() || !den.is_exact_instance_of::<PyInt>() {
            return Err(PyValueError::new_err("Fraction parts must be ints"));
        }
        if den.le(0)? {
            return Err(PyValueError::new_err(
                "Fraction denominator must be positive",
            ));
        }
        Ok(self.obj(types::fraction(self.py)?.call1((num, den))?))
    }

    pub(super) fn object_fill_(&mut self, class: &Entry, obj: &Obj, state: Obj) -> PyResult<()> {
        let state = self.bound(&state);
        let state = state
            .cast::<PyDict>()
            .map_err(|_| PyValueError::new_err("object state must be a dict"))?;
        let obj = self.bound(obj);
        // The state is set directly: OBJECT_FILL never goes through
        // __setstate__ (OBJECT_STATE does).
        if class.mode == mode::DICT {
            state::check_attrs(class, state).map_err(PyValueError::new_err)?;
            state::set_attrs(&obj, state)
        } else {
            state::check_slots(self.py, class, state).map_err(PyValueError::new_err)?;
            state::set_slots(&obj, state)
        }
    }

    pub(super) fn object_build_(&mut self, class: &Entry, state: Obj) -> PyResult<Obj> {
        let state = self.bound(&state);
        let obj = match class.mode {
            mode::NAMEDTUPLE => self.named_tuple(class, &state)?,
            mode::HOOK => self.bound(&class.decode).call1((state,))?,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "class {} is not rebuilt from its state",
                    self.bound(&class.name)
                )))
            }
        };
        Ok(self.obj(obj))
    }

    /// OBJECT_STATE: a DICT or SLOTS class made empty from a None base, a
    /// named tuple from its fields.
    pub(super) fn object_base_(&mut self, class: &Entry, base: Obj) -> PyResult<Obj> {
        let base = self.bound(&base);
        let made_empty = matches!(class.mode, mode::DICT | mode::SLOTS);
        if made_empty && base.is_none() {
            return self.object_new_(class);
        }
        if class.mode == mode::NAMEDTUPLE {
            let obj = self.named_tuple(class, &base)?;
            return Ok(self.obj(obj));
        }
        Err(PyValueError::new_err(format!(
            "class {} is not made from {} base",
            self.bound(&class.name),
            if base.is_none() { "a None" } else { "this" }
        )))
    }

    /// A named tuple from its fields: `tuple.__new__(cls, fields)`, without
    /// calling the class's own `__new__`.
    fn named_tuple(
        &self,
        class: &Entry,
        fields: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let fields = fields
            .cast_exact::<PyTuple>()
            .map_err(|_| PyValueError::new_err("the fields of a named tuple must be a tuple"))?;
        let want = class.names(py).len();
        if fields.len() != want {
            return Err(PyValueError::new_err(format!(
                "{} has {want} fields, the state has {} items",
                self.bound(&class.name),
                fields.len()
            )));
        }
        let tuple_new = py.get_type::<PyTuple>().getattr("__new__")?;
        tuple_new.call1((self.bound(&class.cls), fields))
    }

    /// Rebuild a dtype from its description (see `codec/encode/dtype.rs`).
    fn dtype(&self, descr: &Bound<'py, PyAny>, depth: usize) -> PyResult<Bound<'py, PyAny>> {
        if depth > 32 {
            return Err(PyValueError::new_err("dtype description nested too deeply"));
        }
        let dtype = match descr.cast_exact::<PyTuple>() {
            Ok(t) => self.dtype_with_extras(t, depth)?,
            Err(_) => self.dtype_plain(descr, depth, None)?,
        };
        if dtype.getattr("hasobject")?.is_truthy()? {
            return Err(PyValueError::new_err(
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
        let np = types::numpy(py)?;
        if let Ok(d) = descr.cast::<PyDict>() {
            return self.dtype_struct(d, depth, titles);
        }
        if titles.is_some() {
            return Err(PyValueError::new_err(
                "dtype titles need a structured dtype",
            ));
        }
        if descr.is_exact_instance_of::<PyString>() {
            np.getattr("dtype")?.call1((descr,))
        } else if let Ok(l) = descr.cast::<PyList>() {
            if l.len() != 2 {
                return Err(PyValueError::new_err(
                    "subarray dtype must be [base, shape]",
                ));
            }
            let base = self.dtype(&l.get_item(0)?, depth + 1)?;
            let shape: Vec<usize> = l.get_item(1)?.extract()?;
            np.getattr("dtype")?
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
            .get_item("formats")?
            .ok_or_else(|| PyValueError::new_err("dtype lacks formats"))?;
        let formats = formats
            .cast::<PyList>()
            .map_err(|_| PyValueError::new_err("dtype formats must be a list"))?;
        let built = PyList::empty(py);
        for f in formats.iter() {
            built.append(self.dtype(&f, depth + 1)?)?;
        }
        spec.set_item("formats", built)?;
        if let Some(aligned) = d.get_item("aligned")? {
            if !aligned.is_exact_instance_of::<pyo3::types::PyBool>() {
                return Err(PyValueError::new_err("dtype aligned flag must be a bool"));
            }
            spec.set_item("aligned", aligned)?;
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
            spec.set_item("titles", titles)?;
        }
        types::numpy(py)?.getattr("dtype")?.call1((spec,))
    }

    /// `(description, extras)`: the description's dtype with the field
    /// titles, record type and metadata that `extras` gives.
    fn dtype_with_extras(
        &self,
        t: &Bound<'py, PyTuple>,
        depth: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let np = types::numpy(py)?;
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
                Ok("record") if v.is(pyo3::types::PyBool::new(py, true)) => record = true,
                Ok("metadata") if v.is_exact_instance_of::<PyDict>() => metadata = Some(v),
                _ => return bad("dtype extras: titles (list), record (True), metadata (dict)"),
            }
        }
        if extras.is_empty() {
            return bad("dtype extras must not be empty");
        }
        let mut dtype = self.dtype_plain(&inner, depth, titles.as_ref())?;
        if record {
            let void: i64 = dtype.getattr("num")?.extract()?;
            if void != 20 || !dtype.getattr("subdtype")?.is_none() {
                return bad("dtype record type needs a void or structured dtype");
            }
            dtype = np
                .getattr("dtype")?
                .call1(((np.getattr("record")?, dtype),))?;
        }
        if let Some(metadata) = metadata {
            let kw = PyDict::new(py);
            kw.set_item("metadata", metadata)?;
            dtype = np.getattr("dtype")?.call((dtype,), Some(&kw))?;
        }
        Ok(dtype)
    }

    pub(super) fn ndarray_(&mut self, a: NdArray<'_, Obj>) -> PyResult<Obj> {
        let py = self.py;
        let np = types::numpy(py)?;
        let dtype = self.dtype(&self.bound(&a.dtype), 0)?;
        let itemsize: u64 = dtype.getattr("itemsize")?.extract()?;
        let count = a.shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d));
        let nbytes = count.and_then(|c| c.checked_mul(itemsize));
        let Some(nbytes) = nbytes.and_then(|n| usize::try_from(n).ok()) else {
            return Err(PyValueError::new_err("ndarray size overflows"));
        };
        let shape = PyTuple::new(py, &a.shape)?;
        let u1 = np.getattr("uint8")?;
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
                    let view = self.input_slice(offset, nbytes)?;
                    let flat = np.getattr("frombuffer")?.call1((view, &u1))?;
                    Some(if self.opts.zero_copy {
                        flat
                    } else {
                        flat.call_method0("copy")?
                    })
                }
            }
            NdData::OutOfBand { index } => {
                let buf = self.buffer(index)?.clone();
                let flat = np.getattr("frombuffer")?.call1((buf, &u1))?;
                let len: usize = flat.len()?;
                if len != nbytes {
                    return Err(PyValueError::new_err(format!(
                        "out-of-band buffer {index} is {len} bytes, the array needs {nbytes}"
                    )));
                }
                (nbytes > 0).then_some(flat)
            }
        };
        let kw = PyDict::new(py);
        kw.set_item("order", if a.fortran { "F" } else { "C" })?;
        let arr = match flat {
            Some(flat) => {
                flat.call_method1("view", (&dtype,))?
                    .call_method("reshape", (shape,), Some(&kw))?
            }
            None => {
                // No bytes: an empty shape or a zero-size dtype. The ndarray
                // constructor keeps the dtype as given; np.empty would not
                // (it makes an unsized S0/U0 into S1/U1 of memory it never
                // wrote, and a generic >M8 into <M8).
                kw.set_item("dtype", &dtype)?;
                np.getattr("ndarray")?.call((shape,), Some(&kw))?
            }
        };
        // The array must hold the bytes it was given and no others, by the
        // itemsize of the dtype NumPy actually built.
        let built: usize = arr.getattr("nbytes")?.extract()?;
        if built != nbytes {
            return Err(PyValueError::new_err(format!(
                "NumPy built an array of {built} bytes from dtype {} and shape {:?}, the data \
                 is {nbytes}",
                dtype.str()?,
                a.shape
            )));
        }
        Ok(self.obj(arr))
    }

    pub(super) fn npscalar_(&mut self, dtype: Obj, raw: &[u8]) -> PyResult<Obj> {
        let py = self.py;
        let np = types::numpy(py)?;
        let dtype = self.dtype(&self.bound(&dtype), 0)?;
        if !dtype.getattr("subdtype")?.is_none() {
            return Err(PyValueError::new_err(
                "numpy scalar dtype must not be a subarray",
            ));
        }
        let itemsize: usize = dtype.getattr("itemsize")?.extract()?;
        if itemsize != raw.len() {
            return Err(PyValueError::new_err(
                "numpy scalar size does not match its dtype",
            ));
        }
        let kw = PyDict::new(py);
        kw.set_item("dtype", &dtype)?;
        let scalar = if itemsize == 0 {
            // frombuffer refuses a zero itemsize: a 0-d array without bytes
            // (see ndarray_) gives the scalar, which reads none.
            np.getattr("ndarray")?
                .call(((),), Some(&kw))?
                .get_item(())?
        } else {
            kw.set_item("count", 1)?;
            np.getattr("frombuffer")?
                .call((pyo3::types::PyBytes::new(py, raw),), Some(&kw))?
                .get_item(0)?
        };
        Ok(self.obj(scalar))
    }
}
