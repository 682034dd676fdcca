//! The encoder's errors: why it stopped (a kind and message, or a Python
//! exception raised by code it ran), the `$.path` and the containers along
//! it, built while unwinding, and the `amber.EncodeError` made from them (a
//! cycle is named where it closes).

use amber_core::bytes::path::{key_segment, render_path, render_path_short, PathSeg};
use hashbrown::HashMap;
use pyo3::ffi;
use pyo3::prelude::*;

use super::Encoder;
use crate::errors::{self, EncodeKind};
use crate::ffi::borrowed::Borrowed;

/// Why encoding stopped.
pub(crate) enum Fail {
    Msg(EncodeKind, String),
    /// A Python exception: `Raised` when code amber ran raised it, or
    /// another kind when amber knows what it means.
    Py(EncodeKind, PyErr),
}

pub(crate) struct EncErr {
    pub(super) fail: Fail,
    /// Path from the root, built while unwinding.
    pub(super) path: Vec<PathSeg>,
    /// Container addresses along the path, to tell a cycle from deep nesting.
    pub(super) chain: Vec<usize>,
    pub(super) depth_exceeded: bool,
}

pub(crate) type R<T = ()> = Result<T, Box<EncErr>>;

#[cold]
pub(crate) fn fail<T>(kind: EncodeKind, msg: impl Into<String>) -> R<T> {
    Err(Box::new(EncErr {
        fail: Fail::Msg(kind, msg.into()),
        path: vec![],
        chain: vec![],
        depth_exceeded: false,
    }))
}

#[cold]
pub(crate) fn py_fail<T>(py: Python<'_>) -> R<T> {
    Err(Box::new(EncErr::from(PyErr::fetch(py))))
}

/// Turn a `PyResult` into the encoder's result.
pub(crate) trait OrFail<T> {
    /// An exception raised by code amber ran (kind `raised`).
    fn or_fail(self) -> R<T>;
    /// An exception that means `kind`.
    fn or_fail_as(self, kind: EncodeKind) -> R<T>;
}

pub(crate) trait Within {
    fn within(self, seg: impl FnOnce() -> PathSeg, container: *mut ffi::PyObject) -> Self;
}

/// The path step of pair `i` with key `k`: as the decoder writes it
/// (spec §11), `.name` or `["…"]` for a str key, `[<key i>]` otherwise.
#[cold]
pub(crate) fn key_seg(py: Python<'_>, k: Borrowed<'_>, i: usize) -> PathSeg {
    let key = k.to_bound(py);
    match key.extract::<String>() {
        Ok(s) => PathSeg::Key(key_segment(&s)),
        Err(_) => PathSeg::Key(format!("[<key {i}>]")),
    }
}

/// The first container address that appears twice along the failing path.
fn find_cycle(chain: &[usize]) -> Option<(usize, usize)> {
    let mut seen: HashMap<usize, usize> = HashMap::new();
    for (j, &a) in chain.iter().enumerate() {
        if let Some(&i) = seen.get(&a) {
            return Some((i, j));
        }
        seen.insert(a, j);
    }
    None
}

impl From<PyErr> for EncErr {
    #[cold]
    fn from(e: PyErr) -> EncErr {
        EncErr {
            fail: Fail::Py(EncodeKind::Raised, e),
            path: vec![],
            chain: vec![],
            depth_exceeded: false,
        }
    }
}

impl<T> OrFail<T> for PyResult<T> {
    #[inline(always)]
    fn or_fail(self) -> R<T> {
        self.map_err(|e| Box::new(EncErr::from(e)))
    }
    fn or_fail_as(self, kind: EncodeKind) -> R<T> {
        self.map_err(|e| {
            let mut err = EncErr::from(e);
            if let Fail::Py(k, _) = &mut err.fail {
                *k = kind;
            }
            Box::new(err)
        })
    }
}

impl<T> Within for R<T> {
    #[inline(always)]
    fn within(self, seg: impl FnOnce() -> PathSeg, container: *mut ffi::PyObject) -> Self {
        self.map_err(|mut e| {
            e.path.insert(0, seg());
            e.chain.insert(0, container as usize);
            e
        })
    }
}

impl Encoder<'_> {
    #[cold]
    pub(super) fn to_pyerr(&self, e: EncErr) -> PyErr {
        let py = self.py;
        let (kind, msg, cause) = match e.fail {
            Fail::Msg(kind, m) => (kind, m, None),
            Fail::Py(_, err) if errors::passes_through(py, &err) => return err,
            Fail::Py(kind, err) => (kind, errors::described(py, &err), Some(err)),
        };
        // A cycle is reported where the object appears inside itself, not
        // where the depth limit was reached, max_depth levels further down.
        let cycle = e.depth_exceeded.then(|| find_cycle(&e.chain)).flatten();
        let (kind, msg, upto) = match cycle {
            Some((i, j)) => (
                EncodeKind::Cycle,
                format!(
                    "cycle: the object at {} contains itself; pass identity=True to encode \
                     shared references and cycles",
                    render_path_short(&e.path[..i]),
                ),
                j,
            ),
            None => (kind, msg, e.path.len()),
        };
        let path = render_path(&e.path[..upto]);
        errors::make(
            py,
            errors::encode_error(py),
            kind.name(),
            format!("{msg} (at {})", render_path_short(&e.path[..upto])),
            None,
            Some(path),
            cause,
        )
    }
}
