//! Cached Python objects: stdlib classes imported on first use, the
//! registry installed by `amber._registry`, and the per-type dispatch cache.
//!
//! Nothing here imports a module named by data: the decoder imports only the
//! fixed stdlib modules below (and numpy), and finds user classes only in
//! the registry.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

use crate::obj::Obj;

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
lazy_class!(zoneinfo, "zoneinfo", "ZoneInfo");
lazy_class!(pickle_buffer, "pickle", "PickleBuffer");
lazy_class!(
    /// Only looked up for a dtype, which exists only once numpy is imported.
    np_void,
    "numpy",
    "void"
);
lazy_class!(np_record, "numpy", "record");

/// Import the datetime C API once; called at module init.
pub fn init_datetime(py: Python<'_>) -> PyResult<()> {
    unsafe { ffi::PyDateTime_IMPORT() };
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

/// Kinds of type outside the hot set, as `amber._registry.classify` names them.
pub mod kind {
    pub const UNSUPPORTED: u8 = 0;
    pub const DATE: u8 = 1;
    pub const TIME: u8 = 2;
    pub const DATETIME: u8 = 3;
    pub const TIMEDELTA: u8 = 4;
    pub const TIMEZONE: u8 = 5;
    pub const ZONEINFO: u8 = 6;
    pub const DECIMAL: u8 = 7;
    pub const UUID: u8 = 8;
    pub const FRACTION: u8 = 9;
    pub const ORDERED_DICT: u8 = 10;
    pub const DEQUE: u8 = 11;
    pub const COUNTER: u8 = 12;
    pub const DEFAULTDICT: u8 = 13;
    pub const NDARRAY: u8 = 14;
    pub const NPSCALAR: u8 = 15;
    pub const REGISTERED: u8 = 16;
    pub const NAMES: [(&str, u8); 17] = [
        ("UNSUPPORTED", UNSUPPORTED),
        ("DATE", DATE),
        ("TIME", TIME),
        ("DATETIME", DATETIME),
        ("TIMEDELTA", TIMEDELTA),
        ("TIMEZONE", TIMEZONE),
        ("ZONEINFO", ZONEINFO),
        ("DECIMAL", DECIMAL),
        ("UUID", UUID),
        ("FRACTION", FRACTION),
        ("ORDERED_DICT", ORDERED_DICT),
        ("DEQUE", DEQUE),
        ("COUNTER", COUNTER),
        ("DEFAULTDICT", DEFAULTDICT),
        ("NDARRAY", NDARRAY),
        ("NPSCALAR", NPSCALAR),
        ("REGISTERED", REGISTERED),
    ];
}

/// How a registered class is encoded and rebuilt.
pub mod mode {
    /// Enum members: the value; rebuilt with `cls(value)`.
    pub const ENUM: u8 = 1;
    /// Instance `__dict__`; rebuilt with `cls.__new__(cls)` then a dict update.
    pub const DICT: u8 = 2;
    /// Named slots/fields; rebuilt with `cls.__new__(cls)` then `object.__setattr__`.
    pub const SLOTS: u8 = 3;
    /// Named tuples: the fields as a tuple; rebuilt with `tuple.__new__(cls, state)`.
    pub const NAMEDTUPLE: u8 = 4;
    /// User hooks: `encode(obj) -> state`, `decode(state) -> obj`.
    pub const HOOK: u8 = 5;
}

/// What `amber._registry` installs: the classifier and the name table.
pub struct Registry {
    /// `classify(type) -> (kind, extra)`.
    pub classify: Py<PyAny>,
    /// `name -> entry` for decoding.
    pub by_name: Py<PyDict>,
    /// `type -> (kind, extra)`, filled on first sight of each type.
    pub cache: Py<PyDict>,
}

static REGISTRY: PyOnceLock<Registry> = PyOnceLock::new();

pub fn install(py: Python<'_>, classify: Py<PyAny>, by_name: Py<PyDict>) -> PyResult<()> {
    let reg = Registry {
        classify,
        by_name,
        cache: PyDict::new(py).unbind(),
    };
    REGISTRY
        .set(py, reg)
        .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("amber registry installed twice"))
}

pub fn registry(py: Python<'_>) -> PyResult<&Registry> {
    REGISTRY.get(py).ok_or_else(|| {
        pyo3::exceptions::PyRuntimeError::new_err("amber._registry is not installed")
    })
}

/// A registered class entry: `(name, mode, cls, encode, decode, fields)`.
pub struct Entry {
    pub name: Obj,
    pub mode: u8,
    pub cls: Obj,
    pub encode: Obj,
    pub decode: Obj,
    pub fields: Obj,
}

impl Entry {
    pub fn from_tuple(t: &Bound<'_, PyAny>) -> PyResult<Entry> {
        let t = t.cast::<PyTuple>()?;
        let get = |i: usize| -> PyResult<Obj> {
            let item = t.get_item(i)?;
            Ok(unsafe { Obj::from_borrowed(item.as_ptr()) })
        };
        Ok(Entry {
            name: get(0)?,
            mode: t.get_item(1)?.extract()?,
            cls: get(2)?,
            encode: get(3)?,
            decode: get(4)?,
            fields: get(5)?,
        })
    }
}

/// Classify a type outside the hot set: `(kind, extra)`, cached per type.
pub fn classify<'py>(
    py: Python<'py>,
    t: *mut ffi::PyTypeObject,
) -> PyResult<(u8, Bound<'py, PyAny>)> {
    let reg = registry(py)?;
    let tp = unsafe { Bound::from_borrowed_ptr(py, t.cast()) };
    let cache = reg.cache.bind(py);
    let hit = match cache.get_item(&tp)? {
        Some(v) => v,
        None => {
            let v = reg.classify.bind(py).call1((&tp,))?;
            cache.set_item(&tp, &v)?;
            v
        }
    };
    let pair = hit.cast::<PyTuple>()?;
    Ok((pair.get_item(0)?.extract()?, pair.get_item(1)?))
}

/// Forget cached classifications (after the registry changes).
pub fn clear_cache(py: Python<'_>) -> PyResult<()> {
    registry(py)?.cache.bind(py).clear();
    Ok(())
}

/// Look up a registered class by name for decoding.
pub fn lookup_name(py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Option<Entry>> {
    match registry(py)?.by_name.bind(py).get_item(name)? {
        Some(t) => Ok(Some(Entry::from_tuple(&t)?)),
        None => Ok(None),
    }
}

/// numpy, imported when the data holds arrays (a fixed module, never one
/// named by the data).
pub fn numpy(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import("numpy")
}

/// The factory object for a defaultdict factory code (`None` for code 0).
pub fn default_factory(py: Python<'_>, code: u8) -> PyResult<Bound<'_, PyAny>> {
    let name = amber_core::format::DEFAULT_FACTORIES
        .get(code as usize)
        .ok_or_else(|| pyo3::exceptions::PyValueError::new_err("unknown defaultdict factory"))?;
    match name.split_once('.') {
        None if *name == "None" => Ok(py.None().into_bound(py)),
        None => py.import("builtins")?.getattr(*name),
        Some((module, attr)) => py.import(module)?.getattr(attr),
    }
}
