//! Encoding of everything outside the hot set: sets, bytes, complex, the
//! stdlib types amber keeps exactly, registered classes and NumPy.

use amber_core::codec::format as f;
use amber_core::codec::writer as w;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use super::{fail, Encoder, Memo, OrFail, R};
use crate::ffi::obj::Obj;
use crate::types::{self, datetime_api, kind, mode};

impl<'py> Encoder<'py> {
    /// Types outside the hot set.
    pub(super) unsafe fn other(&mut self, o: *mut ffi::PyObject, t: *mut ffi::PyTypeObject) -> R {
        unsafe {
            if t == &raw mut ffi::PyBytes_Type {
                return self.shared_leaf(o, |e| e.bytes_like(o, false));
            }
            if t == &raw mut ffi::PyByteArray_Type {
                return self.shared_leaf(o, |e| e.bytes_like(o, true));
            }
            if t == &raw mut ffi::PySet_Type || t == &raw mut ffi::PyFrozenSet_Type {
                return self.set(o, t == &raw mut ffi::PyFrozenSet_Type);
            }
            if t == &raw mut ffi::PyComplex_Type {
                let c = ffi::PyComplex_AsCComplex(o);
                w::write_complex(&mut self.out, c.real, c.imag);
                return Ok(());
            }
        }
        let api = datetime_api();
        unsafe {
            if t == api.DateTimeType {
                return self.nested(|e| e.datetime(o));
            }
            if t == api.DateType {
                w::write_date(
                    &mut self.out,
                    ffi::PyDateTime_GET_YEAR(o) as u16,
                    ffi::PyDateTime_GET_MONTH(o) as u8,
                    ffi::PyDateTime_GET_DAY(o) as u8,
                );
                return Ok(());
            }
        }
        let py = self.py;
        let (k, extra) = types::classify(py, t).or_fail()?;
        unsafe {
            match k {
                kind::TIME => self.nested(|e| e.time(o)),
                kind::TIMEDELTA => {
                    w::write_timedelta(
                        &mut self.out,
                        ffi::PyDateTime_DELTA_GET_DAYS(o),
                        ffi::PyDateTime_DELTA_GET_SECONDS(o),
                        ffi::PyDateTime_DELTA_GET_MICROSECONDS(o),
                    );
                    Ok(())
                }
                kind::TIMEZONE => self.timezone(o),
                kind::ZONEINFO => {
                    let key = Bound::from_borrowed_ptr(py, o).getattr("key").or_fail()?;
                    if key.is_none() {
                        return fail(
                            "a ZoneInfo made from a file has no key and cannot be encoded",
                        );
                    }
                    self.out.push(f::TZ_ZONE);
                    self.nested(|e| e.item(key.as_ptr()))
                }
                kind::DECIMAL => {
                    let s = Bound::from_borrowed_ptr(py, o).str().or_fail()?;
                    w::write_decimal(&mut self.out, s.to_str().or_fail()?.as_bytes());
                    Ok(())
                }
                kind::UUID => self.uuid(o),
                kind::FRACTION => {
                    let fr = Bound::from_borrowed_ptr(py, o);
                    let num = fr.getattr("numerator").or_fail()?;
                    let den = fr.getattr("denominator").or_fail()?;
                    self.out.push(f::FRACTION);
                    self.nested(|e| {
                        e.fraction_part(num.as_ptr())?;
                        e.fraction_part(den.as_ptr())
                    })
                }
                kind::ORDERED_DICT => self.shared_container(o, |e| {
                    let d = Bound::from_borrowed_ptr(py, o);
                    let n = d.len().or_fail()?;
                    w::write_counted(&mut e.out, f::ORDERED_DICT, n);
                    // Iterate in the OrderedDict's own order, not the dict's.
                    let items = d.call_method0("items").or_fail()?;
                    e.pairs_from_iter(o, &items, n)
                }),
                kind::COUNTER => self.shared_container(o, |e| {
                    let n = ffi::PyDict_Size(o) as usize;
                    w::write_counted(&mut e.out, f::COUNTER, n);
                    e.dict_pairs(o, n)
                }),
                kind::DEFAULTDICT => self.shared_container(o, |e| e.defaultdict(o)),
                kind::DEQUE => self.shared_container(o, |e| {
                    let d = Bound::from_borrowed_ptr(py, o);
                    e.out.push(f::DEQUE);
                    let maxlen = d.getattr("maxlen").or_fail()?;
                    e.item(maxlen.as_ptr())?;
                    let n = d.len().or_fail()?;
                    w::write_count(&mut e.out, n);
                    e.iter_items(o, &d, n)
                }),
                // Arrays hold no Python objects: registered once written.
                kind::NDARRAY => self.shared_leaf(o, |e| e.nested(|e| e.ndarray(o))),
                kind::NPSCALAR => self.nested(|e| e.npscalar(o)),
                kind::REGISTERED => self.registered(o, &extra),
                _ => {
                    let msg: String = extra
                        .extract()
                        .unwrap_or_else(|_| "unsupported type".into());
                    fail(msg)
                }
            }
        }
    }

