//! Cached Python objects: stdlib classes imported on first use, the
//! registry installed by `amber._registry`, and the per-type dispatch cache.
//!
//! Nothing here imports a module named by data: the decoder imports only the
//! fixed stdlib modules below (and numpy), and finds user classes only in
//! the registry.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyFrozenSet, PyTuple, PyType};

use crate::ffi::obj::Obj;

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

/// Whether `ZoneInfo(key)` can load `key` without importing a module that
/// the key names. `ZoneInfo` reads the key's file from the system's zone
/// directories (`zoneinfo.TZPATH`) and, failing that, imports submodules
/// of the `tzdata` package named after the key's parts: so a key must be
/// found in those directories (by the function `ZoneInfo` uses, which also
/// refuses keys that leave them) or be one of the zones `tzdata` lists
/// (`zoneinfo.available_timezones()`, read once).
pub fn zone_key_known(py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
    static FIND: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    static KEYS: PyOnceLock<Py<PyFrozenSet>> = PyOnceLock::new();
    let find = FIND.get_or_try_init(py, || {
        Ok::<_, PyErr>(
            py.import("zoneinfo._tzpath")?
                .getattr("find_tzfile")?
                .unbind(),
        )
    })?;
    if !find.bind(py).call1((key,))?.is_none() {
        return Ok(true);
    }
    let keys = KEYS.get_or_try_init(py, || {
        let all = py.import("zoneinfo")?.call_method0("available_timezones")?;
        let all = all.try_iter()?.collect::<PyResult<Vec<_>>>()?;
        Ok::<_, PyErr>(PyFrozenSet::new(py, all)?.unbind())
    })?;
    keys.bind(py).contains(key)
}

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
    /// Instance `__dict__` (and slots); made with `cls.__new__(cls)`, then
    /// given the state.
    pub const DICT: u8 = 2;
    /// Named slots/fields; made with `cls.__new__(cls)`, then
    /// `object.__setattr__` per slot (or given the state).
    pub const SLOTS: u8 = 3;
    /// Named tuples: the fields as a tuple; rebuilt with
    /// `tuple.__new__(cls, fields)` (then given the state, if any).
    pub const NAMEDTUPLE: u8 = 4;
    /// User hooks: `encode(obj) -> state`, `decode(state) -> obj`.
    pub const HOOK: u8 = 5;
}

/// Entry flags, as `amber._registry` computes them when a class is
/// registered: what pickle would use for its state.
pub mod state {
    /// The class defines its own `__getstate__`.
    pub const GETSTATE: u8 = 1;
    /// The class defines `__setstate__`.
    pub const SETSTATE: u8 = 2;
    /// Instances of the named tuple class have a `__dict__`.
    pub const HAS_DICT: u8 = 4;
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

/// A registered class entry: `(name, mode, cls, encode, decode, names,
/// flags)`. `names` is a tuple of str: the slot names (DICT), the dataclass
/// fields and slot names (SLOTS), `_fields` (NAMEDTUPLE); None otherwise.
pub struct Entry {
    pub name: Obj,
    pub mode: u8,
    pub cls: Obj,
    pub encode: Obj,
    pub decode: Obj,
    pub fields: Obj,
    /// [`state`] bits.
    pub flags: u8,
}

impl Entry {
    pub fn from_tuple(t: &Bound<'_, PyAny>) -> PyResult<Entry> {
        let t = t.cast_exact::<PyTuple>()?;
        if t.len() != 7 {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "a registry entry is a tuple of 7",
            ));
        }
        let get = |i: usize| -> Obj {
            // SAFETY: `t` is a live exact tuple of 7 items and i < 7; the
            // tuple holds its items alive, and `from_borrowed` takes a
            // reference of its own.
            unsafe { Obj::from_borrowed(ffi::PyTuple_GET_ITEM(t.as_ptr(), i as ffi::Py_ssize_t)) }
        };
        let small = |i: usize| -> PyResult<u8> {
            // SAFETY: as above; the borrowed item is read at once.
            let item = unsafe { ffi::PyTuple_GET_ITEM(t.as_ptr(), i as ffi::Py_ssize_t) };
            // SAFETY: `item` is a live object of the tuple.
            let v = unsafe { ffi::PyLong_AsLong(item) };
            u8::try_from(v).map_err(|_| {
                PyErr::take(t.py()).unwrap_or_else(|| {
                    pyo3::exceptions::PyValueError::new_err("a registry entry has a bad code")
                })
            })
        };
        Ok(Entry {
            name: get(0),
            mode: small(1)?,
            cls: get(2),
            encode: get(3),
            decode: get(4),
            fields: get(5),
            flags: small(6)?,
        })
    }

    /// The slot names of a DICT or SLOTS class (the dataclass fields first,
    /// for SLOTS), or the fields of a named tuple; empty for other modes.
    pub fn names<'py>(&self, py: Python<'py>) -> Bound<'py, PyTuple> {
        // SAFETY: the entry owns a reference to `fields`, so it is alive;
        // the Bound takes a reference of its own.
        let names = unsafe { Bound::from_borrowed_ptr(py, self.fields.ptr()) };
        names
            .cast_into::<PyTuple>()
            .unwrap_or_else(|_| PyTuple::empty(py))
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
    let name = amber_core::codec::format::DEFAULT_FACTORIES
        .get(code as usize)
        .ok_or_else(|| pyo3::exceptions::PyValueError::new_err("unknown defaultdict factory"))?;
    match name.split_once('.') {
        None if *name == "None" => Ok(py.None().into_bound(py)),
        None => py.import("builtins")?.getattr(*name),
        Some((module, attr)) => py.import(module)?.getattr(attr),
    }
}
