//! The one place amber's exception classes are defined.
//!
//! `AmberError` is the root; `DecodeError` is also a `ValueError` and
//! `EncodeError` also a `TypeError`, so code catching the standard classes
//! keeps working. Both carry `offset`/`path` attributes where known, and a
//! `kind` from one enum per part ([`DecodeKind`], [`EncodeKind`]) so that
//! callers and tests act on what went wrong rather than on the message.

use amber_core::codec::error::ErrorKind;
use pyo3::exceptions::{PyException, PyMemoryError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

pyo3::create_exception!(
    amber,
    AmberError,
    PyException,
    "Base class of every error amber raises."
);

/// What `amber.DecodeError.kind` says went wrong: the core's kinds of bad
/// bytes, and the builder's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeKind {
    /// Truncated, not amber, unsupported, malformed or over a limit.
    Data(ErrorKind),
    /// Well-formed data that amber will not build here: a class that is not
    /// registered (or registered otherwise), a dtype holding Python objects,
    /// a time zone this system does not have.
    Refused,
    /// Out-of-band buffers missing from `buffers=`, or not fitting.
    Buffer,
    /// Code amber ran for the data (a decode hook, `__setstate__`, a
    /// class's `__new__`) raised; that exception is the `__cause__`.
    Raised,
}

impl DecodeKind {
    pub fn name(self) -> &'static str {
        match self {
            DecodeKind::Data(kind) => kind.name(),
            DecodeKind::Refused => "refused",
            DecodeKind::Buffer => "buffer",
            DecodeKind::Raised => "raised",
        }
    }
}

/// What `amber.EncodeError.kind` says went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodeKind {
    /// A type amber does not encode (register it, or convert it first).
    Unsupported,
    /// An object contains itself and `identity=True` was not passed.
    Cycle,
    /// A limit was exceeded (`max_depth`, the size of a Fraction's parts).
    Limit,
    /// A container changed while it was being encoded.
    Mutated,
    /// Code amber ran for a value (an encode hook, `__getstate__`, a
    /// property, `__hash__`) raised; that exception is the `__cause__`.
    Raised,
    /// A protobuf message misses required (proto2) fields.
    Required,
}

impl EncodeKind {
    pub fn name(self) -> &'static str {
        match self {
            EncodeKind::Unsupported => "unsupported",
            EncodeKind::Cycle => "cycle",
            EncodeKind::Limit => "limit",
            EncodeKind::Mutated => "mutated",
            EncodeKind::Raised => "raised",
            EncodeKind::Required => "required",
        }
    }
}

static DECODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static ENCODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static ARCHIVE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static PROTO_DECODE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static PROTO_SCHEMA_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn subclass(
    py: Python<'_>,
    name: &str,
    doc: &str,
    std_base: Bound<'_, PyType>,
    attrs: &[&str],
) -> PyResult<Py<PyType>> {
    let bases = PyTuple::new(py, [py.get_type::<AmberError>(), std_base])?;
    let ns = PyDict::new(py);
    ns.set_item("__module__", "amber")?;
    ns.set_item("__doc__", doc)?;
    // What an instance says when amber did not make it (a user's own raise).
    for attr in attrs {
        ns.set_item(*attr, py.None())?;
    }
    let t = py.get_type::<PyType>().call1((name, bases, ns))?;
    Ok(t.cast_into::<PyType>()?.unbind())
}

