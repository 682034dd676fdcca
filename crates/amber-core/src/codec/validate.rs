//! Structural validation without building values: a [`Build`] whose values
//! are `()`. It checks everything the format itself defines (tags, lengths,
//! UTF-8, table and shared references, limits) and nothing that needs
//! Python (hashability, registered classes, date ranges).

use std::convert::Infallible;

use crate::codec::build::{ArrowTable, Build, DateTimeParts, DictKind, NdArray, SeqKind};
use crate::codec::error::DecodeError;
use crate::codec::walker::{self, Limits};

/// Counts of what a frame holds.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stats {
    pub items: u64,
    pub strings: u64,
    pub containers: u64,
}

impl Build for Stats {
    type V = ();
    type Err = Infallible;
    type Class = ();

    fn none(&mut self) -> Result<(), Infallible> {
        self.items += 1;
        Ok(())
    }
    fn bool(&mut self, _: bool) -> Result<(), Infallible> {
        self.none()
    }
    fn int(&mut self, _: i64) -> Result<(), Infallible> {
        self.none()
    }
    fn bigint(&mut self, _: &[u8]) -> Result<(), Infallible> {
        self.none()
    }
    fn float(&mut self, _: f64) -> Result<(), Infallible> {
        self.none()
    }
    fn complex(&mut self, _: f64, _: f64) -> Result<(), Infallible> {
        self.none()
    }
    fn str(&mut self, _: &str, _: bool) -> Result<(), Infallible> {
        self.strings += 1;
        self.none()
    }
    fn str_surrogates(&mut self, _: &[u8]) -> Result<(), Infallible> {
        self.str("", false)
    }
    fn bytes(&mut self, _: &[u8], _: usize, _: bool) -> Result<(), Infallible> {
        self.none()
    }
    fn bytes_oob(&mut self, _: usize, _: bool) -> Result<(), Infallible> {
        self.none()
    }
    fn seq_begin(&mut self, _: SeqKind, _: usize) -> Result<(), Infallible> {
        self.containers += 1;
        self.none()
    }
    fn seq_item(&mut self, _: &(), _: SeqKind, _: usize, _: ()) -> Result<(), Infallible> {
        Ok(())
    }
    fn seq_end(&mut self, _: (), _: SeqKind) -> Result<(), Infallible> {
        Ok(())
    }
    fn deque_begin(&mut self, _: ()) -> Result<(), Infallible> {
        self.seq_begin(SeqKind::Deque, 0)
    }
    fn dict_begin(&mut self, _: DictKind, _: usize) -> Result<(), Infallible> {
        self.seq_begin(SeqKind::List, 0)
    }
    fn dict_item(&mut self, _: &(), _: (), _: ()) -> Result<(), Infallible> {
        Ok(())
    }
    fn date(&mut self, _: u16, _: u8, _: u8) -> Result<(), Infallible> {
        self.none()
    }
    fn time(&mut self, _: DateTimeParts<()>) -> Result<(), Infallible> {
        self.none()
    }
    fn datetime(&mut self, _: DateTimeParts<()>) -> Result<(), Infallible> {
        self.none()
    }
    fn timedelta(&mut self, _: i32, _: i32, _: i32) -> Result<(), Infallible> {
        self.none()
    }
    fn tz_utc(&mut self) -> Result<(), Infallible> {
        self.none()
    }
    fn tz_fixed(&mut self, _: i64, _: ()) -> Result<(), Infallible> {
        self.none()
    }
    fn tz_zone(&mut self, _: ()) -> Result<(), Infallible> {
        self.none()
    }
    fn decimal(&mut self, _: &str) -> Result<(), Infallible> {
        self.none()
    }
    fn uuid(&mut self, _: [u8; 16], _: u8) -> Result<(), Infallible> {
        self.none()
    }
    fn fraction(&mut self, _: (), _: ()) -> Result<(), Infallible> {
        self.none()
    }
    fn class(&mut self, _: &()) -> Result<(), Infallible> {
        Ok(())
    }
    fn enum_member(&mut self, _: &(), _: ()) -> Result<(), Infallible> {
        self.none()
    }
    fn object_new(&mut self, _: &()) -> Result<(), Infallible> {
        self.none()
    }
    fn object_fill(&mut self, _: &(), _: &(), _: ()) -> Result<(), Infallible> {
        Ok(())
    }
    fn object_build(&mut self, _: &(), _: ()) -> Result<(), Infallible> {
        self.none()
    }
    fn object_base(&mut self, _: &(), _: ()) -> Result<(), Infallible> {
        self.none()
    }
    fn object_setstate(&mut self, _: &(), _: &(), _: ()) -> Result<(), Infallible> {
        Ok(())
    }
    fn ndarray(&mut self, _: NdArray<'_, ()>) -> Result<(), Infallible> {
        self.none()
    }
    fn ndarray_items(&mut self, _: (), _: Vec<u64>, _: bool, _: ()) -> Result<(), Infallible> {
        self.none()
    }
    fn npscalar(&mut self, _: (), _: &[u8]) -> Result<(), Infallible> {
        self.none()
    }
    fn arrow(&mut self, _: ArrowTable<'_, ()>) -> Result<(), Infallible> {
        self.none()
    }
    fn key_str(&self, _: &()) -> Option<String> {
        None
    }
}

/// Check that `data` is exactly one well-formed frame.
pub fn validate(data: &[u8], limits: Limits) -> Result<Stats, DecodeError<Infallible>> {
    let mut stats = Stats::default();
    walker::decode(data, &mut stats, limits)?;
    Ok(stats)
}
