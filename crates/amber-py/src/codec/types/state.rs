//! The state of a registered instance without hooks, as pickle sees it:
//! what the encoder writes (the `__dict__` and the slots that are set, or
//! what the class's own `__getstate__()` returns) and how the decoder gives
//! it to an instance it made (`__setstate__`, else pickle's BUILD: the
//! attributes into `__dict__`, the slots with `object.__setattr__`).
//!
//! The decoder calls nothing but the registered class's own `__new__` and
//! `__setstate__` (and the descriptors of its slots).

use pyo3::exceptions::{PyAttributeError, PyValueError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::codec::registry::{flag, Entry, Mode};
use crate::errors;

/// What the encoder writes for an instance of a DICT, SLOTS or NAMEDTUPLE
/// class.
pub enum State<'py> {
    /// OBJECT_FILL, as amber always wrote it: the `__dict__` (DICT mode)
    /// or the slots that are set (SLOTS mode), set directly on decoding.
    Fill(Bound<'py, PyDict>),
    /// OBJECT_STATE with pickle's default state: the attributes (None when
    /// there are none) alone, or with the slots as a pair.
    Default {
        dict: Option<Bound<'py, PyDict>>,
        slots: Option<Bound<'py, PyDict>>,
    },
    /// OBJECT_STATE with what the class's `__getstate__()` returned.
    Custom(Bound<'py, PyAny>),
    /// A named tuple with nothing beyond its fields: OBJECT.
    Fields,
}

/// The state to write for `obj`, an instance of the registered class `e`.
pub fn of<'py>(obj: &Bound<'py, PyAny>, e: &Entry) -> PyResult<State<'py>> {
    let py = obj.py();
    if e.has(flag::GETSTATE) {
        let state = obj.call_method0(intern!(py, "__getstate__"))?;
        if e.mode == Mode::NamedTuple && state.is_none() {
            return Ok(State::Fields);
        }
        return Ok(State::Custom(state));
    }
    let dict = instance_dict(obj, e)?;
    if e.mode == Mode::NamedTuple {
        return Ok(match dict.filter(|d| !d.is_empty()) {
            None => State::Fields,
            dict => State::Default { dict, slots: None },
        });
    }
    let slots = slot_values(obj, e)?;
    // Without __setstate__, what OBJECT_FILL can carry goes there, as it
    // always did; the rest is pickle's default state.
    let plain = !e.has(flag::SETSTATE);
    Ok(match (e.mode, dict, slots) {
        (Mode::Slots, _, slots) if plain => State::Fill(slots.unwrap_or_else(|| PyDict::new(py))),
        (_, Some(dict), None) if plain => State::Fill(dict),
        (_, dict, slots) => State::Default {
            dict: dict.filter(|d| !d.is_empty()),
            slots,
        },
    })
}

/// The instance `__dict__` (None if instances have none), without the
/// `__orig_class__` that `typing` sets on instances made through a
/// subscripted generic class: it names a type, not data.
fn instance_dict<'py>(obj: &Bound<'py, PyAny>, e: &Entry) -> PyResult<Option<Bound<'py, PyDict>>> {
    let py = obj.py();
    if !has_dict(e) {
        return Ok(None);
    }
    let dict = obj.getattr(intern!(py, "__dict__"))?;
    let mut dict = dict
        .cast_into_exact::<PyDict>()
        .map_err(|_| PyValueError::new_err("instance __dict__ is not a dict"))?;
    let orig = intern!(py, "__orig_class__");
    if dict.contains(orig)? {
        dict = dict.copy()?;
        dict.del_item(orig)?;
    }
    if !all_str_keys(&dict) {
        return Err(PyValueError::new_err(
            "instance __dict__ has a key that is not a str",
        ));
    }
    Ok(Some(dict))
}

/// Whether every key of the dict is a str.
fn all_str_keys(dict: &Bound<'_, PyDict>) -> bool {
    let mut pos: ffi::Py_ssize_t = 0;
    let mut key = std::ptr::null_mut();
    let mut value = std::ptr::null_mut();
    // SAFETY: `dict` is a live dict (the Bound holds it). PyDict_Next hands
    // out borrowed pointers into its table, each read before the next call;
    // PyUnicode_Check runs no Python code, so nothing can change the dict
    // meanwhile.
    unsafe {
        while ffi::PyDict_Next(dict.as_ptr(), &mut pos, &mut key, &mut value) != 0 {
            if ffi::PyUnicode_Check(key) == 0 {
                return false;
            }
        }
    }
    true
}

/// The slots of `obj` that are set, by name (unset ones are left out, as
/// pickle does); None if no slot is set.
fn slot_values<'py>(obj: &Bound<'py, PyAny>, e: &Entry) -> PyResult<Option<Bound<'py, PyDict>>> {
    let py = obj.py();
    let names = slot_names(py, e);
    if names.is_empty() {
        return Ok(None);
    }
    let values = PyDict::new(py);
    for name in names.iter() {
        match obj.getattr(name.cast::<PyString>()?) {
            Ok(v) => values.set_item(name, v)?,
            Err(err) if err.is_instance_of::<PyAttributeError>(py) => {}
            Err(err) => return Err(err),
        }
    }
    Ok(Some(values).filter(|v| !v.is_empty()))
}

