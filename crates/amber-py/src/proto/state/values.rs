//! Python values of protobuf fields: what a setter accepts (checked and
//! normalised to an exact `int`, `float`, `bool`, `str` or `bytes`, as
//! Google's protobuf does), what a decoded scalar becomes, and what the
//! encoder reads back.
//!
//! Numbers, bools and enums are stored as Rust values (their bits, see
//! [`check_bits`] and [`number`]); strings and bytes as objects of the
//! exact builtin types. Either way the encoder reads them without running
//! any Python code.

use amber_core::proto::runtime::{FieldInfo, Kind, Scalar, Tables};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyFloat, PyInt, PyString};

/// The descriptor name of a kind, and the message or enum index it
/// refers to.
pub fn kind_name(k: Kind) -> (&'static str, Option<u32>) {
    match k {
        Kind::Double => ("double", None),
        Kind::Float => ("float", None),
        Kind::Int64 => ("int64", None),
        Kind::Uint64 => ("uint64", None),
        Kind::Int32 => ("int32", None),
        Kind::Fixed64 => ("fixed64", None),
        Kind::Fixed32 => ("fixed32", None),
        Kind::Bool => ("bool", None),
        Kind::String => ("string", None),
        Kind::Bytes => ("bytes", None),
        Kind::Uint32 => ("uint32", None),
        Kind::Sfixed32 => ("sfixed32", None),
        Kind::Sfixed64 => ("sfixed64", None),
        Kind::Sint32 => ("sint32", None),
        Kind::Sint64 => ("sint64", None),
        Kind::Enum(i) => ("enum", Some(i)),
        Kind::Message(i) => ("message", Some(i)),
    }
}

/// The name of `o`'s type, for messages.
pub fn type_name(o: &Bound<'_, PyAny>) -> String {
    o.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default()
}

fn type_error(v: &Bound<'_, PyAny>, expected: &str) -> PyErr {
    let tn = type_name(v);
    PyTypeError::new_err(format!(
        "{} has type {tn}, but expected one of: {expected}",
        v.repr().map(|r| r.to_string()).unwrap_or_default()
    ))
}

/// The integer of `v` (an `int`, or anything with `__index__` that is not
/// a float), in `lo..=hi`: the same object for an exact `int`, a new plain
/// `int` for a `bool`, an `int` subclass or an `__index__` object.
fn int_in(v: &Bound<'_, PyAny>, lo: i128, hi: i128) -> PyResult<Py<PyAny>> {
    let py = v.py();
    let exact = v.is_exact_instance_of::<PyInt>();
    if exact {
        // SAFETY: `v` is a live exact int, held by the caller's borrow.
        if let Some(n) = unsafe { crate::ffi::long::small_int(v.as_ptr()) } {
            if (n as i128) < lo || (n as i128) > hi {
                return Err(PyValueError::new_err(format!("Value out of range: {n}")));
            }
            return Ok(v.clone().unbind());
        }
    }
    // As Google's: a bool is not taken for an integer field.
    if v.is_instance_of::<PyFloat>()
        || v.is_instance_of::<PyString>()
        || v.is_instance_of::<PyBool>()
    {
        return Err(type_error(v, "int"));
    }
    let i = if exact {
        v.clone()
    } else {
        v.call_method0(pyo3::intern!(py, "__index__"))
            .map_err(|_| type_error(v, "int"))?
    };
    let n: i128 = i
        .extract()
        .map_err(|_| PyValueError::new_err(format!("Value out of range: {i}")))?;
    if n < lo || n > hi {
        return Err(PyValueError::new_err(format!("Value out of range: {n}")));
    }
    if exact && i.is_exact_instance_of::<PyInt>() {
        return Ok(i.unbind());
    }
    // bool, an int subclass or an `__index__` object: store a plain int.
    Ok(if n < 0 {
        (n as i64).into_pyobject(py)?.into_any().unbind()
    } else {
        (n as u64).into_pyobject(py)?.into_any().unbind()
    })
}

