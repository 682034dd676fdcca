//! The archive part's edge: amber-core's zip writer and reader, compression,
//! hashes and `.npy` headers, for `amber.archive` (which does the file and
//! network I/O). Long work on read-only buffers runs without the GIL.

use amber_core::archive::data;
use amber_core::archive::error::ArchiveError;
use amber_core::archive::npy::{self, Literal};
use amber_core::archive::zip::read::{self, EndInfo, Limits};
use amber_core::archive::zip::write::ZipWriter;
use amber_core::archive::zip::{CentralEntry, Method};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyMemoryView, PyTuple};

use crate::errors;
use crate::ffi::buffer::{copy_to_bytes, InputBuffer};

fn fail(py: Python<'_>) -> impl Fn(ArchiveError) -> PyErr + '_ {
    move |e| errors::archive(py, e)
}

/// Run `f` on the bytes of `data` (any buffer), without the GIL when they
/// are many and cannot change meanwhile: a `bytes`, or a read-only
/// memoryview of a `bytes` or of a map (the views `amber.archive` reads
/// through). Other buffers (a bytearray, say) could be changed by another
/// thread, so the GIL is kept.
fn with_bytes<T: Send>(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    f: impl FnOnce(&[u8]) -> T + Send,
) -> PyResult<T> {
    let view = InputBuffer::get(data)?;
    let bytes = view.bytes();
    if fixed(data)? {
        crate::gil::bulk(py, bytes.len(), || f(bytes))
    } else {
        Ok(f(bytes))
    }
}

fn fixed(data: &Bound<'_, PyAny>) -> PyResult<bool> {
    if data.is_exact_instance_of::<PyBytes>() {
        return Ok(true);
    }
    let Ok(mv) = data.cast::<PyMemoryView>() else {
        return Ok(false);
    };
    let py = data.py();
    if !mv.getattr(intern!(py, "readonly"))?.is_truthy()? {
        return Ok(false);
    }
    let base = mv.getattr(intern!(py, "obj"))?;
    Ok(base.is_exact_instance_of::<PyBytes>() || base.is_instance(crate::typeref::mmap(py)?)?)
}

fn new_bytes<'py>(py: Python<'py>, v: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    copy_to_bytes(py, v, false, true)
}

/// `data` compressed with `method` ("stored", "deflate" or "zstd").
#[pyfunction]
#[pyo3(signature = (data, method, level=None))]
pub fn archive_compress<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    method: &str,
    level: Option<i32>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::errors::guard(|| {
        let method = Method::from_name(method).map_err(fail(py))?;
        let out = with_bytes(py, data, |b| data::compress(method, level, b))?.map_err(fail(py))?;
        new_bytes(py, &out)
    })
}

/// Exactly `size` bytes from an entry's stored data, checked against `crc32`
/// and unshuffled when `shuffle` (a byte-shuffle width) is not 0.
#[pyfunction]
#[pyo3(signature = (data, method, size, crc32, name, shuffle=0))]
pub fn archive_decompress<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    method: &str,
    size: u64,
    crc32: u32,
    name: &str,
    shuffle: usize,
) -> PyResult<Bound<'py, PyAny>> {
    crate::errors::guard(|| {
        let method = Method::from_name(method).map_err(fail(py))?;
        let out = with_bytes(py, data, |b| {
            data::decompress(method, b, size, crc32, shuffle, name)
        })?
        .map_err(fail(py))?;
        new_bytes(py, &out)
    })
}

