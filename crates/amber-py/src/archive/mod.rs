//! The archive part's edge: amber-core's zip writer and reader, compression,
//! hashes and `.npy` headers, for `amber.archive` (which does the file and
//! network I/O). Long work on read-only buffers runs without the GIL.
//!
//! The rooms:
//! - `zip`: the central directory and end record read and checked, local
//!   headers, and `ZipWriter`;
//! - `data`: compression, byte shuffling, BLAKE3 and CRC-32, one-shot or
//!   streamed, and the check of an Arrow IPC file;
//! - `npy`: `.npy` headers;
//! - `bytes`: reading the buffers Python passes, with or without the GIL.

mod bytes;
mod data;
mod npy;
mod zip;

use amber_core::archive::zip::read;
use pyo3::prelude::*;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(data::archive_compress, m)?)?;
    m.add_function(wrap_pyfunction!(data::archive_decompress, m)?)?;
    m.add_function(wrap_pyfunction!(data::archive_digest, m)?)?;
    m.add_function(wrap_pyfunction!(data::archive_blake3, m)?)?;
    m.add_function(wrap_pyfunction!(zip::zip_find_end, m)?)?;
    m.add_function(wrap_pyfunction!(zip::zip_find_end_from, m)?)?;
    m.add_function(wrap_pyfunction!(zip::zip_parse_central, m)?)?;
    m.add_function(wrap_pyfunction!(zip::zip_local_need, m)?)?;
    m.add_function(wrap_pyfunction!(zip::zip_data_offset, m)?)?;
    m.add_function(wrap_pyfunction!(data::archive_crc32, m)?)?;
    m.add_function(wrap_pyfunction!(data::arrow_check_file, m)?)?;
    m.add_function(wrap_pyfunction!(npy::npy_header, m)?)?;
    m.add_function(wrap_pyfunction!(npy::npy_parse_header, m)?)?;
    m.add_class::<data::PyDigest>()?;
    m.add_class::<data::PyStreamCompressor>()?;
    m.add_class::<zip::PyZipEntry>()?;
    m.add_class::<zip::PyZipEnd>()?;
    m.add_class::<zip::PyZipWriter>()?;
    m.add("ZIP_TAIL_LEN", read::TAIL_LEN)?;
    m.add(
        "ZSTD_BINARY_LEVEL",
        amber_core::archive::data::DEFAULT_ZSTD_BINARY_LEVEL,
    )?;
    m.add(
        "ZIP_LOCAL_CRC_AT",
        amber_core::archive::zip::write::LOCAL_CRC_AT,
    )?;
    Ok(())
}