/// Check and normalise `v` for a field of `kind` (enum names allowed).
pub fn check(t: &Tables, f: &FieldInfo, kind: Kind, v: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let py = v.py();
    Ok(match kind {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
            int_in(v, i32::MIN as i128, i32::MAX as i128)?
        }
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
            int_in(v, i64::MIN as i128, i64::MAX as i128)?
        }
        Kind::Uint32 | Kind::Fixed32 => int_in(v, 0, u32::MAX as i128)?,
        Kind::Uint64 | Kind::Fixed64 => int_in(v, 0, u64::MAX as i128)?,
        Kind::Double | Kind::Float => {
            if v.is_instance_of::<PyString>() || v.is_instance_of::<PyBytes>() {
                return Err(type_error(v, "int, float"));
            }
            let x: f64 = if v.is_exact_instance_of::<PyFloat>() && kind == Kind::Double {
                return Ok(v.clone().unbind());
            } else {
                v.extract().map_err(|_| type_error(v, "int, float"))?
            };
            let x = if kind == Kind::Float {
                x as f32 as f64
            } else {
                x
            };
            PyFloat::new(py, x).into_any().unbind()
        }
        Kind::Bool => {
            if v.is_exact_instance_of::<PyBool>() {
                return Ok(v.clone().unbind());
            }
            if v.is_instance_of::<PyFloat>() || v.is_instance_of::<PyString>() {
                return Err(type_error(v, "bool, int"));
            }
            let b = if is_numpy_bool(v) {
                v.is_truthy()?
            } else {
                v.call_method0(pyo3::intern!(py, "__index__"))
                    .map_err(|_| type_error(v, "bool, int"))?
                    .is_truthy()?
            };
            PyBool::new(py, b).to_owned().into_any().unbind()
        }
        Kind::String => {
            if let Ok(s) = v.cast_exact::<PyString>() {
                if f.utf8_verify {
                    // A string that must be UTF-8 (proto3, editions): one
                    // holding lone surrogates is refused with the codec's
                    // `UnicodeEncodeError`, as Google's is (proto2 keeps them,
                    // written with `surrogateescape`).
                    s.to_str()?;
                }
                return Ok(v.clone().unbind());
            }
            if let Ok(s) = v.cast::<PyString>() {
                return Ok(PyString::new(py, &s.to_cow()?).into_any().unbind());
            }
            if let Ok(b) = v.cast::<PyBytes>() {
                let s = std::str::from_utf8(b.as_bytes()).map_err(|_| {
                    PyValueError::new_err(format!(
                        "{} has type bytes, but isn't valid UTF-8 encoding. Non-UTF-8 strings \
                         must be converted to unicode objects before being added.",
                        v.repr().map(|r| r.to_string()).unwrap_or_default()
                    ))
                })?;
                return Ok(PyString::new(py, s).into_any().unbind());
            }
            return Err(type_error(v, "bytes, str"));
        }
        Kind::Bytes => {
            if v.is_exact_instance_of::<PyBytes>() {
                return Ok(v.clone().unbind());
            }
            if let Ok(b) = v.cast::<PyBytes>() {
                return Ok(PyBytes::new(py, b.as_bytes()).into_any().unbind());
            }
            if let Ok(b) = v.cast::<PyByteArray>() {
                return Ok(PyBytes::new(py, &b.to_vec()).into_any().unbind());
            }
            return Err(type_error(v, "bytes"));
        }
        Kind::Enum(e) => {
            let info = &t.enums[e as usize];
            if let Ok(s) = v.cast::<PyString>() {
                let name = s.to_cow()?;
                return match info.names.iter().find(|(n, _)| *n == name) {
                    Some((_, num)) => Ok(num.into_pyobject(py)?.into_any().unbind()),
                    None => Err(PyValueError::new_err(format!(
                        "Enum type \"{}\" has no value named {name} (field {})",
                        info.full_name, f.name
                    ))),
                };
            }
            let o = int_in(v, i32::MIN as i128, i32::MAX as i128)?;
            if info.closed {
                let n: i32 = o.bind(py).extract()?;
                if !info.contains(n) {
                    return Err(PyValueError::new_err(format!(
                        "Unknown enum value: {n} for closed enum {} (field {})",
                        info.full_name, f.name
                    )));
                }
            }
            o
        }
        Kind::Message(_) => return Err(type_error(v, "a message")),
    })
}

/// [`check`] for a field of a packable `kind` (a number, bool or enum),
/// giving the bits kept for the value ([`Scalar::bits`]); an exact
/// `int` or, for a `double`, an exact `float` is read in place, without
/// making an object.
#[inline]
pub fn check_bits(t: &Tables, f: &FieldInfo, kind: Kind, v: &Bound<'_, PyAny>) -> PyResult<u64> {
    if v.is_exact_instance_of::<PyInt>() {
        // SAFETY: `v` is a live exact int, held by the caller's borrow.
        if let Some(n) = unsafe { crate::ffi::long::small_int(v.as_ptr()) } {
            let fits = match kind {
                Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => i32::try_from(n).is_ok(),
                Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => true,
                Kind::Uint32 | Kind::Fixed32 => u32::try_from(n).is_ok(),
                Kind::Uint64 | Kind::Fixed64 => n >= 0,
                Kind::Enum(e) => {
                    let info = &t.enums[e as usize];
                    i32::try_from(n).is_ok_and(|x| !info.closed || info.contains(x))
                }
                _ => false,
            };
            if fits {
                return Ok(n as u64);
            }
        }
    } else if kind == Kind::Double {
        if let Ok(x) = v.cast_exact::<PyFloat>() {
            return Ok(x.value().to_bits());
        }
    }
    bits(check(t, f, kind, v)?.bind(v.py()), kind)
}

