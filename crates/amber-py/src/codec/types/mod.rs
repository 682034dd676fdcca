//! The codec's type families outside the hot set, each in one file with
//! both halves: how the encoder writes it and how the decoder's builder
//! makes it.
//!
//! - `collections.rs`: set, frozenset, OrderedDict, Counter, defaultdict, deque;
//! - `datetime.rs`: date, time, datetime, timedelta, timezone, ZoneInfo;
//! - `numbers.rs`: complex, Decimal, Fraction, UUID;
//! - `registered.rs` (with `state.rs`): registered classes;
//! - `numpy.rs` (with `dtype.rs`): NumPy arrays and scalars;
//! - `tables.rs`: pandas, polars and pyarrow tables as Arrow IPC streams.
//!
//! Below, the encoder's dispatch for them: exact type pointers for the
//! builtins, then the registry's per-type classification. The builder
//! halves are `#[inline(never)]`: kept out of the decoder's hot match, they
//! leave it as small as the hot types need (about 1.5% fewer instructions
//! decoding records of hot types).

mod collections;
mod datetime;
pub mod dtype;
mod numbers;
mod numpy;
mod registered;
mod state;
mod tables;

use pyo3::ffi;
use pyo3::prelude::*;

use crate::codec::encode::{fail, Encoder, OrFail, R};
use crate::codec::registry::{self, Entry, Kind};
use crate::errors::EncodeKind;
use crate::ffi::borrowed::Borrowed;
use crate::typeref::datetime_api;

impl<'py> Encoder<'py> {
    /// Types outside the hot set; `o` is held for the call.
    pub(crate) fn other(&mut self, o: Borrowed<'_>) -> R {
        self.others = self.others.wrapping_add(1);
        let t = o.ob_type();
        if t == &raw mut ffi::PyBytes_Type || t == &raw mut ffi::PyByteArray_Type {
            return self.shared_leaf(o, |e| e.bytes_like(o));
        }
        if t == &raw mut ffi::PySet_Type || t == &raw mut ffi::PyFrozenSet_Type {
            return self.set(o);
        }
        let api = datetime_api();
        if t == &raw mut ffi::PyComplex_Type {
            return self.complex(o);
        }
        if t == api.DateTimeType {
            return self.nested(|e| e.datetime(o));
        }
        if t == api.DateType {
            return self.date(o);
        }
        let py = self.py;
        let (kind, extra) = registry::classify(py, t).or_fail()?;
        let obj = o.to_bound(py);
        match kind {
            Kind::Time => self.nested(|e| e.time(o)),
            Kind::TimeDelta => self.timedelta(o),
            Kind::TimeZone => self.timezone(&obj),
            Kind::ZoneInfo => self.zoneinfo(&obj),
            Kind::Decimal => self.decimal(&obj),
            Kind::Uuid => self.uuid(&obj),
            Kind::Fraction => self.fraction(&obj),
            Kind::OrderedDict => self.ordered_dict(o),
            Kind::Counter => self.counter(o),
            Kind::DefaultDict => self.defaultdict(o),
            Kind::Deque => self.deque(o),
            // Arrays hold no Python objects: registered once written.
            Kind::NdArray => self.shared_leaf(o, |e| e.nested(|e| e.ndarray(&obj))),
            Kind::NpScalar => self.nested(|e| e.npscalar(&obj)),
            // As arrays: registered once written.
            Kind::Table => {
                let kind: u8 = extra.extract().or_fail()?;
                self.shared_leaf(o, |e| e.nested(|e| e.table(&obj, kind)))
            }
            Kind::Registered => match extra.cast::<Entry>() {
                Ok(entry) => self.registered(o, entry),
                Err(_) => fail(
                    EncodeKind::Unsupported,
                    "the registry classified a type without its entry",
                ),
            },
            // Dates and datetimes are matched above; subclasses of them
            // and everything else are unsupported, with the registry's
            // reason.
            Kind::Date | Kind::DateTime | Kind::Unsupported => {
                let msg: String = extra
                    .extract()
                    .unwrap_or_else(|_| "unsupported type".into());
                fail(EncodeKind::Unsupported, msg)
            }
        }
    }
}
