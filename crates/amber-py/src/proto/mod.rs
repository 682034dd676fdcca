//! The Protocol Buffers part's edge, for `amber.proto`: compiled schemas,
//! the native base class of message classes, field descriptors, repeated
//! and map containers, and the builder and source the core's wire decoder
//! and encoder drive.
//!
//! - `state/schema.rs`, `api/schema.rs`: `ProtoSchema` (compile `.proto`
//!   files or load a descriptor set; what `amber.proto` builds its classes
//!   from);
//! - `state/cell.rs`: the GIL-guarded borrow flag of messages and
//!   containers;
//! - `state/message.rs`, `state/objects.rs`, `message.rs`: `Message`, its
//!   slots, presence and Google's semantics for default sub-messages;
//! - `state/repeated.rs`, `state/map.rs`, `api/repeated.rs`, `api/map.rs`:
//!   repeated and map fields;
//! - `ops/assign.rs`: checking values of repeated and map fields;
//! - `state/values.rs`: checking values on the way in, Python objects of decoded
//!   scalars, and scalars of stored values;
//! - `parse.rs`, `serialize.rs`: wire bytes in and out;
//! - `json.rs`: ProtoJSON text in and out, through the same builder and
//!   source.

// Method names are Google's (`SerializeToString`, `MergeFrom`, ...).
mod api;
#[allow(non_snake_case)]
mod message;
mod ops;
mod state;

use pyo3::prelude::*;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<api::schema::PySchema>()?;
    m.add_class::<state::message::PyMessage>()?;
    m.add_class::<message::MessageType>()?;
    m.add_class::<message::Field>()?;
    m.add_class::<state::repeated::Repeated>()?;
    m.add_class::<state::map::MapField>()?;
    m.add_function(wrap_pyfunction!(ops::json::proto_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(ops::json::proto_merge_json, m)?)?;
    m.add_function(wrap_pyfunction!(ops::json::proto_merge_dict, m)?)?;
    Ok(())
}