/// The BLAKE3 hash of `data` (64 hex digits), on several threads for large data: what a
/// verified read checks.
#[pyfunction]
pub fn archive_blake3(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<String> {
    crate::errors::guard(|| with_bytes(py, data, data::blake3_hex))
}

/// `(crc32, blake3 hex)` of `data`.
#[pyfunction]
pub fn archive_digest(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<(u32, String)> {
    crate::errors::guard(|| with_bytes(py, data, |b| (data::crc32(b), data::blake3_hex(b))))
}

/// CRC-32 and BLAKE3 of content written in pieces.
#[pyclass(module = "amber._native", name = "Digest")]
#[derive(Default)]
pub struct PyDigest(data::Digest);

#[pymethods]
impl PyDigest {
    #[new]
    fn new() -> Self {
        PyDigest::default()
    }
    fn update(&mut self, py: Python<'_>, piece: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard(|| {
            let digest = &mut self.0;
            with_bytes(py, piece, |b| digest.update(b))
        })
    }
    /// Hash `piece` and write all of it to the open file descriptor `fd` at
    /// its position, the two at once. The GIL is held throughout, so no
    /// Python thread can change the piece between its hash and its write:
    /// the file holds exactly the bytes hashed.
    #[cfg(unix)]
    fn write_through(&mut self, fd: i32, piece: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard(|| {
            use std::io::Write;
            use std::os::fd::FromRawFd;
            let view = InputBuffer::get(piece)?;
            let bytes = view.bytes();
            // SAFETY: `fd` is the caller's open file, which it keeps open for
            // this call; ManuallyDrop never closes it, and the File is used only
            // here, for writes.
            let mut file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
            self.0
                .update_alongside(bytes, || file.write_all(bytes))
                .map_err(PyErr::from)
        })
    }
    /// Bytes seen so far.
    #[getter]
    fn size(&self) -> u64 {
        self.0.len()
    }
    /// `(crc32, blake3 hex)` of everything seen.
    fn finish(&self) -> (u32, String) {
        self.0.finish()
    }
}

/// Compresses an entry as it streams, hashing it on the way (see
/// `amber_core::archive::data::StreamCompressor`).
#[pyclass(module = "amber._native", name = "StreamCompressor")]
pub struct PyStreamCompressor(Option<data::StreamCompressor>);

#[pymethods]
impl PyStreamCompressor {
    #[new]
    #[pyo3(signature = (method, level, size, shuffle=0))]
    fn new(
        py: Python<'_>,
        method: &str,
        level: Option<i32>,
        size: u64,
        shuffle: usize,
    ) -> PyResult<Self> {
        crate::errors::guard(|| {
            let method = Method::from_name(method).map_err(fail(py))?;
            let c = data::StreamCompressor::new(method, level, size, shuffle).map_err(fail(py))?;
            Ok(PyStreamCompressor(Some(c)))
        })
    }
    /// Take `piece`; the compressed bytes ready so far. Python code cannot
    /// change a piece while it is compressed and hashed: the GIL is let go
    /// only for pieces that cannot change (`bytes`, read-only views of
    /// them).
    fn write<'py>(
        &mut self,
        py: Python<'py>,
        piece: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        crate::errors::guard(|| {
            let c = self.0.as_mut().ok_or_else(|| finished(py))?;
            let out = with_bytes(py, piece, move |b| c.write(b))?.map_err(fail(py))?;
            Ok(PyBytes::new(py, out))
        })
    }
    /// `write`, with the compressed bytes written to the open file `fd`
    /// (the output of one piece while the next is compressed; `finish`
    /// returns the last).
    #[cfg(unix)]
    fn write_to(&mut self, py: Python<'_>, fd: i32, piece: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard(|| {
            use std::io::Write;
            use std::os::fd::FromRawFd;
            let c = self.0.as_mut().ok_or_else(|| finished(py))?;
            // SAFETY: `fd` is the caller's open file, which it keeps open for
            // this call; ManuallyDrop never closes it, and the File is used only
            // here, for writes.
            let mut file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
            let sent = with_bytes(py, piece, move |b| {
                c.write_overlapped(b, |out| file.write_all(out))
            })?
            .map_err(fail(py))?;
            sent.map_err(PyErr::from)
        })
    }
    /// `(last compressed bytes, crc32, blake3 hex)`.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<(Bound<'py, PyBytes>, u32, String)> {
        crate::errors::guard(|| {
            let c = self.0.take().ok_or_else(|| finished(py))?;
            let (tail, crc, blake) = py.detach(|| c.finish()).map_err(fail(py))?;
            Ok((PyBytes::new(py, &tail), crc, blake))
        })
    }
}

fn finished(_py: Python<'_>) -> PyErr {
    pyo3::exceptions::PyValueError::new_err("the compressor has finished")
}

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

