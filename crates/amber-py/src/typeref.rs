//! Python classes and C APIs that amber uses, found once: stdlib classes
//! imported on first use, numpy, and the datetime C API.
//!
//! Nothing here imports a module named by data: only the fixed modules
//! below (and numpy when the data holds arrays).

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

macro_rules! lazy_class {
    ($(#[$doc:meta])* $fn:ident, $module:literal, $attr:literal) => {
        $(#[$doc])*
        pub fn $fn(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
            static CELL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
            CELL.import(py, $module, $attr)
        }
    };
}

lazy_class!(decimal, "decimal", "Decimal");
lazy_class!(uuid, "uuid", "UUID");
lazy_class!(safe_uuid, "uuid", "SafeUUID");
lazy_class!(fraction, "fractions", "Fraction");
lazy_class!(ordered_dict, "collections", "OrderedDict");
lazy_class!(deque, "collections", "deque");
lazy_class!(counter, "collections", "Counter");
lazy_class!(defaultdict, "collections", "defaultdict");
lazy_class!(timezone, "datetime", "timezone");
lazy_class!(timedelta, "datetime", "timedelta");
lazy_class!(zoneinfo, "zoneinfo", "ZoneInfo");
lazy_class!(pickle_buffer, "pickle", "PickleBuffer");
lazy_class!(mmap, "mmap", "mmap");
lazy_class!(
    /// Only looked up for a dtype, which exists only once numpy is imported.
    np_void,
    "numpy",
    "void"
);
lazy_class!(np_record, "numpy", "record");

/// `amber._frames`, the pyarrow side of tables (it imports pyarrow when
/// first called).
pub fn frames(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static CELL: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    CELL.get_or_try_init(py, || Ok::<_, PyErr>(py.import("amber._frames")?.unbind()))
        .map(|m| m.bind(py))
}

/// Import the datetime C API once; called at module init.
pub fn init_datetime(py: Python<'_>) -> PyResult<()> {
    // SAFETY: called once at module init, with the GIL held (`py`).
    unsafe { ffi::PyDateTime_IMPORT() };
    // SAFETY: reading the capsule pointer the import just set.
    if unsafe { ffi::PyDateTimeAPI() }.is_null() {
        return Err(PyErr::fetch(py));
    }
    Ok(())
}

#[inline(always)]
pub fn datetime_api() -> &'static ffi::PyDateTime_CAPI {
    // SAFETY: initialised at module import before any call can reach here.
    unsafe { &*ffi::PyDateTimeAPI() }
}

/// numpy, imported when the data holds arrays (a fixed module, never one
/// named by the data).
pub fn numpy(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import("numpy")
}

/// The factory object for a defaultdict factory code (`None` for code 0).
pub fn default_factory(py: Python<'_>, code: u8) -> PyResult<Bound<'_, PyAny>> {
    let name = amber_core::codec::format::DEFAULT_FACTORIES
        .get(code as usize)
        .ok_or_else(|| pyo3::exceptions::PyValueError::new_err("unknown defaultdict factory"))?;
    match name.split_once('.') {
        None if *name == "None" => Ok(py.None().into_bound(py)),
        None => py.import("builtins")?.getattr(*name),
        Some((module, attr)) => py.import(module)?.getattr(attr),
    }
}
