//! Text in the connection's client encoding (see amber-core's
//! `pg::encoding`): UTF-8 straight through Rust's strings; SQL_ASCII as
//! bytes, as psycopg reads it; any other encoding through the Python codec
//! psycopg maps it to, called through CPython's C API (no method lookup per
//! value), with ASCII text passed through as it is when the codec reads
//! ASCII as ASCII (every one psycopg maps, checked once here).

use std::borrow::Cow;
use std::ffi::CString;

use amber_core::pg::types::text as t;
use amber_core::pg::{ClientEncoding, PgError};
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};

use super::fail::Fail;

/// How one connection's text is read and written.
pub struct TextCodec {
    pub enc: ClientEncoding,
    /// The Python codec (for `Other`).
    codec: CString,
    /// The encoding's name in messages: PostgreSQL's (`LATIN1`) when
    /// psycopg knows it, else the codec's.
    label: String,
    /// Whether the codec reads and writes ASCII as ASCII.
    ascii_safe: bool,
}

impl Default for TextCodec {
    fn default() -> Self {
        TextCodec {
            enc: ClientEncoding::Utf8,
            codec: CString::from(c"utf-8"),
            label: "UTF8".into(),
            ascii_safe: true,
        }
    }
}

/// A new reference from the C API, or the Python error it set.
fn owned<'py>(py: Python<'py>, p: *mut ffi::PyObject) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `p` is a new reference or NULL with an exception set, as the
    // C functions called here return.
    unsafe { Bound::from_owned_ptr_or_err(py, p) }
}

impl TextCodec {
    /// The codec of a connection whose text psycopg converts with the
    /// Python codec `codec` (`conn.info.encoding`); `None` is UTF-8. A
    /// codec Python does not have is a `ValueError` naming it.
    pub fn new(py: Python<'_>, codec: Option<&str>) -> PyResult<TextCodec> {
        let Some(name) = codec else {
            return Ok(TextCodec::default());
        };
        let enc = ClientEncoding::of_codec(name);
        let label = py
            .import("psycopg._encodings")
            .and_then(|m| m.getattr("py2pgenc")?.call1((name,)))
            .and_then(|b| b.extract::<Vec<u8>>())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_else(|_| name.to_string());
        if enc != ClientEncoding::Other {
            return Ok(TextCodec {
                enc,
                label,
                ..TextCodec::default()
            });
        }
        let codec = CString::new(name)
            .map_err(|_| PyValueError::new_err(format!("no text codec {name:?}")))?;
        if py
            .import("codecs")?
            .getattr("lookup")?
            .call1((name,))
            .is_err()
        {
            return Err(PyValueError::new_err(format!(
                "the connection's client encoding {label} has no Python codec ({name:?}): \
                 amber cannot read or write its text"
            )));
        }
        let mut c = TextCodec {
            enc,
            codec,
            label,
            ascii_safe: false,
        };
        let ascii: Vec<u8> = (1..128).collect();
        c.ascii_safe = c
            .decode_py(py, &ascii)
            .ok()
            .and_then(|s| {
                s.cast::<PyString>()
                    .ok()?
                    .to_cow()
                    .ok()
                    .map(|s| s.into_owned())
            })
            .is_some_and(|s| s.as_bytes() == ascii.as_slice());
        Ok(c)
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    /// Decode `b` with the codec into a `str`.
    fn decode_py<'py>(&self, py: Python<'py>, b: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: the GIL is held; `b` and the two C strings outlive the
        // call, which copies what it reads.
        owned(py, unsafe {
            ffi::PyUnicode_Decode(
                b.as_ptr().cast(),
                b.len() as ffi::Py_ssize_t,
                self.codec.as_ptr(),
                c"strict".as_ptr(),
            )
        })
    }

    fn bad_bytes(&self, py: Python<'_>, e: PyErr) -> Fail {
        let at = e
            .value(py)
            .getattr("start")
            .and_then(|s| s.extract::<u64>())
            .ok();
        let err = PgError::malformed(format!("text is not valid {}", self.label));
        Fail::Data(match at {
            Some(at) => err.at(at),
            None => err,
        })
    }