pub fn decode_error(py: Python<'_>) -> &Bound<'_, PyType> {
    DECODE_ERROR
        .get_or_init(py, || {
            subclass(
                py,
                "DecodeError",
                "The input is not valid amber data; `kind` says what is wrong, `offset` and `path` where.",
                py.get_type::<PyValueError>(),
                &["kind", "offset", "path"],
            )
            .expect("creating amber.DecodeError")
        })
        .bind(py)
}

pub fn encode_error(py: Python<'_>) -> &Bound<'_, PyType> {
    ENCODE_ERROR
        .get_or_init(py, || {
            subclass(
                py,
                "EncodeError",
                "An object cannot be encoded; `kind` says why, `path` which.",
                py.get_type::<PyTypeError>(),
                &["kind", "offset", "path"],
            )
            .expect("creating amber.EncodeError")
        })
        .bind(py)
}

pub fn archive_error(py: Python<'_>) -> &Bound<'_, PyType> {
    ARCHIVE_ERROR
        .get_or_init(py, || {
            subclass(
                py,
                "ArchiveError",
                "An archive or an entry in it is not what it should be; `kind` says what, \
                 `entry` which entry, `offset` where in the file.",
                py.get_type::<PyValueError>(),
                &["kind", "offset", "path", "entry"],
            )
            .expect("creating amber.ArchiveError")
        })
        .bind(py)
}

/// `amber.proto.DecodeError`: bytes that are not a valid message of the
/// type asked for (an `amber.DecodeError`).
pub fn proto_decode_error(py: Python<'_>) -> &Bound<'_, PyType> {
    PROTO_DECODE_ERROR
        .get_or_init(py, || {
            let bases = PyTuple::new(py, [decode_error(py)]).expect("a tuple");
            let ns = PyDict::new(py);
            let made = (|| -> PyResult<Py<PyType>> {
                ns.set_item("__module__", "amber.proto")?;
                ns.set_item(
                    "__doc__",
                    "Bytes that are not a valid message of the type asked for; `offset` \
                     says where, `path` in which field ($.a.b[2]).",
                )?;
                let t = py.get_type::<PyType>().call1(("DecodeError", bases, ns))?;
                Ok(t.cast_into::<PyType>()?.unbind())
            })();
            made.expect("creating amber.proto.DecodeError")
        })
        .bind(py)
}

/// `amber.proto.SchemaError`: a `.proto` file that does not compile; the
/// message starts with `file:line:col`, also kept as attributes.
pub fn proto_schema_error(py: Python<'_>) -> &Bound<'_, PyType> {
    PROTO_SCHEMA_ERROR
        .get_or_init(py, || {
            let made = (|| -> PyResult<Py<PyType>> {
                let t = subclass(
                    py,
                    "SchemaError",
                    "A .proto file that does not compile: `file`, `line` and `col` say where, \
                     `kind` what.",
                    py.get_type::<PyValueError>(),
                    &["kind", "file", "line", "col"],
                )?;
                t.bind(py).setattr("__module__", "amber.proto")?;
                Ok(t)
            })();
            made.expect("creating amber.proto.SchemaError")
        })
        .bind(py)
}

/// A compile error from the core, as `amber.proto.SchemaError`.
#[cold]
pub fn proto_syntax(py: Python<'_>, e: &amber_core::proto::ProtoError) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let exc = proto_schema_error(py).call1((e.to_string(),))?;
        exc.setattr(intern!(py, "kind"), e.kind.name())?;
        exc.setattr(intern!(py, "file"), &e.file)?;
        // No position (a file not found, a problem of the whole set): None,
        // not 0.
        let (line, col) = match e.line {
            0 => (None, None),
            l => (Some(l), Some(e.col)),
        };
        exc.setattr(intern!(py, "line"), line)?;
        exc.setattr(intern!(py, "col"), col)?;
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|e| e)
}

/// Bad bytes, text or values, as `amber.proto.DecodeError` of `kind`.
#[cold]
pub fn proto_decode(
    py: Python<'_>,
    kind: &str,
    msg: String,
    offset: Option<usize>,
    path: Option<String>,
) -> PyErr {
    make(py, proto_decode_error(py), kind, msg, offset, path, None)
}

/// An archive error from the core, as `amber.ArchiveError`.
#[cold]
pub fn archive(py: Python<'_>, e: amber_core::archive::error::ArchiveError) -> PyErr {
    let err = make(
        py,
        archive_error(py),
        e.kind.name(),
        e.to_string(),
        e.offset.map(|o| o as usize),
        None,
        None,
    );
    if let Some(entry) = e.entry {
        // Setting an attribute on a fresh exception instance cannot fail
        // in a way worth reporting over the error itself.
        let _ = err.value(py).setattr(intern!(py, "entry"), entry);
    }
    err
}

/// Runs the body of a Python entry point (every `#[pyfunction]` and every
/// `#[pymethods]` method that can fail), so that a Rust panic, which is a
/// bug in amber, reaches Python as `amber.AmberError` of kind `internal`,
/// which `except Exception` catches, rather than as pyo3's
/// `PanicException`, a `BaseException` that ends most programs. The panic
/// hook has already printed where the panic happened. Unwinding runs the
/// drops of the body's values as pyo3's own boundary would, so catching it
/// here is no less sound than letting pyo3 catch it; on the path without a
/// panic `catch_unwind` costs nothing.
#[inline(always)]
pub fn guard<T>(body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(payload) => Err(panicked(payload.as_ref())),
    }
}

/// The `amber.AmberError` a caught panic becomes, quoting its message.
#[cold]
#[inline(never)]
pub(crate) fn panicked(payload: &(dyn std::any::Any + Send)) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string());
    let msg = format!("internal error in amber (a bug: please report it): {what}");
    Python::attach(|py| {
        make(
            py,
            &py.get_type::<AmberError>(),
            "internal",
            msg,
            None,
            None,
            None,
        )
    })
}

/// Whether `err` says nothing about the data and must reach the caller as
/// it is, never wrapped as an `EncodeError` or `DecodeError`: running out of
/// memory, and exceptions that are not `Exception`s (`KeyboardInterrupt`,
/// `SystemExit`).
pub fn passes_through(py: Python<'_>, err: &PyErr) -> bool {
    err.is_instance_of::<PyMemoryError>(py) || !err.is_instance_of::<PyException>(py)
}

/// Build an exception instance of `cls` with `msg`, its `kind`, optional
/// `offset` and `path` attributes and an optional cause.
pub fn make(
    py: Python<'_>,
    cls: &Bound<'_, PyType>,
    kind: &str,
    msg: String,
    offset: Option<usize>,
    path: Option<String>,
    cause: Option<PyErr>,
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let exc = cls.call1((msg.clone(),))?;
        exc.setattr(intern!(py, "kind"), kind)?;
        exc.setattr(intern!(py, "offset"), offset)?;
        exc.setattr(intern!(py, "path"), path.clone())?;
        let err = PyErr::from_value(exc);
        if let Some(c) = cause {
            err.set_cause(py, Some(c));
        }
        Ok(err)
    };
    build().unwrap_or_else(|e| e)
}