    /// A numerator or denominator, within the format's size limit.
    unsafe fn fraction_part(&mut self, part: *mut ffi::PyObject) -> R {
        let at = self.out.len();
        unsafe { self.item(part) }?;
        if self.out.len() - at > f::FRACTION_PART_MAX_ITEM {
            return fail(format!(
                "Fraction parts are limited to {} bytes ({} bits), to bound decoding time",
                f::FRACTION_PART_MAX_BYTES,
                f::FRACTION_PART_MAX_BYTES * 8 - 1
            ));
        }
        Ok(())
    }

    /// A mutable container that may be shared: memo bookkeeping around `body`.
    unsafe fn shared_container(
        &mut self,
        o: *mut ffi::PyObject,
        body: impl FnOnce(&mut Self) -> R,
    ) -> R {
        if let Memo::Done = unsafe { self.memo_before(o, true) } {
            return Ok(());
        }
        body(self)
    }

    /// An immutable value that may be shared (bytes, arrays): memo after
    /// writing.
    unsafe fn shared_leaf(
        &mut self,
        o: *mut ffi::PyObject,
        body: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let memo = unsafe { self.memo_before(o, false) };
        match memo {
            Memo::Done => Ok(()),
            Memo::Plain => body(self),
            Memo::Shared(at) => {
                body(self)?;
                // Only an array can reach itself (through its dtype's
                // metadata), and REPLACE cannot stand before an array.
                if self.memo.contains_key(&(o as usize)) {
                    return fail(
                        "the array refers to itself through its dtype's metadata; amber \
                         cannot encode this cycle",
                    );
                }
                self.memo_after_immutable(o, at);
                Ok(())
            }
        }
    }

    unsafe fn set(&mut self, o: *mut ffi::PyObject, frozen: bool) -> R {
        let memo = unsafe { self.memo_before(o, !frozen) };
        if let Memo::Done = memo {
            return Ok(());
        }
        let n = unsafe { ffi::PySet_Size(o) } as usize;
        w::write_counted(&mut self.out, if frozen { f::FROZENSET } else { f::SET }, n);
        let s = unsafe { Bound::from_borrowed_ptr(self.py, o) };
        unsafe { self.iter_items(o, &s, n) }?;
        if let (true, Memo::Shared(at)) = (frozen, memo) {
            self.memo_after_immutable(o, at);
        }
        Ok(())
    }

    /// Pairs from an iterator of `(key, value)` tuples.
    unsafe fn pairs_from_iter(
        &mut self,
        o: *mut ffi::PyObject,
        items: &Bound<'py, PyAny>,
        n: usize,
    ) -> R {
        self.nested(|e| unsafe { e.pairs_from_iter_body(o, items, n) })
    }

