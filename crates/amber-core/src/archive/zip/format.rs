//! The format's vocabulary: signatures, fixed lengths, extra-field ids,
//! flags, the DOS time amber writes, compression methods, and a central
//! directory entry.

use crate::archive::error::{ArchiveError, ArchiveErrorKind, Res};

pub const LOCAL_SIG: u32 = 0x0403_4b50;
pub const CENTRAL_SIG: u32 = 0x0201_4b50;
pub const END_SIG: u32 = 0x0605_4b50;
pub const ZIP64_END_SIG: u32 = 0x0606_4b50;
pub const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;

pub const LOCAL_LEN: usize = 30;
pub const CENTRAL_LEN: usize = 46;
pub const END_LEN: usize = 22;
pub const ZIP64_LOCATOR_LEN: usize = 20;
pub const ZIP64_END_LEN: usize = 56;

/// Extra field IDs: ZIP64 sizes and offsets, and the alignment padding
/// Android's zipalign writes (ID, size, then the alignment as u16 and zero
/// bytes), which amber writes too.
pub const EXTRA_ZIP64: u16 = 0x0001;
pub const EXTRA_ALIGN: u16 = 0xD935;

/// General purpose flags: encrypted, sizes in a data descriptor, UTF-8 name.
pub const FLAG_ENCRYPTED: u16 = 0x0001;
pub const FLAG_DESCRIPTOR: u16 = 0x0008;
pub const FLAG_UTF8: u16 = 0x0800;

/// 1980-01-01 00:00:00 in MS-DOS form: every entry's time, so that equal
/// content makes equal files.
pub const DOS_TIME: u16 = 0;
pub const DOS_DATE: u16 = (1 << 5) | 1;

/// Values that say "see the ZIP64 record".
pub const U16_MAX: u16 = 0xFFFF;
pub const U32_MAX: u32 = 0xFFFF_FFFF;

/// A compression method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Stored,
    Deflate,
    /// Zstandard, method 93 (APPNOTE 4.4.5; Python 3.14's `ZIP_ZSTANDARD`).
    Zstd,
}

impl Method {
    pub fn code(self) -> u16 {
        match self {
            Method::Stored => 0,
            Method::Deflate => 8,
            Method::Zstd => 93,
        }
    }

    pub fn from_code(code: u16) -> Option<Method> {
        match code {
            0 => Some(Method::Stored),
            8 => Some(Method::Deflate),
            93 => Some(Method::Zstd),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Method::Stored => "stored",
            Method::Deflate => "deflate",
            Method::Zstd => "zstd",
        }
    }

    pub fn from_name(name: &str) -> Res<Method> {
        match name {
            "stored" => Ok(Method::Stored),
            "deflate" => Ok(Method::Deflate),
            "zstd" => Ok(Method::Zstd),
            _ => Err(ArchiveError::new(
                ArchiveErrorKind::Unsupported,
                format!("unknown compression {name:?}: use stored, deflate or zstd"),
            )),
        }
    }

    /// The "version needed to extract" an entry of this method (4.4.3).
    pub fn version_needed(self, zip64: bool) -> u16 {
        match (self, zip64) {
            (Method::Zstd, _) => 63,
            (_, true) => 45,
            _ => 20,
        }
    }
}

/// One entry of the central directory, as read or as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CentralEntry {
    pub name: String,
    /// The method's code (methods amber cannot read are listed, not read).
    pub method: u16,
    pub flags: u16,
    pub crc32: u32,
    pub compressed_size: u64,
    pub size: u64,
    pub header_offset: u64,
}

impl CentralEntry {
    /// The method, or `Unsupported` naming the entry.
    pub fn method(&self) -> Res<Method> {
        Method::from_code(self.method).ok_or_else(|| {
            ArchiveError::new(
                ArchiveErrorKind::Unsupported,
                format!("compression method {} is not one amber reads", self.method),
            )
            .entry(&self.name)
        })
    }
}