/// The Python object of a number, bool or enum kept as `bits` for a
/// field of `kind` ([`Scalar::bits`]; the value [`Scalar::from_bits`]
/// gives, made straight from the bits: a `Scalar` between, returned through
/// memory, stalled the read that follows on store forwarding).
#[inline]
pub fn number(py: Python<'_>, kind: Kind, bits: u64) -> PyResult<Py<PyAny>> {
    Ok(match kind {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 | Kind::Enum(_) => {
            (bits as i32).into_pyobject(py)?.into_any().unbind()
        }
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
            (bits as i64).into_pyobject(py)?.into_any().unbind()
        }
        Kind::Uint32 | Kind::Fixed32 => (bits as u32).into_pyobject(py)?.into_any().unbind(),
        Kind::Uint64 | Kind::Fixed64 => bits.into_pyobject(py)?.into_any().unbind(),
        Kind::Float => PyFloat::new(py, f32::from_bits(bits as u32).into())
            .into_any()
            .unbind(),
        Kind::Double => PyFloat::new(py, f64::from_bits(bits)).into_any().unbind(),
        Kind::Bool => PyBool::new(py, bits != 0).to_owned().into_any().unbind(),
        Kind::String | Kind::Bytes | Kind::Message(_) => return Err(not_a_number()),
    })
}

#[cold]
fn not_a_number() -> PyErr {
    PyTypeError::new_err("a number kept for a field of another kind")
}

/// Whether a number kept as `bits` for a field of `kind` is its zero.
pub fn zero_bits(kind: Kind, bits: u64) -> bool {
    Scalar::from_bits(kind, bits).is_some_and(amber_core::proto::runtime::is_zero)
}

/// The bits kept for a stored value of a packable `kind`
/// ([`Scalar::bits`]).
pub fn bits(o: &Bound<'_, PyAny>, kind: Kind) -> PyResult<u64> {
    match to_scalar(o, kind) {
        Some(Ok(s)) => s.bits(kind).ok_or_else(|| not_checked(o, kind)),
        _ => Err(not_checked(o, kind)),
    }
}

/// A NumPy bool scalar (`numpy.bool_`), which has no `__index__` but is
/// taken for a bool field, as Google's protobuf takes it.
fn is_numpy_bool(v: &Bound<'_, PyAny>) -> bool {
    let t = v.get_type();
    let module = t.module().map(|m| m.to_string()).unwrap_or_default();
    let name = t.name().map(|n| n.to_string()).unwrap_or_default();
    module == "numpy" && (name == "bool" || name == "bool_")
}

/// The Python object of a decoded scalar. A string field that is not
/// checked for UTF-8 (proto2) and holds invalid UTF-8 keeps its bytes as
/// lone surrogates (`surrogateescape`), which the encoder writes back
/// unchanged.
pub fn to_py(py: Python<'_>, s: Scalar<'_>) -> PyResult<Py<PyAny>> {
    Ok(match s {
        Scalar::I32(v) | Scalar::Enum(v) => v.into_pyobject(py)?.into_any().unbind(),
        Scalar::I64(v) => v.into_pyobject(py)?.into_any().unbind(),
        Scalar::U32(v) => v.into_pyobject(py)?.into_any().unbind(),
        Scalar::U64(v) => v.into_pyobject(py)?.into_any().unbind(),
        Scalar::F32(v) => PyFloat::new(py, v as f64).into_any().unbind(),
        Scalar::F64(v) => PyFloat::new(py, v).into_any().unbind(),
        Scalar::Bool(v) => PyBool::new(py, v).to_owned().into_any().unbind(),
        Scalar::Str(b) => text(py, Kind::String, b)?,
        Scalar::Bytes(b) => PyBytes::new(py, b).into_any().unbind(),
    })
}