    unsafe fn pairs_from_iter_body(
        &mut self,
        o: *mut ffi::PyObject,
        items: &Bound<'py, PyAny>,
        n: usize,
    ) -> R {
        let mut count = 0;
        for pair in items.try_iter().or_fail()? {
            let pair = pair.or_fail()?;
            let pair = pair.cast::<PyTuple>().map_err(PyErr::from).or_fail()?;
            if count == n || pair.len() != 2 {
                return fail("mapping changed size during encoding");
            }
            let (k, v) = (pair.get_item(0).or_fail()?, pair.get_item(1).or_fail()?);
            use super::Within;
            let py = self.py;
            let seg = || super::key_seg(py, k.as_ptr(), count);
            unsafe { self.key(k.as_ptr()) }.within(seg, o)?;
            unsafe { self.item(v.as_ptr()) }.within(seg, o)?;
            count += 1;
        }
        if count != n {
            return fail("mapping changed size during encoding");
        }
        Ok(())
    }

    unsafe fn defaultdict(&mut self, o: *mut ffi::PyObject) -> R {
        let py = self.py;
        let d = unsafe { Bound::from_borrowed_ptr(py, o) };
        let factory = d.getattr("default_factory").or_fail()?;
        let code = factory_code(py, &factory).or_fail()?;
        let Some(code) = code else {
            let name = factory.repr().map(|r| r.to_string()).unwrap_or_default();
            return fail(format!(
                "defaultdict factory {name} is not a builtin; amber encodes defaultdicts whose \
                 default_factory is None or one of: {}",
                f::DEFAULT_FACTORIES[1..].join(", ")
            ));
        };
        let n = unsafe { ffi::PyDict_Size(o) } as usize;
        w::write_defaultdict_header(&mut self.out, code, n);
        unsafe { self.dict_pairs(o, n) }
    }

    unsafe fn datetime(&mut self, o: *mut ffi::PyObject) -> R {
        let tz = unsafe { ffi::PyDateTime_DATE_GET_TZINFO(o) };
        let has_tz = tz != unsafe { ffi::Py_None() };
        unsafe {
            w::write_datetime(
                &mut self.out,
                ffi::PyDateTime_GET_YEAR(o) as u16,
                ffi::PyDateTime_GET_MONTH(o) as u8,
                ffi::PyDateTime_GET_DAY(o) as u8,
                ffi::PyDateTime_DATE_GET_HOUR(o) as u8,
                ffi::PyDateTime_DATE_GET_MINUTE(o) as u8,
                ffi::PyDateTime_DATE_GET_SECOND(o) as u8,
                ffi::PyDateTime_DATE_GET_MICROSECOND(o) as u32,
                ffi::PyDateTime_DATE_GET_FOLD(o) != 0,
                has_tz,
            );
        }
        if has_tz {
            unsafe { self.item(tz) }?;
        }
        Ok(())
    }

    unsafe fn time(&mut self, o: *mut ffi::PyObject) -> R {
        let tz = unsafe { ffi::PyDateTime_TIME_GET_TZINFO(o) };
        let has_tz = tz != unsafe { ffi::Py_None() };
        unsafe {
            w::write_time(
                &mut self.out,
                ffi::PyDateTime_TIME_GET_HOUR(o) as u8,
                ffi::PyDateTime_TIME_GET_MINUTE(o) as u8,
                ffi::PyDateTime_TIME_GET_SECOND(o) as u8,
                ffi::PyDateTime_TIME_GET_MICROSECOND(o) as u32,
                ffi::PyDateTime_TIME_GET_FOLD(o) != 0,
                has_tz,
            );
        }
        if has_tz {
            unsafe { self.item(tz) }?;
        }
        Ok(())
    }

    unsafe fn timezone(&mut self, o: *mut ffi::PyObject) -> R {
        if o == datetime_api().TimeZone_UTC {
            self.out.push(f::TZ_UTC);
            return Ok(());
        }
        let tz = unsafe { Bound::from_borrowed_ptr(self.py, o) };
        // (offset,) or (offset, name), as pickle sees it.
        let args = tz.call_method0("__getinitargs__").or_fail()?;
        let args = args.cast::<PyTuple>().map_err(PyErr::from).or_fail()?;
        let offset = args.get_item(0).or_fail()?;
        let off = offset.as_ptr();
        let us = unsafe {
            ffi::PyDateTime_DELTA_GET_DAYS(off) as i64 * 86_400_000_000
                + ffi::PyDateTime_DELTA_GET_SECONDS(off) as i64 * 1_000_000
                + ffi::PyDateTime_DELTA_GET_MICROSECONDS(off) as i64
        };
        w::write_tz_fixed(&mut self.out, us);
        self.nested(|e| match args.get_item(1) {
            Ok(name) => unsafe { e.item(name.as_ptr()) },
            Err(_) => {
                w::write_none(&mut e.out);
                Ok(())
            }
        })
    }

