//! The registry bridge: what `amber._registry` tells the codec about types.
//!
//! `classify(type) -> (kind code, extra)` sorts every type outside the hot
//! set into a [`Kind`], cached per type; for registered classes `extra` is
//! their [`Entry`], a frozen record that `amber.register` builds once. The
//! decoder finds classes only by name in the registry's table and never
//! imports anything.

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};

/// What a type outside the hot set is, as `amber._registry.classify` says.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Kind {
    Unsupported = 0,
    Date,
    Time,
    DateTime,
    TimeDelta,
    TimeZone,
    ZoneInfo,
    Decimal,
    Uuid,
    Fraction,
    OrderedDict,
    Deque,
    Counter,
    DefaultDict,
    NdArray,
    NpScalar,
    Registered,
    /// A pandas, polars or pyarrow table; `extra` is its ARROW kind.
    Table,
}

impl Kind {
    /// Every kind with the name `amber._registry` uses for it (its code is
    /// its place here).
    pub const ALL: [(&'static str, Kind); 18] = [
        ("UNSUPPORTED", Kind::Unsupported),
        ("DATE", Kind::Date),
        ("TIME", Kind::Time),
        ("DATETIME", Kind::DateTime),
        ("TIMEDELTA", Kind::TimeDelta),
        ("TIMEZONE", Kind::TimeZone),
        ("ZONEINFO", Kind::ZoneInfo),
        ("DECIMAL", Kind::Decimal),
        ("UUID", Kind::Uuid),
        ("FRACTION", Kind::Fraction),
        ("ORDERED_DICT", Kind::OrderedDict),
        ("DEQUE", Kind::Deque),
        ("COUNTER", Kind::Counter),
        ("DEFAULTDICT", Kind::DefaultDict),
        ("NDARRAY", Kind::NdArray),
        ("NPSCALAR", Kind::NpScalar),
        ("REGISTERED", Kind::Registered),
        ("TABLE", Kind::Table),
    ];

    fn from_code(code: u8) -> Option<Kind> {
        Kind::ALL.get(code as usize).map(|&(_, k)| k)
    }
}

/// How a registered class is encoded and rebuilt.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// Enum members: the value; rebuilt with `cls(value)`.
    Enum,
    /// Instance `__dict__` (and slots); made with `cls.__new__(cls)`, then
    /// given the state.
    Dict,
    /// Named slots/fields; made with `cls.__new__(cls)`, then
    /// `object.__setattr__` per slot (or given the state).
    Slots,
    /// Named tuples: the fields as a tuple; rebuilt with
    /// `tuple.__new__(cls, fields)` (then given the state, if any).
    NamedTuple,
    /// User hooks: `encode(obj) -> state`, `decode(state) -> obj`.
    Hook,
}

impl Mode {
    const NAMES: [(&'static str, Mode); 5] = [
        ("ENUM", Mode::Enum),
        ("DICT", Mode::Dict),
        ("SLOTS", Mode::Slots),
        ("NAMEDTUPLE", Mode::NamedTuple),
        ("HOOK", Mode::Hook),
    ];

    fn name(self) -> &'static str {
        Mode::NAMES
            .iter()
            .find(|&&(_, m)| m == self)
            .map_or("?", |&(n, _)| n)
    }

    /// Instances made empty with `cls.__new__(cls)`, then given their state.
    pub fn made_first(self) -> bool {
        matches!(self, Mode::Dict | Mode::Slots)
    }
}

/// Entry flags, as `amber._registry` computes them when a class is
/// registered: what pickle would use for its state.
pub mod flag {
    /// The class defines its own `__getstate__`.
    pub const GETSTATE: u8 = 1;
    /// The class defines `__setstate__`.
    pub const SETSTATE: u8 = 2;
    /// Instances of the named tuple class have a `__dict__`.
    pub const HAS_DICT: u8 = 4;
    pub const ALL: u8 = GETSTATE | SETSTATE | HAS_DICT;
}

/// A registered class: its name in the data, how it travels, its hooks,
/// its names (the slot names in DICT mode, the dataclass fields and slot
/// names in SLOTS mode, `_fields` in NAMEDTUPLE mode) and state flags.
#[pyclass(frozen, module = "amber._native", name = "RegistryEntry")]
pub struct Entry {
    #[pyo3(get)]
    pub name: Py<PyString>,
    pub mode: Mode,
    #[pyo3(get)]
    pub cls: Py<PyType>,
    #[pyo3(get)]
    pub encode: Option<Py<PyAny>>,
    #[pyo3(get)]
    pub decode: Option<Py<PyAny>>,
    #[pyo3(get)]
    pub fields: Option<Py<PyTuple>>,
    /// [`flag`] bits.
    #[pyo3(get)]
    pub flags: u8,
}

