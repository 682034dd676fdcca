//! The generic decoder: walks a frame and asks a [`Build`] implementation to
//! make each value. All format rules live here (tags, lengths, the string
//! table, shared references, limits); builders only construct values.
//!
//! This file holds the entry point and the walker's state. `dispatch.rs`
//! reads one item: `Walker::item_inner` is a table of short arms, one per
//! family of tags, each calling that family's method (in `atoms.rs`,
//! `containers.rs` and `values.rs`).
//!
//! Guarantees for any input: no panic, time linear in the input (see the
//! spec's §10.1), and no allocation sized by a header before the bytes it
//! describes are present (counts are checked against what is left; see
//! [`Reader::count`]).

use crate::bytes::path::PathSeg;
use crate::bytes::reader::Reader;
use crate::codec::build::{ArrowTable, Build, DateTimeParts, DictKind, NdArray, NdData, SeqKind};
use crate::codec::error::{DecodeError, Res};
use crate::codec::format::{self as f, Lead};
use crate::codec::header::parse_header;

/// Limits a decoder enforces.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Containers nested deeper than this are rejected.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

/// The default nesting limit, shared with the encoder.
pub const DEFAULT_MAX_DEPTH: usize = 1000;

/// Decode a frame that must fill `data` exactly.
pub fn decode<B: Build>(data: &[u8], builder: &mut B, limits: Limits) -> Res<B::V, B::Err> {
    crate::bytes::stack::enter(
        || decode_here(data, builder, limits),
        || DecodeError::out_of_memory(0, "out of memory for the decoder's stack"),
    )
}

fn decode_here<B: Build>(data: &[u8], builder: &mut B, limits: Limits) -> Res<B::V, B::Err> {
    let header = parse_header(data)?;
    // parse_header refuses lengths whose sum would overflow.
    let frame_len = header.frame_len().unwrap_or(u64::MAX);
    if (data.len() as u64) < frame_len {
        return Err(DecodeError::truncated(
            data.len(),
            format!(
                "truncated frame: header says {frame_len} bytes, got {}",
                data.len()
            ),
        ));
    }
    if (data.len() as u64) > frame_len {
        return Err(DecodeError::malformed(
            frame_len as usize,
            format!(
                "{} bytes after the end of the frame",
                data.len() as u64 - frame_len
            ),
        ));
    }
    let mut w = Walker {
        r: Reader::new(data),
        b: builder,
        strings: Vec::new(),
        shapes: Vec::new(),
        shape_keys: Vec::new(),
        memo: Vec::new(),
        depth: 0,
        limits,
    };
    w.r.take(header.header_len, "header")?;
    let v = w.item()?;
    if !w.r.is_empty() {
        return Err(DecodeError::malformed(
            w.r.pos(),
            format!("{} bytes left in the body after its item", w.r.remaining()),
        ));
    }
    Ok(v)
}

struct Walker<'a, 'b, B: Build> {
    r: Reader<'a>,
    b: &'b mut B,
    /// Strings defined by STR_DEF, for STR_REF and FIXREF.
    strings: Vec<B::V>,
    /// Shapes defined by SHAPE_DEF, for SHAPED: where each one's keys are in
    /// `shape_keys`, and how many.
    shapes: Vec<(usize, usize)>,
    shape_keys: Vec<B::V>,
    /// Objects registered by SHARE, for MEMO_REF and REPLACE.
    memo: Vec<B::V>,
    depth: usize,
    limits: Limits,
}

/// A builder call at item offset `at`, its error wrapped with the offset.
macro_rules! build {
    ($self:ident, $at:expr, $call:expr) => {
        $call.map_err(|e| DecodeError::build($at, e))
    };
}

mod atoms;
mod containers;
mod dispatch;
mod values;