/// The Python object of a bytes value (`kind` `Bytes`) or a string (any
/// other kind: a `str`, bytes that are not UTF-8 kept as lone surrogates)
/// `b`, as `text_scalar` reads a span, made straight from the bytes (see
/// [`number`] for why not through a `Scalar`).
#[inline]
pub fn text(py: Python<'_>, kind: Kind, b: &[u8]) -> PyResult<Py<PyAny>> {
    if kind == Kind::Bytes {
        return Ok(PyBytes::new(py, b).into_any().unbind());
    }
    match crate::ffi::text::utf8_object(py, b) {
        Some(o) => o,
        None => Ok(PyBytes::new(py, b)
            .call_method1(pyo3::intern!(py, "decode"), ("utf-8", "surrogateescape"))?
            .unbind()),
    }
}

/// A stored value as the encoder's scalar, borrowing from the object.
/// `kind` is the field's. `None`: the object is not what a setter stores
/// for this kind (someone went around the checks); the caller reports it.
/// A `str` holding lone surrogates gives `Err(())`; the caller encodes it
/// with `surrogateescape` (see [`escaped_bytes`]).
#[inline]
pub fn to_scalar<'m>(o: &'m Bound<'_, PyAny>, kind: Kind) -> Option<Result<Scalar<'m>, ()>> {
    let s = match kind {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Scalar::I32(int(o)?.try_into().ok()?),
        Kind::Enum(_) => Scalar::Enum(int(o)?.try_into().ok()?),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Scalar::I64(int(o)?),
        Kind::Uint32 | Kind::Fixed32 => Scalar::U32(uint(o)?.try_into().ok()?),
        Kind::Uint64 | Kind::Fixed64 => Scalar::U64(uint(o)?),
        Kind::Double => Scalar::F64(o.cast_exact::<PyFloat>().ok()?.value()),
        Kind::Float => Scalar::F32(o.cast_exact::<PyFloat>().ok()?.value() as f32),
        Kind::Bool => Scalar::Bool(o.cast_exact::<PyBool>().ok()?.is_true()),
        Kind::String => {
            let s = o.cast_exact::<PyString>().ok()?;
            return Some(
                s.to_str()
                    .map(|s| Scalar::Str(s.as_bytes()))
                    .map_err(|_| ()),
            );
        }
        Kind::Bytes => Scalar::Bytes(o.cast_exact::<PyBytes>().ok()?.as_bytes()),
        Kind::Message(_) => return None,
    };
    Some(Ok(s))
}

/// The error for a stored object that is not what a setter stores for a
/// field of `kind` (someone went around the checks).
#[cold]
pub fn not_checked(o: &Bound<'_, PyAny>, kind: Kind) -> PyErr {
    let tn = type_name(o);
    PyTypeError::new_err(format!(
        "a {tn} is kept where a {} value belongs",
        kind_name(kind).0
    ))
}

/// An exact `int` (a `bool` counts) that fits an i64; no Python code runs.
#[inline]
fn int(o: &Bound<'_, PyAny>) -> Option<i64> {
    if o.is_exact_instance_of::<PyInt>() || o.is_exact_instance_of::<PyBool>() {
        // SAFETY: `o` is a live exact int or bool (a bool is an int with
        // the same layout), held by the caller's borrow.
        if let Some(v) = unsafe { crate::ffi::long::small_int(o.as_ptr()) } {
            return Some(v);
        }
        o.extract().ok()
    } else {
        None
    }
}

/// An exact `int` (a `bool` counts) that fits a u64; no Python code runs.
#[inline]
fn uint(o: &Bound<'_, PyAny>) -> Option<u64> {
    if o.is_exact_instance_of::<PyInt>() || o.is_exact_instance_of::<PyBool>() {
        // SAFETY: as in `int`.
        if let Some(v) = unsafe { crate::ffi::long::small_int(o.as_ptr()) } {
            return u64::try_from(v).ok();
        }
        o.extract().ok()
    } else {
        None
    }
}

/// The UTF-8 bytes of a `str` with lone surrogates, encoded with
/// `surrogateescape` (what [`to_py`] made of non-UTF-8 proto2 strings).
pub fn escaped_bytes<'py>(o: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    Ok(o.call_method1(
        pyo3::intern!(o.py(), "encode"),
        ("utf-8", "surrogateescape"),
    )?
    .cast_into::<PyBytes>()?)
}

/// Whether a stored scalar is its kind's zero (a field without presence
/// at zero is not present).
pub fn is_zero(o: &Bound<'_, PyAny>, kind: Kind) -> bool {
    match to_scalar(o, kind) {
        Some(Ok(s)) => amber_core::proto::runtime::is_zero(s),
        _ => false,
    }
}
