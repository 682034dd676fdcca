//! Assigning values: checking a value for a field on the way in, as the
//! field's setter does.

use std::sync::Arc;

use amber_core::proto::runtime::FieldInfo;
use pyo3::prelude::*;

use crate::proto::message;
use crate::proto::state::map::MapField;
use crate::proto::state::repeated::Kept;
use crate::proto::state::schema::Schema;
use crate::proto::state::values;

impl Kept {
    /// Check `v` for repeated field `f` as its setter would (messages
    /// copied or built; numbers read in place where they can be). The
    /// check may run Python code: hold no borrow of the container.
    #[inline]
    pub fn check(
        py: Python<'_>,
        s: &Arc<Schema>,
        f: &FieldInfo,
        v: &Bound<'_, PyAny>,
    ) -> PyResult<Kept> {
        if f.kind.packable() {
            Ok(Kept::Num(values::check_bits(&s.tables, f, f.kind, v)?))
        } else {
            Ok(Kept::Obj(message::element(py, s, f, v)?))
        }
    }
}

impl MapField {
    pub fn check_key(&self, k: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let f = self.entry_field(0);
        values::check(&self.s.tables, f, f.kind, k)
    }

    pub fn check_value(&self, v: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let f = self.entry_field(1);
        message::element(v.py(), &self.s, f, v)
    }
}