    unsafe fn uuid(&mut self, o: *mut ffi::PyObject) -> R {
        let u = unsafe { Bound::from_borrowed_ptr(self.py, o) };
        let b = u.getattr("bytes").or_fail()?;
        let b = b
            .cast::<PyBytes>()
            .map_err(PyErr::from)
            .or_fail()?
            .as_bytes();
        let mut raw = [0u8; 16];
        if b.len() != 16 {
            return fail("UUID.bytes is not 16 bytes");
        }
        raw.copy_from_slice(b);
        let safe = u.getattr("is_safe").or_fail()?.getattr("value").or_fail()?;
        let code = if safe.is_none() {
            0
        } else if safe.extract::<i64>().or_fail()? == 0 {
            1
        } else {
            2
        };
        w::write_uuid(&mut self.out, &raw, code);
        Ok(())
    }

    unsafe fn registered(&mut self, o: *mut ffi::PyObject, entry: &Bound<'py, PyAny>) -> R {
        let py = self.py;
        let e = types::Entry::from_tuple(entry).or_fail()?;
        // SAFETY: `o` is alive (the caller holds it); the new reference keeps
        // it alive while hooks and `__getstate__` run Python code.
        let _keep = unsafe { Obj::from_borrowed(o) };
        // SAFETY: as above; the Bound takes a reference of its own.
        let obj = unsafe { Bound::from_borrowed_ptr(py, o) };
        match e.mode {
            mode::ENUM => {
                self.out.push(f::ENUM);
                let value = obj.getattr("_value_").or_fail()?;
                // SAFETY: the entry owns its name, a str (registry names are
                // checked to be str); `value` is held by its Bound.
                self.nested(|enc| unsafe {
                    enc.str(e.name.ptr(), usize::MAX, true)?;
                    enc.item(value.as_ptr())
                })
            }
            // SAFETY (the three below): `o` is a live instance of the class
            // of `e`, kept alive by `_keep`.
            mode::DICT | mode::SLOTS => unsafe { self.made_first(o, &obj, &e) },
            mode::NAMEDTUPLE => unsafe { self.named_tuple(o, &obj, &e) },
            _ => unsafe { self.hooked(o, &obj, &e) },
        }
    }

    unsafe fn ndarray(&mut self, o: *mut ffi::PyObject) -> R {
        let py = self.py;
        let _keep = unsafe { Obj::from_borrowed(o) };
        let arr = unsafe { Bound::from_borrowed_ptr(py, o) };
        let dtype = arr.getattr("dtype").or_fail()?;
        if dtype
            .getattr("hasobject")
            .or_fail()?
            .is_truthy()
            .or_fail()?
        {
            return fail("NumPy arrays of Python objects (dtype=object) cannot be encoded");
        }
        let flags = arr.getattr("flags").or_fail()?;
        let c_contig = flags
            .getattr("c_contiguous")
            .or_fail()?
            .is_truthy()
            .or_fail()?;
        let f_contig = flags
            .getattr("f_contiguous")
            .or_fail()?
            .is_truthy()
            .or_fail()?;
        let fortran = f_contig && !c_contig;
        let nbytes: usize = arr.getattr("nbytes").or_fail()?.extract().or_fail()?;
        self.out.push(f::NDARRAY);
        self.dtype(o, &dtype)?;
        let shape: Vec<u64> = arr.getattr("shape").or_fail()?.extract().or_fail()?;
        if nbytes == 0 {
            // Nothing to copy or view (an empty shape or a zero-size dtype):
            // a contiguous copy would turn an unsized S0/U0 into S1/U1.
            w::write_ndarray_shape(&mut self.out, &shape, fortran, None);
            w::write_ndarray_data(&mut self.out, self.frame_start, &[]);
            return Ok(());
        }
        let arr = if c_contig || f_contig {
            arr
        } else {
            // Copied as raw items (void of the item size): a copy in the
            // array's own dtype goes field by field and leaves the padding
            // between fields as whatever the allocator returned.
            let np = types::numpy(py).or_fail()?;
            let itemsize = dtype.getattr("itemsize").or_fail()?;
            let raw = np
                .getattr("dtype")
                .and_then(|d| d.call1(((np.getattr("void")?, itemsize),)))
                .or_fail()?;
            let items = arr.call_method1("view", (raw,)).or_fail()?;
            np.call_method1("ascontiguousarray", (items,)).or_fail()?
        };
        self.ndarray_data(&arr, &shape, fortran, nbytes)
    }

