//! [`MessageSource`], what the encoders (wire, text format, ProtoJSON)
//! read messages through, and [`SrcValue`], a field's value it gives.

use crate::proto::runtime::scalar::Scalar;
use crate::proto::runtime::schema::{FieldInfo, Kind};

/// A value the source gives for a field.
pub enum SrcValue<'m, M> {
    /// A scalar or enum.
    Scalar(Scalar<'m>),
    /// A message.
    Message(M),
}

/// Gives the encoder a message's fields. `Msg` is a cheap handle (a
/// reference) valid for `'m`.
pub trait MessageSource<'m> {
    /// A handle to a message.
    type Msg: Copy;
    /// The source's error.
    type Err;
    /// What [`entries`](MessageSource::entries) gives ([`NoEntries`] for
    /// a source that gives none).
    type Entries: EntryParts<'m>;
    /// What [`texts`](MessageSource::texts) gives ([`NoTexts`] for a
    /// source that gives none).
    type Texts: TextParts<'m>;
    /// What [`messages`](MessageSource::messages) gives ([`NoSubs`] for
    /// a source that gives none).
    type Subs: SubParts<Self::Msg>;
    /// How many values field `f` has: 0 or 1 for a singular field (1 means
    /// present; a field without presence at its zero value is skipped by
    /// the encoder), the length of a repeated field, a map's entry count.
    fn count(&self, m: Self::Msg, f: &FieldInfo) -> Result<usize, Self::Err>;
    /// Value `i` of a singular (`i` = 0) or repeated field.
    fn get(
        &self,
        m: Self::Msg,
        f: &FieldInfo,
        i: usize,
    ) -> Result<SrcValue<'m, Self::Msg>, Self::Err>;
    /// The value of singular field `f`, or `None` when it is not set (a
    /// field without presence at its zero value may be given; readers skip
    /// it). The default asks [`count`](MessageSource::count), then
    /// [`get`](MessageSource::get); a source may find the value once.
    #[inline]
    fn singular(
        &self,
        m: Self::Msg,
        f: &FieldInfo,
    ) -> Result<Option<SrcValue<'m, Self::Msg>>, Self::Err> {
        if self.count(m, f)? == 0 {
            return Ok(None);
        }
        self.get(m, f, 0).map(Some)
    }
    /// Entry `i` of a map field: key and value.
    #[allow(clippy::type_complexity)]
    fn entry(
        &self,
        m: Self::Msg,
        f: &FieldInfo,
        i: usize,
    ) -> Result<(Scalar<'m>, SrcValue<'m, Self::Msg>), Self::Err>;
    /// The message's unknown fields, as stored (tags included).
    fn unknown(&self, m: Self::Msg) -> Result<&'m [u8], Self::Err>;
    /// The values of repeated field `f` (of a [packable](super::Kind::packable)
    /// kind) when the source keeps them as Rust numbers, each as
    /// [`Scalar::bits`] gives for its kind: the encoder then reads the slice
    /// instead of calling [`get`](MessageSource::get) for every value.
    /// `None` (the default): read them with `get`.
    fn numbers(&self, _m: Self::Msg, _f: &FieldInfo) -> Result<Option<&'m [u64]>, Self::Err> {
        Ok(None)
    }
    /// The value of singular field `f` (of a packable kind) when the source
    /// keeps it as a Rust number, as [`Scalar::bits`] gives it: the
    /// encoder then writes it from the bits. `None` (the default, and for
    /// an unset field): read it with [`singular`](MessageSource::singular).
    fn number(&self, _m: Self::Msg, _f: &FieldInfo) -> Result<Option<u64>, Self::Err> {
        Ok(None)
    }
    /// The bytes of value `i` of string or bytes field `f` (`i` = 0 for
    /// a singular field; a string's UTF-8) when the source has them at
    /// hand: the encoder then copies them. `None` (the default, and for an
    /// unset field): read the value with [`singular`](MessageSource::singular)
    /// or [`get`](MessageSource::get).
    fn text(
        &self,
        _m: Self::Msg,
        _f: &FieldInfo,
        _i: usize,
    ) -> Result<Option<&'m [u8]>, Self::Err> {
        Ok(None)
    }
    /// The entries of map field `f` as the source keeps them, for the
    /// encoder to read each entry's key and value without asking the source
    /// again per entry: `None` (the default), or an entry the view does
    /// not have at hand: read it with [`entry`](MessageSource::entry).
    fn entries(&self, _m: Self::Msg, _f: &FieldInfo) -> Result<Option<Self::Entries>, Self::Err> {
        Ok(None)
    }
    /// The values of repeated string or bytes field `f` as the source keeps
    /// them, for the encoder to read each value's bytes without asking the
    /// source again per value: `None` (the default), or a value the view
    /// does not have at hand: read it with [`get`](MessageSource::get).
    fn texts(&self, _m: Self::Msg, _f: &FieldInfo) -> Result<Option<Self::Texts>, Self::Err> {
        Ok(None)
    }
    /// The messages of the repeated message field at position `pos` of
    /// `m`'s type (see [`FieldInfo::pos`](super::FieldInfo::pos)) when the
    /// source keeps them as handles at hand, for the encoder to read them
    /// without asking the source again per message: `None` (the default):
    /// read them with [`get`](MessageSource::get).
    #[inline(always)]
    fn messages(&self, _m: Self::Msg, _pos: usize) -> Result<Option<Self::Subs>, Self::Err> {
        Ok(None)
    }

    /// The value of the singular field at position `pos` of `m`'s type
    /// (see [`FieldInfo::pos`](super::FieldInfo::pos)), of kind `kind`
    /// (a [packable](super::Kind::packable) kind, a string or bytes), in
    /// one look: unset, its bits or bytes when the source keeps them so,
    /// or [`Held::Other`] (the default): read it through the field's
    /// [`FieldInfo`] then.
    #[inline(always)]
    fn held(&self, _m: Self::Msg, _pos: usize, _kind: Kind) -> Result<Held<'m>, Self::Err> {
        Ok(Held::Other)
    }
}

