//! `uuid.UUID` values: the 16 bytes (big-endian, as `UUID.bytes`) and the
//! safety the UUID was made with (`SafeUUID`).

use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::typeref;

/// `UUID.is_safe`: unknown, safe or unsafe, as codes 0, 1 and 2.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Safety {
    Unknown = 0,
    Safe = 1,
    Unsafe = 2,
}

impl Safety {
    pub fn from_code(code: u8) -> Option<Safety> {
        match code {
            0 => Some(Safety::Unknown),
            1 => Some(Safety::Safe),
            2 => Some(Safety::Unsafe),
            _ => None,
        }
    }
}

/// A UUID's bytes and safety.
pub fn parts_of(u: &Bound<'_, PyAny>) -> PyResult<([u8; 16], Safety)> {
    let py = u.py();
    let b = u.getattr(intern!(py, "bytes"))?;
    let b = b.cast::<PyBytes>()?.as_bytes();
    let raw: [u8; 16] = b
        .try_into()
        .map_err(|_| PyValueError::new_err("UUID.bytes is not 16 bytes"))?;
    let safe = u
        .getattr(intern!(py, "is_safe"))?
        .getattr(intern!(py, "value"))?;
    let safety = if safe.is_none() {
        Safety::Unknown
    } else if safe.extract::<i64>()? == 0 {
        Safety::Safe
    } else {
        Safety::Unsafe
    };
    Ok((raw, safety))
}

/// `UUID(bytes=..., is_safe=...)`.
pub fn new_uuid<'py>(
    py: Python<'py>,
    bytes: &[u8; 16],
    safety: Safety,
) -> PyResult<Bound<'py, PyAny>> {
    let safe_uuid = typeref::safe_uuid(py)?;
    let is_safe = match safety {
        Safety::Unknown => safe_uuid.getattr(intern!(py, "unknown"))?,
        Safety::Safe => safe_uuid.getattr(intern!(py, "safe"))?,
        Safety::Unsafe => safe_uuid.getattr(intern!(py, "unsafe"))?,
    };
    let kw = PyDict::new(py);
    kw.set_item(intern!(py, "bytes"), PyBytes::new(py, bytes))?;
    kw.set_item(intern!(py, "is_safe"), is_safe)?;
    typeref::uuid(py)?.call((), Some(&kw))
}