/// A builder's refusal of a well-formed value, as a `DecodeError` of `kind`
/// without a place yet: the decoder adds the offset and path (see
/// `codec::decode::to_pyerr`).
#[cold]
pub fn decode_fail(py: Python<'_>, kind: DecodeKind, msg: impl Into<String>) -> PyErr {
    make(
        py,
        decode_error(py),
        kind.name(),
        msg.into(),
        None,
        None,
        None,
    )
}

/// `err`, raised by code amber ran while decoding, as a `DecodeError` of
/// kind `raised` with `err` as its cause; errors that pass through stay
/// as they are.
#[cold]
pub fn decode_raised(py: Python<'_>, err: PyErr) -> PyErr {
    if passes_through(py, &err) {
        return err;
    }
    let msg = described(py, &err);
    make(
        py,
        decode_error(py),
        DecodeKind::Raised.name(),
        msg,
        None,
        None,
        Some(err),
    )
}

/// `"TypeName: message"` for an exception, as messages quote a cause.
pub fn described(py: Python<'_>, err: &PyErr) -> String {
    let name = err
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default();
    format!("{name}: {}", err.value(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("AmberError", py.get_type::<AmberError>())?;
    m.add("DecodeError", decode_error(py))?;
    m.add("EncodeError", encode_error(py))?;
    m.add("ArchiveError", archive_error(py))?;
    m.add("ProtoDecodeError", proto_decode_error(py))?;
    m.add("ProtoSchemaError", proto_schema_error(py))?;
    Ok(())
}
