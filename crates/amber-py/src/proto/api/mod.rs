//! The Python API layer: the `#[pymethods]` of the pyclasses and the
//! `#[pyfunction]`s, made of the state and its operations.
//!
//! - `message.rs`: `Message`'s methods and `cls.__amber__`;
//! - `field.rs`: `ProtoField`, the descriptor of one field;
//! - `repeated.rs`, `map.rs`: the repeated and map containers' methods;
//! - `schema.rs`: `ProtoSchema` (compile `.proto` files or load a
//!   descriptor set; what `amber.proto` builds its classes from);
//! - `json.rs`: ProtoJSON text and dicts in and out.

pub mod field;
pub mod json;
// Method names are Google's (`SerializeToString`, `MergeFrom`, ...).
#[allow(non_snake_case)]
pub mod map;
#[allow(non_snake_case)]
pub mod message;
#[allow(non_snake_case)]
pub mod repeated;
pub mod schema;
