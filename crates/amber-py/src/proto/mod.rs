//! The Protocol Buffers part's edge, for `amber.proto`: compiled schemas,
//! the native base class of message classes, field descriptors, repeated
//! and map containers, and the builder and source the core's wire decoder
//! and encoder drive.
//!
//! Three layers, each importing only those below it:
//!
//! - [`state`]: what messages and containers hold. `cell.rs` (the
//!   GIL-guarded borrow flag), `values.rs` (checking values on the way in,
//!   Python objects of decoded scalars, scalars of stored values),
//!   `schema.rs` (a compiled load as Python sees it), `message.rs`
//!   (`Message`, its slots and presence), `objects.rs` (Python objects made
//!   when read, and Google's semantics for default sub-messages),
//!   `repeated.rs` and `map.rs` (repeated and map fields' storage);
//! - [`ops`]: what is done to messages. `parse.rs` and `serialize.rs`
//!   (wire bytes in and out), `required.rs` (required-field checks),
//!   `json.rs` (ProtoJSON text and dicts in and out, through the same
//!   builder and source), `copy.rs`, `merge.rs` and `assign.rs` (checked
//!   assignment);
//! - [`api`]: what Python calls. `message.rs` (`Message`'s methods and the
//!   class-level handle), `field.rs` (the field descriptor), `repeated.rs`
//!   and `map.rs` (the containers' methods), `schema.rs` (`ProtoSchema`)
//!   and `json.rs` (ProtoJSON's functions).

mod api;
mod ops;
mod state;

use pyo3::prelude::*;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<api::schema::PySchema>()?;
    m.add_class::<state::message::PyMessage>()?;
    m.add_class::<api::message::MessageType>()?;
    m.add_class::<api::field::Field>()?;
    crate::ffi::slots::install_descr_get::<api::field::Field>(m.py())?;
    m.add_class::<state::repeated::Repeated>()?;
    m.add_class::<state::map::MapField>()?;
    m.add_function(wrap_pyfunction!(api::json::proto_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(api::json::proto_merge_json, m)?)?;
    m.add_function(wrap_pyfunction!(api::json::proto_merge_dict, m)?)?;
    Ok(())
}
