//! The codec's edge: `dumps`, `loads` and `frame_length` (`functions.rs`),
//! over the encoder (`encode/`, the object walker that writes frames), the
//! builder (`decode.rs`, which amber-core's walker drives), the type
//! families outside the hot set with both halves side by side (`types/`),
//! and the registry bridge (`registry.rs`). [`register`] puts them in the
//! module, as each part's `register` does.

pub mod decode;
pub mod encode;
mod functions;
pub mod registry;
mod types;

pub use functions::{loads_slice, DEFAULT_OOB_THRESHOLD};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use amber_core::codec::walker::DEFAULT_MAX_DEPTH;

/// The codec's functions, constants and classes in the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(functions::dumps, m)?)?;
    m.add_function(wrap_pyfunction!(functions::loads, m)?)?;
    m.add_function(wrap_pyfunction!(functions::frame_length, m)?)?;
    m.add_function(wrap_pyfunction!(functions::_install, m)?)?;
    m.add_function(wrap_pyfunction!(functions::_clear_type_cache, m)?)?;
    m.add("FORMAT_VERSION", amber_core::codec::format::VERSION)?;
    m.add("DEFAULT_MAX_DEPTH", DEFAULT_MAX_DEPTH)?;
    m.add("DEFAULT_OOB_THRESHOLD", DEFAULT_OOB_THRESHOLD)?;
    m.add("HEADER_LEN", amber_core::codec::format::HEADER_LEN)?;
    let kinds = PyDict::new(py);
    for (name, kind) in registry::Kind::ALL {
        kinds.set_item(name, kind as u8)?;
    }
    m.add("KINDS", kinds)?;
    m.add_class::<registry::Entry>()?;
    Ok(())
}
