//! The Python API layer: the `#[pymethods]` of the pyclasses and the
//! `#[pyfunction]`s, made of the state and its operations.
//!
//! - `schema.rs`: `ProtoSchema` (compile `.proto` files or load a
//!   descriptor set; what `amber.proto` builds its classes from).

pub mod schema;
