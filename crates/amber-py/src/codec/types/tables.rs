//! Tables, both halves (spec §6.14): pandas DataFrames and Series, polars
//! DataFrames and Series, pyarrow Tables and RecordBatches, as ARROW items
//! holding an Arrow IPC stream. `amber._frames` does the pyarrow work; this
//! file frames the stream like an array's data: in band and aligned, or
//! out of band through `buffer_callback`, and on reading hands pyarrow a
//! copy of the stream, a view of the input (`zero_copy`) or the caller's
//! buffer.

use amber_core::codec::build::{ArrowTable, NdData};
use amber_core::codec::writer as w;
use pyo3::exceptions::PyImportError;
use pyo3::intern;
use pyo3::prelude::*;

use crate::codec::decode::PyBuilder;
use crate::codec::encode::{Encoder, OrFail, R};
use crate::errors::{self, DecodeKind, EncodeKind};
use crate::ffi::buffer::{copy_to_bytes, InputBuffer};
use crate::ffi::obj::Obj;
use crate::typeref;

impl<'py> Encoder<'py> {
    /// A table of ARROW kind `kind`: its extras item, then its stream.
    pub(crate) fn table(&mut self, obj: &Bound<'py, PyAny>, kind: u8) -> R {
        self.aligned_data_here()?;
        let py = self.py;
        let (extras, stream, described): (Bound<'py, PyAny>, Bound<'py, PyAny>, bool) =
            typeref::frames(py)
                .and_then(|m| m.getattr(intern!(py, "to_arrow")))
                .and_then(|f| f.call1((obj, kind)))
                .and_then(|r| r.extract())
                // What Arrow cannot hold (mixed-type object columns, complex
                // numbers, duplicate column names), or no pyarrow: the value
                // cannot travel as a table.
                .or_fail_as(EncodeKind::Unsupported)?;
        w::write_arrow_header(&mut self.out, kind);
        self.item((&extras).into())?;
        let view = InputBuffer::get(&stream).or_fail()?;
        let oob = if view.bytes().len() >= self.opts.oob_threshold {
            self.out_of_band((&stream).into())?
        } else {
            None
        };
        w::write_arrow_flags(&mut self.out, oob, described);
        if oob.is_none() {
            w::write_ndarray_data(&mut self.out, self.frame_start, view.bytes());
        }
        Ok(())
    }
}

impl<'py> PyBuilder<'py, '_> {
    #[inline(never)]
    pub(crate) fn arrow_(&mut self, t: ArrowTable<'_, Obj>) -> PyResult<Obj> {
        let py = self.py;
        let stream = match t.data {
            NdData::Inline { offset, bytes } if self.opts.zero_copy => {
                self.input_slice(offset, bytes.len())?
            }
            NdData::Inline { bytes, .. } => copy_to_bytes(py, bytes, false, self.input_fixed)?,
            NdData::OutOfBand { index } => self.buffer(index)?.clone(),
        };
        let build = typeref::frames(py)
            .and_then(|m| m.getattr(intern!(py, "from_arrow")))
            .and_then(|f| f.call1((t.kind, self.bound(&t.extras), stream)));
        match build {
            Ok(v) => Ok(self.obj(v)),
            Err(e) if e.is_instance_of::<PyImportError>(py) => Err(errors::decode_fail(
                py,
                DecodeKind::Refused,
                format!("{} (the data holds a table)", e.value(py)),
            )),
            Err(e) => Err(e),
        }
    }
}