/// A singular field's value as [`MessageSource::held`] finds it.
#[derive(Clone, Copy)]
pub enum Held<'m> {
    /// Not set (a field without presence: its zero value).
    Unset,
    /// A value of a packable kind, as [`Scalar::bits`] gives it.
    Bits(u64),
    /// A string's UTF-8 or the bytes of a bytes value.
    Text(&'m [u8]),
    /// Something else: ask through the field's [`FieldInfo`].
    Other,
}

/// A repeated string or bytes field's values as a source keeps them (see
/// [`MessageSource::texts`]).
pub trait TextParts<'m> {
    /// Value `i`'s bytes (a string's UTF-8) when at hand; `None` otherwise,
    /// and the encoder then reads it with [`MessageSource::get`].
    fn text(&self, i: usize) -> Option<&'m [u8]>;

    /// How many values the field has.
    fn len(&self) -> usize;

    /// Whether the field has no values.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A source that has no [`TextParts`] to give.
pub enum NoTexts {}

impl<'m> TextParts<'m> for NoTexts {
    fn text(&self, _i: usize) -> Option<&'m [u8]> {
        match *self {}
    }

    fn len(&self) -> usize {
        match *self {}
    }
}

/// A repeated message field's messages as a source keeps them (see
/// [`MessageSource::messages`]).
pub trait SubParts<M> {
    /// How many messages the field has.
    fn len(&self) -> usize;

    /// Whether the field has no messages.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Message `i`; `None` when it is not there (the field changed), and
    /// the encoder then reads the field with [`MessageSource::get`].
    fn get(&self, i: usize) -> Option<M>;
}

/// A source that has no [`SubParts`] to give.
pub enum NoSubs {}

impl<M> SubParts<M> for NoSubs {
    fn len(&self) -> usize {
        match *self {}
    }

    fn get(&self, _i: usize) -> Option<M> {
        match *self {}
    }
}

/// A map entry's key or value as the source keeps it.
#[derive(Clone, Copy)]
pub enum Plain<'m> {
    /// A value of a [packable](super::Kind::packable) kind, as
    /// [`Scalar::bits`] gives it.
    Bits(u64),
    /// A string's UTF-8 or the bytes of a bytes value.
    Text(&'m [u8]),
}

/// A map field's entries as a source keeps them (see
/// [`MessageSource::entries`]).
pub trait EntryParts<'m> {
    /// The key (`part` 1) or value (`part` 2) of entry `i`, a value of
    /// `kind`: bits for a packable kind, bytes for a string or bytes, when
    /// at hand; `None` otherwise (a message value, an object of another
    /// kind, an entry that is not there), and the encoder then reads the
    /// entry with [`MessageSource::entry`].
    fn part(&self, i: usize, part: u32, kind: Kind) -> Option<Plain<'m>>;
}

/// A source that has no [`EntryParts`] to give.
pub enum NoEntries {}

impl<'m> EntryParts<'m> for NoEntries {
    fn part(&self, _i: usize, _part: u32, _kind: Kind) -> Option<Plain<'m>> {
        match *self {}
    }
}