/// The slot names of a DICT or SLOTS class; a named tuple has none.
fn slot_names<'py>(py: Python<'py>, e: &Entry) -> Bound<'py, PyTuple> {
    match e.mode {
        Mode::Dict | Mode::Slots => e.names(py),
        _ => PyTuple::empty(py),
    }
}

/// Whether instances of the class have a `__dict__`.
fn has_dict(e: &Entry) -> bool {
    match e.mode {
        Mode::Dict => true,
        Mode::NamedTuple => e.has(flag::HAS_DICT),
        _ => false,
    }
}

/// A state taken apart as pickle's BUILD takes it apart when the class has
/// no `__setstate__`: None; a dict of attributes; or a pair (attributes or
/// None, slots or None).
pub struct Parts<'py> {
    pub dict: Option<Bound<'py, PyDict>>,
    pub slots: Option<Bound<'py, PyDict>>,
}

/// Take `state` apart and check it against the class: attribute names are
/// str and need a `__dict__` to go into; slot names are the class's slots.
/// The error is a message saying what is wrong.
pub fn parts<'py>(e: &Entry, state: &Bound<'py, PyAny>) -> Result<Parts<'py>, String> {
    let py = state.py();
    let (dict, slots) = match state.cast_exact::<PyTuple>() {
        Ok(pair) if pair.len() == 2 => (pair.get_item(0).ok(), pair.get_item(1).ok()),
        Ok(_) => return Err("a state tuple must be a pair (attributes, slots)".into()),
        Err(_) => (Some(state.clone()), None),
    };
    let as_dict = |v: Option<Bound<'py, PyAny>>, what: &str| match v {
        Some(v) if !v.is_none() => v.cast_into::<PyDict>().map(Some).map_err(|e| {
            format!(
                "{what} must be a dict or None, not {}",
                type_name(e.into_inner().as_any())
            )
        }),
        _ => Ok(None),
    };
    let dict = as_dict(dict, "the attributes")?;
    let slots = as_dict(slots, "the slots")?;
    if let Some(d) = &dict {
        check_attrs(e, d)?;
    }
    if let Some(s) = &slots {
        check_slots(py, e, s)?;
    }
    Ok(Parts { dict, slots })
}

/// Attributes for the instance `__dict__`: str names, and a `__dict__`.
pub fn check_attrs(e: &Entry, attrs: &Bound<'_, PyDict>) -> Result<(), String> {
    if attrs.is_empty() {
        return Ok(());
    }
    if !has_dict(e) {
        return Err("its instances have no __dict__ to hold attributes".into());
    }
    match attrs
        .keys()
        .iter()
        .find(|k| !k.is_instance_of::<PyString>())
    {
        Some(k) => Err(format!(
            "attribute names must be str, not {}",
            type_name(&k)
        )),
        None => Ok(()),
    }
}

/// Slot values: each name one of the class's slots.
pub fn check_slots(py: Python<'_>, e: &Entry, slots: &Bound<'_, PyDict>) -> Result<(), String> {
    let names = slot_names(py, e);
    for k in slots.keys().iter() {
        if !k.is_instance_of::<PyString>() {
            return Err(format!("slot names must be str, not {}", type_name(&k)));
        }
        if !names.contains(&k).unwrap_or(false) {
            let shown = k.repr().map(|r| r.to_string()).unwrap_or_default();
            return Err(format!("the class has no slot {shown}"));
        }
    }
    Ok(())
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default()
}

/// Give a decoded state to `obj`, which the decoder just made: nothing for
/// None; `obj.__setstate__(state)` if the class defines it; else the parts.
pub fn apply(e: &Entry, obj: &Bound<'_, PyAny>, state: &Bound<'_, PyAny>) -> PyResult<()> {
    if state.is_none() {
        return Ok(());
    }
    if e.has(flag::SETSTATE) {
        obj.call_method1(intern!(obj.py(), "__setstate__"), (state,))
            .map_err(|err| errors::decode_raised(obj.py(), err))?;
        return Ok(());
    }
    let parts = parts(e, state).map_err(PyValueError::new_err)?;
    if let Some(d) = parts.dict {
        set_attrs(obj, &d)?;
    }
    if let Some(s) = parts.slots {
        set_slots(obj, &s)?;
    }
    Ok(())
}

/// Update the instance `__dict__` with checked attributes.
pub fn set_attrs(obj: &Bound<'_, PyAny>, attrs: &Bound<'_, PyDict>) -> PyResult<()> {
    if !attrs.is_empty() {
        obj.getattr(intern!(obj.py(), "__dict__"))?
            .call_method1(intern!(obj.py(), "update"), (attrs,))?;
    }
    Ok(())
}

/// Set checked slots with `object.__setattr__`, past any `__setattr__` the
/// class defines (a frozen dataclass refuses its own).
pub fn set_slots(obj: &Bound<'_, PyAny>, slots: &Bound<'_, PyDict>) -> PyResult<()> {
    static SETATTR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let py = obj.py();
    let setattr = SETATTR.get_or_try_init(py, || {
        py.import("builtins")?
            .getattr(intern!(py, "object"))?
            .getattr(intern!(py, "__setattr__"))
            .map(Bound::unbind)
    })?;
    for (k, v) in slots.iter() {
        setattr.call1(py, (obj, k, v))?;
    }
    Ok(())
}
