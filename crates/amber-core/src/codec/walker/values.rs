//! Stdlib and registered values: dates and times, time zones, Decimal,
//! UUID, Fraction, Enum members and registered objects, NumPy arrays and
//! scalars.

use super::{ArrowTable, Build, DateTimeParts, DecodeError, NdArray, NdData, Res, Walker};
use crate::codec::format as f;

impl<'a, B: Build> Walker<'a, '_, B> {
    /// DATE, TIME, DATETIME and TIMEDELTA after the tag.
    pub(super) fn time(&mut self, t: u8, at: usize) -> Res<B::V, B::Err> {
        match t {
            f::DATE => {
                let year = u16::from_le_bytes(self.r.array("date")?);
                let month = self.r.u8("date")?;
                let day = self.r.u8("date")?;
                build!(self, at, self.b.date(year, month, day))
            }
            f::TIME => self.nested(at, |w| {
                let flags = w.dt_flags(at)?;
                let parts = w.time_parts(flags, 0, 1, 1)?;
                build!(w, at, w.b.time(parts))
            }),
            f::DATETIME => self.nested(at, |w| {
                let flags = w.dt_flags(at)?;
                let year = u16::from_le_bytes(w.r.array("datetime")?);
                let month = w.r.u8("datetime")?;
                let day = w.r.u8("datetime")?;
                let parts = w.time_parts(flags, year, month, day)?;
                build!(w, at, w.b.datetime(parts))
            }),
            _ => {
                let d = i32::from_le_bytes(self.r.array("timedelta")?);
                let s = i32::from_le_bytes(self.r.array("timedelta")?);
                let us = i32::from_le_bytes(self.r.array("timedelta")?);
                build!(self, at, self.b.timedelta(d, s, us))
            }
        }
    }

    /// TZ_UTC, TZ_FIXED and TZ_ZONE after the tag.
    pub(super) fn tzinfo(&mut self, t: u8, at: usize) -> Res<B::V, B::Err> {
        match t {
            f::TZ_UTC => build!(self, at, self.b.tz_utc()),
            f::TZ_FIXED => self.nested(at, |w| {
                let off = i64::from_le_bytes(w.r.array("tz offset")?);
                let name = w.item()?;
                build!(w, at, w.b.tz_fixed(off, name))
            }),
            _ => self.nested(at, |w| {
                let key = w.item()?;
                build!(w, at, w.b.tz_zone(key))
            }),
        }
    }

    /// DECIMAL, UUID and FRACTION after the tag.
    pub(super) fn number(&mut self, t: u8, at: usize) -> Res<B::V, B::Err> {
        match t {
            f::DECIMAL => {
                let n = self.r.count("decimal length", 1)?;
                let raw = self.r.take(n, "decimal")?;
                if !raw.is_ascii() {
                    return Err(DecodeError::malformed(at, "Decimal text is not ASCII"));
                }
                // ASCII is valid UTF-8.
                let s = std::str::from_utf8(raw).unwrap_or_default();
                build!(self, at, self.b.decimal(s))
            }
            f::UUID => {
                let raw = self.r.array::<16>("UUID")?;
                let safe_at = self.r.pos();
                let safe = self.r.u8("UUID")?;
                if safe >= f::UUID_SAFETY_CODES {
                    return Err(DecodeError::reserved(
                        safe_at,
                        format_args!("UUID safety code {safe}"),
                    ));
                }
                build!(self, at, self.b.uuid(raw, safe))
            }
            _ => self.nested(at, |w| {
                let num = w.fraction_part()?;
                let den = w.fraction_part()?;
                build!(w, at, w.b.fraction(num, den))
            }),
        }
    }

    /// ENUM, OBJECT, OBJECT_FILL and OBJECT_STATE after the tag; `true` when
    /// the object was registered in the memo before its state (OBJECT_FILL
    /// or OBJECT_STATE, shared).
    pub(super) fn registered(
        &mut self,
        t: u8,
        shared: bool,
        at: usize,
    ) -> Res<(B::V, bool), B::Err> {
        if t == f::ENUM {
            let v = self.nested(at, |w| {
                let name = w.item()?;
                let class = build!(w, at, w.b.class(&name))?;
                let value = w.item()?;
                build!(w, at, w.b.enum_member(&class, value))
            })?;
            return Ok((v, false));
        }
        if t == f::OBJECT_STATE {
            let v = self.nested(at, |w| w.object_state(at, shared))?;
            return Ok((v, shared));
        }
        let fill = t == f::OBJECT_FILL;
        let v = self.nested(at, |w| w.object(at, fill, shared))?;
        Ok((v, fill && shared))
    }

    /// NDARRAY and NPSCALAR after the tag.
    pub(super) fn numpy(&mut self, t: u8, at: usize) -> Res<B::V, B::Err> {
        if t == f::NDARRAY {
            return self.nested(at, |w| w.ndarray(at));
        }
        self.nested(at, |w| {
            let dtype = w.item()?;
            let n = w.r.count("scalar length", 1)?;
            let raw = w.r.take(n, "scalar")?;
            build!(w, at, w.b.npscalar(dtype, raw))
        })
    }

    /// One part of a FRACTION: an item of at most `FRACTION_PART_MAX_ITEM`
    /// bytes, so that normalising the Fraction takes bounded time.
    fn fraction_part(&mut self) -> Res<B::V, B::Err> {
        let at = self.r.pos();
        let part = self.item()?;
        if self.r.pos() - at > f::FRACTION_PART_MAX_ITEM {
            return Err(DecodeError::limit(
                at,
                format!(
                    "Fraction part longer than {} bytes",
                    f::FRACTION_PART_MAX_BYTES
                ),
            ));
        }
        Ok(part)
    }

    /// OBJECT or OBJECT_FILL after the tag. OBJECT_FILL objects are made
    /// first (and registered before their state when shared); OBJECT ones
    /// are built from their state. The tag decides, so memo numbering never
    /// depends on what the registry says.
    fn object(&mut self, at: usize, fill: bool, shared: bool) -> Res<B::V, B::Err> {
        let name = self.item()?;
        let class = build!(self, at, self.b.class(&name))?;
        if fill {
            let obj = build!(self, at, self.b.object_new(&class))?;
            if shared {
                self.memo.push(obj.clone());
            }
            let state = self.item()?;
            build!(self, at, self.b.object_fill(&class, &obj, state))?;
            Ok(obj)
        } else {
            let state = self.item()?;
            build!(self, at, self.b.object_build(&class, state))
        }
    }

    /// OBJECT_STATE after the tag: the class, the base the instance is made
    /// from, then (the instance registered when shared) its state.
    fn object_state(&mut self, at: usize, shared: bool) -> Res<B::V, B::Err> {
        let name = self.item()?;
        let class = build!(self, at, self.b.class(&name))?;
        let base = self.item()?;
        let obj = build!(self, at, self.b.object_base(&class, base))?;
        if shared {
            self.memo.push(obj.clone());
        }
        let state = self.item()?;
        build!(self, at, self.b.object_setstate(&class, &obj, state))?;
        Ok(obj)
    }

    fn dt_flags(&mut self, at: usize) -> Res<u8, B::Err> {
        let flags = self.r.u8("flags")?;
        if flags & !(f::DT_FOLD | f::DT_TZ) != 0 {
            return Err(DecodeError::reserved(
                at + 1,
                format_args!("time flags 0x{flags:02x}"),
            ));
        }
        Ok(flags)
    }

    fn time_parts(
        &mut self,
        flags: u8,
        year: u16,
        month: u8,
        day: u8,
    ) -> Res<DateTimeParts<B::V>, B::Err> {
        let hour = self.r.u8("time")?;
        let minute = self.r.u8("time")?;
        let second = self.r.u8("time")?;
        let microsecond = u32::from_le_bytes(self.r.array("time")?);
        let tz = if flags & f::DT_TZ != 0 {
            Some(self.item()?)
        } else {
            None
        };
        Ok(DateTimeParts {
            year,
            month,
            day,
            hour,
            minute,
            second,
            microsecond,
            fold: flags & f::DT_FOLD != 0,
            tz,
        })
    }

    fn ndarray(&mut self, at: usize) -> Res<B::V, B::Err> {
        let dtype = self.item()?;
        let ndim_at = self.r.pos();
        let ndim = self.r.u8("ndarray ndim")? as usize;
        if ndim > 64 {
            return Err(DecodeError::malformed(
                ndim_at,
                format!("ndarray with {ndim} dimensions (at most 64)"),
            ));
        }
        let mut shape = Vec::with_capacity(ndim);
        for _ in 0..ndim {
            shape.push(self.r.varint("ndarray dimension")?);
        }
        let flags_at = self.r.pos();
        let flags = self.r.u8("ndarray flags")?;
        if flags & !(f::ND_FORTRAN | f::ND_OOB | f::ND_ITEMS) != 0 {
            return Err(DecodeError::reserved(
                flags_at,
                format_args!("ndarray flags 0x{flags:02x}"),
            ));
        }
        if flags & f::ND_ITEMS != 0 {
            if flags & f::ND_OOB != 0 {
                return Err(DecodeError::malformed(
                    flags_at,
                    format!("ndarray flags 0x{flags:02x}: items are never out of band"),
                ));
            }
            let fortran = flags & f::ND_FORTRAN != 0;
            let items = self.item()?;
            return build!(self, at, self.b.ndarray_items(dtype, shape, fortran, items));
        }
        let data = self.data_part(flags & f::ND_OOB != 0, "ndarray")?;
        let arr = NdArray {
            dtype,
            shape,
            fortran: flags & f::ND_FORTRAN != 0,
            data,
        };
        build!(self, at, self.b.ndarray(arr))
    }

    /// ARROW after the tag: kind, extras, flags, data part.
    pub(super) fn arrow(&mut self, at: usize) -> Res<B::V, B::Err> {
        let kind_at = self.r.pos();
        let kind = self.r.u8("table kind")?;
        if kind >= f::ARROW_KINDS {
            return Err(DecodeError::reserved(
                kind_at,
                format_args!("table kind {kind}"),
            ));
        }
        let extras = self.item()?;
        let flags_at = self.r.pos();
        let flags = self.r.u8("table flags")?;
        let pandas = kind == f::ARROW_PD_FRAME || kind == f::ARROW_PD_SERIES;
        let known = f::ND_OOB | if pandas { f::ARROW_DESCRIBED } else { 0 };
        if flags & !known != 0 {
            return Err(DecodeError::reserved(
                flags_at,
                format_args!("table flags 0x{flags:02x}"),
            ));
        }
        let data = self.data_part(flags & f::ND_OOB != 0, "table")?;
        let table = ArrowTable { kind, extras, data };
        build!(self, at, self.b.arrow(table))
    }

    /// The data part of NDARRAY and ARROW: a buffer index, or the byte
    /// length, padding and bytes.
    fn data_part(&mut self, oob: bool, what: &'static str) -> Res<NdData<'a>, B::Err> {
        if oob {
            return Ok(NdData::OutOfBand {
                index: self.index("buffer index")?,
            });
        }
        let n = self.r.count("data length", 1)?;
        self.padding(f::ND_ALIGN, what)?;
        let offset = self.r.pos();
        Ok(NdData::Inline {
            bytes: self.r.take(n, what)?,
            offset,
        })
    }
}
