//! The Python API layer: the `#[pymethods]` of the pyclasses and the
//! `#[pyfunction]`s, made of the state and its operations.
//!
//! - `schema.rs`: `ProtoSchema` (compile `.proto` files or load a
//!   descriptor set; what `amber.proto` builds its classes from);
//! - `repeated.rs`, `map.rs`: the repeated and map containers' methods.

// Method names are Google's (`MergeFrom`, ...).
#[allow(non_snake_case)]
pub mod map;
#[allow(non_snake_case)]
pub mod repeated;
pub mod schema;
