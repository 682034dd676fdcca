//! An entry's bytes: compression (deflate, zstd, byte shuffling), hashes
//! (BLAKE3, CRC-32) in one pass or streamed, and the Arrow IPC check.

use amber_core::archive::data;
use amber_core::archive::zip::Method;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::bytes::{fail, new_bytes, with_bytes};
use crate::ffi::buffer::InputBuffer;

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

pub(super) fn finished(_py: Python<'_>) -> PyErr {
    pyo3::exceptions::PyValueError::new_err("the compressor has finished")
}

/// The CRC-32 of `data` (any buffer), for entries that have no BLAKE3 hash.
#[pyfunction]
pub fn archive_crc32(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<u32> {
    crate::errors::guard(|| with_bytes(py, data, data::crc32))
}

/// Check an Arrow IPC file before it is read: no compressed bodies (whose
/// declared lengths a reader allocates), every field name UTF-8.
#[pyfunction]
pub fn arrow_check_file(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
    crate::errors::guard(|| {
        with_bytes(py, data, amber_core::archive::arrow::check_ipc_file)?.map_err(fail(py))
    })
}