#[pymethods]
impl Entry {
    #[new]
    #[pyo3(signature = (name, mode, cls_, /, *, encode=None, decode=None, fields=None, flags=0))]
    fn new(
        name: Bound<'_, PyString>,
        mode: &str,
        cls_: Bound<'_, PyType>,
        encode: Option<Bound<'_, PyAny>>,
        decode: Option<Bound<'_, PyAny>>,
        fields: Option<Bound<'_, PyTuple>>,
        flags: u8,
    ) -> PyResult<Entry> {
        crate::errors::guard(|| {
            let Some(&(_, mode)) = Mode::NAMES.iter().find(|&&(n, _)| n == mode) else {
                return Err(PyValueError::new_err(format!("unknown mode {mode:?}")));
            };
            if (mode == Mode::Hook) != (encode.is_some() && decode.is_some()) {
                return Err(PyTypeError::new_err(
                    "HOOK mode takes both encode and decode hooks; other modes take none",
                ));
            }
            if flags & !flag::ALL != 0 {
                return Err(PyValueError::new_err(format!("unknown flags {flags:#x}")));
            }
            if let Some(f) = &fields {
                if f.iter().any(|n| !n.is_exact_instance_of::<PyString>()) {
                    return Err(PyTypeError::new_err("fields must be a tuple of str"));
                }
            }
            Ok(Entry {
                name: name.unbind(),
                mode,
                cls: cls_.unbind(),
                encode: encode.map(Bound::unbind),
                decode: decode.map(Bound::unbind),
                fields: fields.map(Bound::unbind),
                flags,
            })
        })
    }

    /// `ENUM`, `DICT`, `SLOTS`, `NAMEDTUPLE` or `HOOK`.
    #[getter(mode)]
    fn mode_name(&self) -> &'static str {
        self.mode.name()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "RegistryEntry({}, {}, {})",
            self.name.bind(py),
            self.mode.name(),
            self.cls
                .bind(py)
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        )
    }
}

impl Entry {
    /// The slot names of a DICT or SLOTS class (the dataclass fields first,
    /// for SLOTS), or the fields of a named tuple; empty for other modes.
    pub fn names<'py>(&self, py: Python<'py>) -> Bound<'py, PyTuple> {
        match &self.fields {
            Some(f) => f.bind(py).clone(),
            None => PyTuple::empty(py),
        }
    }

    pub fn has(&self, bit: u8) -> bool {
        self.flags & bit != 0
    }
}

/// What `amber._registry` installs: the classifier and the name table.
struct Registry {
    /// `classify(type) -> (kind, extra)`.
    classify: Py<PyAny>,
    /// `name -> entry` for decoding.
    by_name: Py<PyDict>,
    /// `type -> (kind, extra)`, filled on first sight of each type.
    cache: Py<PyDict>,
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
        .map_err(|_| PyRuntimeError::new_err("amber registry installed twice"))
}

fn registry(py: Python<'_>) -> PyResult<&Registry> {
    REGISTRY
        .get(py)
        .ok_or_else(|| PyRuntimeError::new_err("amber._registry is not installed"))
}

/// Classify a type outside the hot set: `(kind, extra)`, cached per type.
/// `extra` is the [`Entry`] of a registered class and the reason for an
/// unsupported one.
pub fn classify<'py>(
    py: Python<'py>,
    t: *mut ffi::PyTypeObject,
) -> PyResult<(Kind, Bound<'py, PyAny>)> {
    let reg = registry(py)?;
    // SAFETY: `t` is the type of an object the caller holds, so it is alive;
    // the Bound takes a reference of its own.
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
    let code: u8 = pair.get_item(0)?.extract()?;
    let kind = Kind::from_code(code)
        .ok_or_else(|| PyValueError::new_err(format!("classify gave unknown kind {code}")))?;
    Ok((kind, pair.get_item(1)?))
}

/// Forget cached classifications (after the registry changes).
pub fn clear_cache(py: Python<'_>) -> PyResult<()> {
    registry(py)?.cache.bind(py).clear();
    Ok(())
}

/// Look up a registered class by name for decoding.
pub fn lookup_name<'py>(
    py: Python<'py>,
    name: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, Entry>>> {
    match registry(py)?.by_name.bind(py).get_item(name)? {
        Some(e) => Ok(Some(e.cast_into::<Entry>()?)),
        None => Ok(None),
    }
}
