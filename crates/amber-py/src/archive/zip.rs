//! The zip container: the end record and central directory read and
//! checked, local headers, and `ZipWriter`.

use amber_core::archive::zip::read::{self, EndInfo, Limits};
use amber_core::archive::zip::write::ZipWriter;
use amber_core::archive::zip::{CentralEntry, Method};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::bytes::fail;

/// One central directory entry, and where its bytes must end (the next
/// entry's header or the directory; see `read::span_ends`).
#[pyclass(frozen, from_py_object, module = "amber._native", name = "ZipEntry")]
#[derive(Clone)]
pub struct PyZipEntry(CentralEntry, u64);

#[pymethods]
impl PyZipEntry {
    #[getter]
    fn name(&self) -> &str {
        &self.0.name
    }
    /// "stored", "deflate", "zstd", or "method N" for one amber does not read.
    #[getter]
    fn method(&self) -> String {
        Method::from_code(self.0.method)
            .map_or_else(|| format!("method {}", self.0.method), |m| m.name().into())
    }
    #[getter]
    fn flags(&self) -> u16 {
        self.0.flags
    }
    #[getter]
    fn crc32(&self) -> u32 {
        self.0.crc32
    }
    #[getter]
    fn compressed_size(&self) -> u64 {
        self.0.compressed_size
    }
    #[getter]
    fn size(&self) -> u64 {
        self.0.size
    }
    #[getter]
    fn header_offset(&self) -> u64 {
        self.0.header_offset
    }
    fn __repr__(&self) -> String {
        format!(
            "<ZipEntry {:?} {} {} bytes>",
            self.0.name,
            self.method(),
            self.0.size
        )
    }
}

/// Where the central directory is.
#[pyclass(frozen, from_py_object, module = "amber._native", name = "ZipEnd")]
#[derive(Clone)]
pub struct PyZipEnd(EndInfo);

#[pymethods]
impl PyZipEnd {
    #[getter]
    fn cd_offset(&self) -> u64 {
        self.0.cd_offset
    }
    #[getter]
    fn cd_size(&self) -> u64 {
        self.0.cd_size
    }
    #[getter]
    fn entries(&self) -> u64 {
        self.0.entries
    }
    /// `(offset, length)` of the ZIP64 end record to read next, or None.
    #[getter]
    fn need(&self) -> Option<(u64, usize)> {
        self.0.need
    }
}

/// The zip writer: local headers to write before each entry's data, then
/// the directory.
#[pyclass(module = "amber._native", name = "ZipWriter")]
pub struct PyZipWriter(ZipWriter);

#[pymethods]
impl PyZipWriter {
    #[new]
    #[pyo3(signature = (start_offset=0, existing=None))]
    fn new(start_offset: u64, existing: Option<Vec<PyZipEntry>>) -> Self {
        match existing {
            Some(e) => PyZipWriter(ZipWriter::append(
                e.into_iter().map(|x| x.0).collect(),
                start_offset,
            )),
            None => PyZipWriter(ZipWriter::new(start_offset)),
        }
    }
    #[getter]
    fn position(&self) -> u64 {
        self.0.position()
    }
    #[pyo3(signature = (name, method, crc32, compressed_size, size, align=1))]
    #[allow(clippy::too_many_arguments)] // the header's fields, as Python passes them
    fn local_header<'py>(
        &mut self,
        py: Python<'py>,
        name: &str,
        method: &str,
        crc32: u32,
        compressed_size: u64,
        size: u64,
        align: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        crate::errors::guard(|| {
            let method = Method::from_name(method).map_err(fail(py))?;
            let h = self
                .0
                .local_header(name, method, crc32, compressed_size, size, align)
                .map_err(fail(py))?;
            Ok(PyBytes::new(py, &h))
        })
    }
    /// The first local header of an entry compressed as it streams (see
    /// `end_streamed`).
    fn begin_streamed<'py>(
        &mut self,
        py: Python<'py>,
        name: &str,
        method: &str,
        size: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        crate::errors::guard(|| {
            let method = Method::from_name(method).map_err(fail(py))?;
            let h = self
                .0
                .begin_streamed(name, method, size)
                .map_err(fail(py))?;
            Ok(PyBytes::new(py, &h))
        })
    }
    /// The final local header of the entry `begin_streamed` opened, to write
    /// over the first one, once its stored bytes are written.
    fn end_streamed<'py>(
        &mut self,
        py: Python<'py>,
        name: &str,
        crc32: u32,
        compressed_size: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        crate::errors::guard(|| {
            let h = self
                .0
                .end_streamed(name, crc32, compressed_size)
                .map_err(fail(py))?;
            Ok(PyBytes::new(py, &h))
        })
    }
    fn remove(&mut self, name: &str) -> bool {
        self.0.remove(name)
    }
    /// Set an entry's CRC-32 after its data was written (the caller patches
    /// the local header at `ZIP_LOCAL_CRC_AT`).
    fn set_crc(&mut self, name: &str, crc32: u32) -> bool {
        self.0.set_crc(name, crc32)
    }
    fn finish<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.0.finish())
    }
}

#[pyfunction]
pub fn zip_find_end(py: Python<'_>, tail: &[u8], file_len: u64) -> PyResult<PyZipEnd> {
    crate::errors::guard(|| {
        read::find_end(tail, file_len)
            .map(PyZipEnd)
            .map_err(fail(py))
    })
}

/// The end information, from the ZIP64 end record `end.need` asked for.
#[pyfunction]
pub fn zip_find_end_from(
    py: Python<'_>,
    record: &[u8],
    end: PyZipEnd,
    file_len: u64,
) -> PyResult<PyZipEnd> {
    crate::errors::guard(|| {
        let _ = file_len;
        read::finish_zip64(record, end.0)
            .map(PyZipEnd)
            .map_err(fail(py))
    })
}

#[pyfunction]
#[pyo3(signature = (cd, end, file_len, max_ratio=None))]
pub fn zip_parse_central(
    py: Python<'_>,
    cd: &[u8],
    end: PyZipEnd,
    file_len: u64,
    max_ratio: Option<f64>,
) -> PyResult<Vec<PyZipEntry>> {
    crate::errors::guard(|| {
        let _ = file_len;
        let mut limits = Limits::default();
        if let Some(r) = max_ratio {
            limits.max_ratio = r;
        }
        let entries = read::parse_central(cd, &end.0, &limits).map_err(fail(py))?;
        let ends = read::span_ends(&entries, end.0.cd_offset);
        Ok(entries
            .into_iter()
            .zip(ends)
            .map(|(e, end)| PyZipEntry(e, end))
            .collect())
    })
}

/// The length of the local header whose first 30 bytes are `fixed`.
#[pyfunction]
pub fn zip_local_need(py: Python<'_>, fixed: &[u8]) -> PyResult<usize> {
    crate::errors::guard(|| read::local_len(fixed).map_err(fail(py)))
}

/// The file offset of an entry's data, from its whole local header; the
/// data must end where the entry's span does.
#[pyfunction]
pub fn zip_data_offset(py: Python<'_>, local: &[u8], entry: PyZipEntry) -> PyResult<u64> {
    crate::errors::guard(|| read::data_offset_within(local, &entry.0, entry.1).map_err(fail(py)))
}