/// Check an Arrow IPC file before it is read: no compressed bodies (whose
/// declared lengths a reader allocates), every field name UTF-8.
#[pyfunction]
pub fn arrow_check_file(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
    crate::errors::guard(|| {
        with_bytes(py, data, amber_core::archive::arrow::check_ipc_file)?.map_err(fail(py))
    })
}

/// The CRC-32 of `data` (any buffer), for entries that have no BLAKE3 hash.
#[pyfunction]
pub fn archive_crc32(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<u32> {
    crate::errors::guard(|| with_bytes(py, data, data::crc32))
}

#[pyfunction]
pub fn npy_header<'py>(
    py: Python<'py>,
    descr: &str,
    fortran_order: bool,
    shape: Vec<u64>,
) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &npy::npy_header(descr, fortran_order, &shape))
}

/// `(descr, fortran_order, shape, data_offset)` from the start of an `.npy`
/// file; `descr` as plain Python values.
#[pyfunction]
pub fn npy_parse_header<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    crate::errors::guard(|| {
        let view = InputBuffer::get(data)?;
        let h = npy::parse_npy_header(view.bytes()).map_err(fail(py))?;
        let shape = PyTuple::new(py, &h.shape)?;
        let descr = literal(py, &h.descr)?;
        PyTuple::new(
            py,
            [
                descr,
                h.fortran_order.into_pyobject(py)?.to_owned().into_any(),
                shape.into_any(),
                h.data_offset.into_pyobject(py)?.into_any(),
            ],
        )
    })
}

fn literal<'py>(py: Python<'py>, v: &Literal) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Literal::Str(s) => s.into_pyobject(py)?.into_any(),
        Literal::Int(n) => n.into_pyobject(py)?.into_any(),
        Literal::BigInt(t) => py.get_type::<pyo3::types::PyInt>().call1((t,))?,
        Literal::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Literal::None => py.None().into_bound(py),
        Literal::Tuple(items) => PyTuple::new(
            py,
            items
                .iter()
                .map(|x| literal(py, x))
                .collect::<PyResult<Vec<_>>>()?,
        )?
        .into_any(),
        Literal::List(items) => PyList::new(
            py,
            items
                .iter()
                .map(|x| literal(py, x))
                .collect::<PyResult<Vec<_>>>()?,
        )?
        .into_any(),
        Literal::Dict(items) => {
            let d = PyDict::new(py);
            for (k, x) in items {
                d.set_item(k, literal(py, x)?)?;
            }
            d.into_any()
        }
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(archive_compress, m)?)?;
    m.add_function(wrap_pyfunction!(archive_decompress, m)?)?;
    m.add_function(wrap_pyfunction!(archive_digest, m)?)?;
    m.add_function(wrap_pyfunction!(archive_blake3, m)?)?;
    m.add_function(wrap_pyfunction!(zip_find_end, m)?)?;
    m.add_function(wrap_pyfunction!(zip_find_end_from, m)?)?;
    m.add_function(wrap_pyfunction!(zip_parse_central, m)?)?;
    m.add_function(wrap_pyfunction!(zip_local_need, m)?)?;
    m.add_function(wrap_pyfunction!(zip_data_offset, m)?)?;
    m.add_function(wrap_pyfunction!(archive_crc32, m)?)?;
    m.add_function(wrap_pyfunction!(arrow_check_file, m)?)?;
    m.add_function(wrap_pyfunction!(npy_header, m)?)?;
    m.add_function(wrap_pyfunction!(npy_parse_header, m)?)?;
    m.add_class::<PyDigest>()?;
    m.add_class::<PyStreamCompressor>()?;
    m.add_class::<PyZipEntry>()?;
    m.add_class::<PyZipEnd>()?;
    m.add_class::<PyZipWriter>()?;
    m.add("ZIP_TAIL_LEN", read::TAIL_LEN)?;
    m.add("ZSTD_BINARY_LEVEL", data::DEFAULT_ZSTD_BINARY_LEVEL)?;
    m.add(
        "ZIP_LOCAL_CRC_AT",
        amber_core::archive::zip::write::LOCAL_CRC_AT,
    )?;
    Ok(())
}
