//! The datetime family, both halves: `date`, `time`, `datetime`,
//! `timedelta`, and the tzinfos amber keeps exactly (`timezone.utc`, fixed
//! `timezone`s with their names, `ZoneInfo` by key). The fields are read
//! and the objects made in `values::datetime`.

use amber_core::codec::build::DateTimeParts;
use amber_core::codec::writer as w;
use pyo3::prelude::*;

use crate::codec::decode::PyBuilder;
use crate::codec::encode::{fail, Encoder, OrFail, R};
use crate::errors::{self, DecodeKind, EncodeKind};
use crate::ffi::borrowed::Borrowed;
use crate::ffi::datetime as fields;
use crate::ffi::obj::Obj;
use crate::values::datetime::{self as dt, Date, Delta, Time};

impl<'py> Encoder<'py> {
    /// A `datetime.date`.
    pub(crate) fn date(&mut self, o: Borrowed<'_>) -> R {
        let Some(d) = fields::date(o) else {
            return fail(EncodeKind::Unsupported, "not a date");
        };
        w::write_date(&mut self.out, d.year, d.month, d.day);
        Ok(())
    }

    /// A `datetime.datetime`, then its tzinfo.
    pub(crate) fn datetime(&mut self, o: Borrowed<'_>) -> R {
        let Some((d, t, tz)) = fields::datetime(o) else {
            return fail(EncodeKind::Unsupported, "not a datetime");
        };
        w::write_datetime(
            &mut self.out,
            d.year,
            d.month,
            d.day,
            t.hour,
            t.minute,
            t.second,
            t.microsecond,
            t.fold,
            tz.is_some(),
        );
        self.tzinfo(tz)
    }

    /// A `datetime.time`, then its tzinfo.
    pub(crate) fn time(&mut self, o: Borrowed<'_>) -> R {
        let Some((t, tz)) = fields::time(o) else {
            return fail(EncodeKind::Unsupported, "not a time");
        };
        w::write_time(
            &mut self.out,
            t.hour,
            t.minute,
            t.second,
            t.microsecond,
            t.fold,
            tz.is_some(),
        );
        self.tzinfo(tz)
    }

    /// The tzinfo after a time or datetime, if it has one.
    fn tzinfo(&mut self, tz: Option<Borrowed<'_>>) -> R {
        match tz {
            Some(tz) => self.item(tz),
            None => Ok(()),
        }
    }

    /// A `datetime.timedelta`.
    pub(crate) fn timedelta(&mut self, o: Borrowed<'_>) -> R {
        let Some(d) = fields::delta(o) else {
            return fail(EncodeKind::Unsupported, "not a timedelta");
        };
        w::write_timedelta(&mut self.out, d.days, d.seconds, d.microseconds);
        Ok(())
    }

    /// A `datetime.timezone`: UTC, or a fixed offset with its name.
    pub(crate) fn timezone(&mut self, tz: &Bound<'py, PyAny>) -> R {
        if tz.is(dt::utc(self.py)) {
            w::write_tz_utc(&mut self.out);
            return Ok(());
        }
        let (us, name) = dt::fixed_offset(tz).or_fail()?;
        w::write_tz_fixed(&mut self.out, us);
        self.nested(|e| match name {
            Some(name) => e.item((&name).into()),
            None => {
                w::write_none(&mut e.out);
                Ok(())
            }
        })
    }

    /// A `zoneinfo.ZoneInfo`, by its key.
    pub(crate) fn zoneinfo(&mut self, zone: &Bound<'py, PyAny>) -> R {
        let key = dt::zone_key(zone).or_fail()?;
        if key.is_none() {
            return fail(
                EncodeKind::Unsupported,
                "a ZoneInfo made from a file has no key and cannot be encoded",
            );
        }
        w::write_tz_zone_header(&mut self.out);
        self.nested(|e| e.item((&key).into()))
    }
}

impl<'py> PyBuilder<'py, '_> {
    #[inline(never)]
    pub(crate) fn date_(&mut self, year: u16, month: u8, day: u8) -> PyResult<Obj> {
        let d = dt::new_date(self.py, Date { year, month, day })?;
        Ok(self.obj(d))
    }

    /// The tzinfo of decoded parts, as a Bound.
    fn tz(&self, tz: &Option<Obj>) -> Option<Bound<'py, PyAny>> {
        tz.as_ref().map(|t| self.bound(t))
    }

    #[inline(never)]
    pub(crate) fn time_(&mut self, p: DateTimeParts<Obj>) -> PyResult<Obj> {
        let tz = self.tz(&p.tz);
        let t = dt::new_time(self.py, time_fields(&p), tz.as_ref())?;
        Ok(self.obj(t))
    }

    #[inline(never)]
    pub(crate) fn datetime_(&mut self, p: DateTimeParts<Obj>) -> PyResult<Obj> {
        let tz = self.tz(&p.tz);
        let d = Date {
            year: p.year,
            month: p.month,
            day: p.day,
        };
        let v = dt::new_datetime(self.py, d, time_fields(&p), tz.as_ref())?;
        Ok(self.obj(v))
    }

    #[inline(never)]
    pub(crate) fn timedelta_(&mut self, days: i32, seconds: i32, micros: i32) -> PyResult<Obj> {
        let d = Delta {
            days,
            seconds,
            microseconds: micros,
        };
        Ok(self.obj(dt::new_delta(self.py, d)?))
    }

    #[inline(never)]
    pub(crate) fn tz_utc_(&mut self) -> PyResult<Obj> {
        Ok(self.obj(dt::utc(self.py)))
    }

    #[inline(never)]
    pub(crate) fn tz_fixed_(&mut self, offset_us: i64, name: Obj) -> PyResult<Obj> {
        let tz = dt::new_fixed_timezone(self.py, offset_us, &self.bound(&name))?;
        Ok(self.obj(tz))
    }

    #[inline(never)]
    pub(crate) fn tz_zone_(&mut self, key: Obj) -> PyResult<Obj> {
        let key = self.bound(&key);
        match dt::new_zone(self.py, &key)? {
            Some(zone) => Ok(self.obj(zone)),
            None => {
                let shown: String = key.to_string().chars().take(80).collect();
                Err(errors::decode_fail(
                    self.py,
                    DecodeKind::Refused,
                    format!("unknown time zone key {shown:?}: no such zone in the zone database"),
                ))
            }
        }
    }
}

fn time_fields(p: &DateTimeParts<Obj>) -> Time {
    Time {
        hour: p.hour,
        minute: p.minute,
        second: p.second,
        microsecond: p.microsecond,
        fold: p.fold,
    }
}
