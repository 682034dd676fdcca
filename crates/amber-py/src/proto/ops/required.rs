//! Required fields: which are missing in a message and below it.

use amber_core::proto::runtime::Kind;
use pyo3::prelude::*;

use crate::errors::{self, EncodeKind};
use crate::proto::ops::serialize::changing;
use crate::proto::state::cell::Borrow;
use crate::proto::state::map::{MapData, Part};
use crate::proto::state::message::{sub_type, Message, PyMessage, Slot};
use crate::proto::state::repeated::Items;

/// The paths of required fields not set in `m` and below (`a.b[2].c`).
pub fn missing_required(m: &Bound<'_, PyMessage>) -> PyResult<Vec<String>> {
    let mut out = Vec::new();
    walk_required(m.py(), &*m.state()?, "", &mut out, 0)?;
    Ok(out)
}

/// Walk `m` and its sub-messages (objects or kept natively, read where
/// they are: nothing is made) for required fields that are not set.
fn walk_required(
    py: Python<'_>,
    m: &Message,
    prefix: &str,
    out: &mut Vec<String>,
    depth: usize,
) -> PyResult<()> {
    if !m.s.needs_check[m.ty as usize] || depth > amber_core::proto::wire::MAX_DEPTH {
        return Ok(());
    }
    let object = |o: &Py<PyAny>, at: &str, out: &mut Vec<String>| -> PyResult<()> {
        let sub = o.bind(py).cast::<PyMessage>()?.state()?;
        walk_required(py, &sub, at, out, depth + 1)
    };
    let objects = |items: &Items, name: &str, out: &mut Vec<String>| -> PyResult<()> {
        if let Items::Objs(v) = items {
            for (i, o) in v.iter().enumerate() {
                object(o, &format!("{prefix}{name}[{i}]."), out)?;
            }
        }
        Ok(())
    };
    for (pos, f) in m.info().fields.iter().enumerate() {
        if f.required && !m.present(py, pos) {
            out.push(format!("{prefix}{}", f.name));
        }
        let Kind::Message(sub) = f.kind else { continue };
        if !m.s.needs_check[sub as usize] {
            continue;
        }
        let name = &f.name;
        match m.slot(pos) {
            Slot::Val(o) => object(o, &format!("{prefix}{name}."), out)?,
            Slot::Sub(sub) => walk_required(py, sub, &format!("{prefix}{name}."), out, depth + 1)?,
            Slot::List(l) => objects(&l.try_borrow(py)?.items, name, out)?,
            Slot::Items(items) => objects(items, name, out)?,
            Slot::Subs(v) => {
                for (i, sub) in v.iter().enumerate() {
                    walk_required(py, sub, &format!("{prefix}{name}[{i}]."), out, depth + 1)?;
                }
            }
            Slot::Map(l) => entries(py, &l.try_borrow(py)?.data, prefix, name, out, depth)?,
            Slot::Entries(d) => entries(py, d, prefix, name, out, depth)?,
            &Slot::Raw(off, len) => {
                let sub = m.build_at(py, sub, (off, len))?;
                walk_required(py, &sub, &format!("{prefix}{name}."), out, depth + 1)?
            }
            Slot::Raws(v) => {
                for (i, &sp) in v.iter().enumerate() {
                    let sub = m.build_at(py, sub, sp)?;
                    walk_required(py, &sub, &format!("{prefix}{name}[{i}]."), out, depth + 1)?;
                }
            }
            Slot::Pairs(p) => {
                let (kk, vk) = m.entry_kinds(f);
                for (i, &(k, v)) in p.entries.iter().enumerate() {
                    let built;
                    let sub = match v {
                        Part::Raw(off, len) => {
                            built = m.build_at(py, sub_type(vk), (off, len))?;
                            &built
                        }
                        _ => match p.msgs.get(i) {
                            Some(sub) => sub,
                            None => continue,
                        },
                    };
                    let key = m.part_object(py, kk, k)?;
                    let at = format!("{prefix}{name}[{}].", key.bind(py).repr()?);
                    walk_required(py, sub, &at, out, depth + 1)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// [`walk_required`] through a map's message values.
fn entries(
    py: Python<'_>,
    d: &MapData,
    prefix: &str,
    name: &str,
    out: &mut Vec<String>,
    depth: usize,
) -> PyResult<()> {
    for (k, v) in &d.entries {
        if let Ok(vm) = v.bind(py).cast::<PyMessage>() {
            let at = format!("{prefix}{name}[{}].", k.bind(py).repr()?);
            walk_required(py, &*vm.state()?, &at, out, depth + 1)?;
        }
    }
    Ok(())
}

/// Raise `amber.EncodeError` (kind `required`) when `m` misses required
/// fields, as Google's `SerializeToString` does.
pub fn check_initialized(m: &Bound<'_, PyMessage>) -> PyResult<()> {
    // A message borrowed for a change is not written (kind `mutated`, as
    // the encoder says of it).
    drop(m.state().map_err(changing)?);
    let missing = missing_required(m)?;
    if missing.is_empty() {
        return Ok(());
    }
    let py = m.py();
    let name = m.state()?.info().full_name.clone();
    Err(errors::make(
        py,
        errors::encode_error(py),
        EncodeKind::Required.name(),
        format!(
            "Message {name} is missing required fields: {}",
            missing.join(",")
        ),
        None,
        None,
        None,
    ))
}