    /// A text value (no NUL, checked) as Python reads it: a `str`, or the
    /// bytes on SQL_ASCII (as psycopg reads them).
    pub fn read<'py>(&self, py: Python<'py>, b: &[u8]) -> Result<Bound<'py, PyAny>, Fail> {
        match self.enc {
            ClientEncoding::Utf8 => Ok(new_str(py, t::decode_text(b)?)?),
            ClientEncoding::SqlAscii => Ok(PyBytes::new(py, t::decode_text_bytes(b)?).into_any()),
            ClientEncoding::Other => {
                let b = t::decode_text_bytes(b)?;
                if self.ascii_safe && b.is_ascii() {
                    // ASCII bytes are UTF-8.
                    return Ok(new_str(py, std::str::from_utf8(b).unwrap_or_default())?);
                }
                self.decode_py(py, b).map_err(|e| self.bad_bytes(py, e))
            }
        }
    }

    /// A text value as UTF-8 bytes (for Arrow strings); on SQL_ASCII the
    /// bytes as they are (Arrow binary).
    pub fn utf8<'a>(&self, py: Python<'_>, b: &'a [u8]) -> Result<Cow<'a, [u8]>, Fail> {
        match self.enc {
            ClientEncoding::Utf8 => Ok(Cow::Borrowed(t::decode_text(b)?.as_bytes())),
            ClientEncoding::SqlAscii => Ok(Cow::Borrowed(t::decode_text_bytes(b)?)),
            ClientEncoding::Other => {
                let b = t::decode_text_bytes(b)?;
                if self.ascii_safe && b.is_ascii() {
                    return Ok(Cow::Borrowed(b));
                }
                let s = self.decode_py(py, b).map_err(|e| self.bad_bytes(py, e))?;
                let s = s.cast::<PyString>().map_err(PyErr::from)?.to_cow()?;
                Ok(Cow::Owned(s.into_owned().into_bytes()))
            }
        }
    }

    /// One byte that is a whole character in this encoding, as a `str`;
    /// `None` when it is not one.
    pub fn char_of(&self, py: Python<'_>, c: u8) -> Option<String> {
        match self.enc {
            _ if c < 0x80 => Some(char::from(c).to_string()),
            ClientEncoding::Other => self
                .decode_py(py, &[c])
                .ok()?
                .cast::<PyString>()
                .ok()?
                .to_cow()
                .ok()
                .map(|s| s.into_owned()),
            _ => None,
        }
    }

    /// The bytes of a `str` in this encoding: `f` gets them. On SQL_ASCII a
    /// `str` goes as UTF-8 (as psycopg sends it) and `bytes` (what amber
    /// reads there) as they are. Anything else is a `Mismatch`; a character
    /// the encoding lacks is refused, naming it.
    pub fn with_bytes<R>(
        &self,
        o: &Bound<'_, PyAny>,
        f: impl FnOnce(&[u8]) -> Result<R, PgError>,
    ) -> Result<R, Fail> {
        if let Ok(s) = o.cast::<PyString>() {
            let text = s.to_cow()?;
            if self.enc.writes_utf8() || (self.ascii_safe && text.is_ascii()) {
                return Ok(f(text.as_bytes())?);
            }
            let b = self.encode_py(o, &text)?;
            return Ok(f(b.as_bytes())?);
        }
        if self.enc == ClientEncoding::SqlAscii {
            if let Ok(b) = o.cast::<PyBytes>() {
                return Ok(f(b.as_bytes())?);
            }
            if let Ok(b) = o.cast::<PyByteArray>() {
                return Ok(f(&b.to_vec())?);
            }
        }
        Err(Fail::Mismatch)
    }

    /// The bytes of a Rust string in this encoding: `f` gets them.
    pub fn with_str_bytes<R>(
        &self,
        py: Python<'_>,
        s: &str,
        f: impl FnOnce(&[u8]) -> Result<R, PgError>,
    ) -> Result<R, Fail> {
        if self.enc.writes_utf8() || (self.ascii_safe && s.is_ascii()) {
            return Ok(f(s.as_bytes())?);
        }
        let o = PyString::new(py, s).into_any();
        let b = self.encode_py(&o, s)?;
        Ok(f(b.as_bytes())?)
    }

    fn encode_py<'py>(
        &self,
        o: &Bound<'py, PyAny>,
        text: &str,
    ) -> Result<Bound<'py, PyBytes>, Fail> {
        let py = o.py();
        // SAFETY: the GIL is held; `o` is a live str and the C strings
        // outlive the call.
        let r = owned(py, unsafe {
            ffi::PyUnicode_AsEncodedString(o.as_ptr(), self.codec.as_ptr(), c"strict".as_ptr())
        });
        match r {
            Ok(b) => Ok(b.cast_into::<PyBytes>().map_err(PyErr::from)?),
            Err(e) => {
                let at = e
                    .value(py)
                    .getattr("start")
                    .and_then(|s| s.extract::<usize>())
                    .ok();
                let ch = at.and_then(|i| text.chars().nth(i));
                Err(Fail::Data(PgError::invalid_value(match ch {
                    Some(c) => format!(
                        "{c:?} (U+{:04X}, character {}) has no equivalent in the connection's client encoding {}",
                        u32::from(c),
                        at.unwrap_or(0),
                        self.label
                    ),
                    None => format!(
                        "the text cannot be written in the connection's client encoding {}",
                        self.label
                    ),
                })))
            }
        }
    }
}

fn new_str<'py>(py: Python<'py>, s: &str) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: the GIL is held (`py`); `ascii` is checked here.
    owned(py, unsafe { crate::ffi::text::new_str(s, s.is_ascii()) })
}