    /// NDARRAY after its dtype: the shape, flags and the `nbytes` bytes of
    /// the contiguous array `arr`, in band or out of band.
    fn ndarray_data(
        &mut self,
        arr: &Bound<'py, PyAny>,
        shape: &[u64],
        fortran: bool,
        nbytes: usize,
    ) -> R {
        // A flat byte view in memory order: works for every dtype, even those
        // the buffer protocol cannot describe (datetime64).
        let c_order = if fortran {
            arr.getattr("T").or_fail()?
        } else {
            arr.clone()
        };
        let flat = c_order
            .call_method1("reshape", (-1,))
            .and_then(|a| a.call_method1("view", ("u1",)))
            .or_fail()?;
        let oob = if nbytes >= self.opts.oob_threshold {
            // SAFETY: `flat` is a live array held for the whole call.
            unsafe { self.out_of_band(flat.as_ptr()) }?
        } else {
            None
        };
        w::write_ndarray_shape(&mut self.out, shape, fortran, oob);
        if oob.is_none() {
            let buf = pyo3::buffer::PyBuffer::<u8>::get(&flat).or_fail()?;
            if buf.len_bytes() != nbytes || !buf.is_c_contiguous() {
                return fail("array byte view has an unexpected size");
            }
            // SAFETY: `buf` holds the export of `flat`, a C-contiguous buffer
            // of `nbytes` bytes (both checked just above), so the pointer is
            // valid for `nbytes` reads until `buf` drops after the copy.
            let data = unsafe { std::slice::from_raw_parts(buf.buf_ptr() as *const u8, nbytes) };
            w::write_ndarray_data(&mut self.out, self.frame_start, data);
        }
        Ok(())
    }

    unsafe fn npscalar(&mut self, o: *mut ffi::PyObject) -> R {
        let py = self.py;
        let s = unsafe { Bound::from_borrowed_ptr(py, o) };
        let dtype = s.getattr("dtype").or_fail()?;
        if dtype
            .getattr("hasobject")
            .or_fail()?
            .is_truthy()
            .or_fail()?
        {
            return fail("NumPy object scalars cannot be encoded");
        }
        self.out.push(f::NPSCALAR);
        self.dtype(o, &dtype)?;
        let itemsize: usize = dtype.getattr("itemsize").or_fail()?.extract().or_fail()?;
        let raw = s.call_method0("tobytes").or_fail()?;
        let raw = raw.cast::<PyBytes>().map_err(PyErr::from).or_fail()?;
        // A zero-size str_ or bytes_ still shows NumPy's NUL padding in
        // tobytes(); its value is its dtype alone.
        let raw = if itemsize == 0 {
            &[][..]
        } else {
            raw.as_bytes()
        };
        if raw.len() != itemsize {
            return fail(format!(
                "NumPy scalar of dtype {} has {} bytes, its dtype says {itemsize}",
                dtype.str().or_fail()?,
                raw.len()
            ));
        }
        w::write_blob(&mut self.out, raw);
        Ok(())
    }
}

/// The code of a builtin defaultdict factory, or `None` if it has none.
fn factory_code(py: Python<'_>, factory: &Bound<'_, PyAny>) -> PyResult<Option<u8>> {
    if factory.is_none() {
        return Ok(Some(0));
    }
    for i in 1..f::DEFAULT_FACTORIES.len() {
        let candidate = types::default_factory(py, i as u8)?;
        if candidate.is(factory) {
            return Ok(Some(i as u8));
        }
    }
    Ok(None)
}
