//! [`MessageBuilder`], what the decoders (wire, text format, ProtoJSON)
//! call to make messages, and [`MapValue`], a map entry's value handed to it.

use crate::proto::runtime::scalar::Scalar;
use crate::proto::runtime::schema::FieldInfo;

/// A map entry's value.
pub enum MapValue<'a, M> {
    /// A scalar or enum.
    Scalar(Scalar<'a>),
    /// A message, built with [`MessageBuilder::start`].
    Message(M),
}

/// How a builder takes the values of length-delimited message fields (see
/// [`MessageBuilder::raw_mode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawMode {
    /// Each sub-message is built as it is read, through
    /// [`begin`](MessageBuilder::begin) and [`end`](MessageBuilder::end).
    Build,
    /// Each sub-message is checked first by the decoder itself (every error
    /// a build would raise, with its kind, offset and path, is raised
    /// then), and then handed over as its bytes ([`MessageBuilder::raw`]).
    Check,
    /// As `Check` without the check: the bytes were checked before (a
    /// builder building a message kept as its bytes).
    Trust,
}

/// Makes messages for the decoder. `Msg` is the builder's handle to a
/// message being filled.
///
/// Oneofs: the decoder reports each member as it comes; the builder clears
/// the other members of the same oneof (`FieldInfo::oneof`), so the last
/// one on the wire wins, as in protobuf.
pub trait MessageBuilder {
    /// A message being built.
    type Msg;
    /// The builder's error.
    type Err;
    /// A new, empty message of type `ty`.
    fn start(&mut self, ty: u32) -> Result<Self::Msg, Self::Err>;
    /// Set a singular scalar or enum field (last value wins).
    fn set(&mut self, m: &mut Self::Msg, f: &FieldInfo, v: Scalar<'_>) -> Result<(), Self::Err>;
    /// Append to a repeated scalar or enum field.
    fn push(&mut self, m: &mut Self::Msg, f: &FieldInfo, v: Scalar<'_>) -> Result<(), Self::Err>;
    /// A packed run of `n` values of repeated field `f` follows; a builder
    /// may make room for them. `n` is counted from the bytes present (the
    /// varints' last bytes, or the length over the fixed width), so it is
    /// never more than the input holds, even when the run turns out to be
    /// malformed.
    fn reserve(&mut self, _m: &mut Self::Msg, _f: &FieldInfo, _n: usize) -> Result<(), Self::Err> {
        Ok(())
    }
    /// Append a packed run's values to repeated field `f` (of a
    /// [packable](super::Kind::packable) kind whose every value is kept: not a
    /// closed enum), each as [`Scalar::bits`] gives it. The default pushes
    /// them one by one; a builder that keeps numbers natively may copy
    /// the slice.
    fn push_bits(
        &mut self,
        m: &mut Self::Msg,
        f: &FieldInfo,
        bits: &[u64],
    ) -> Result<(), Self::Err> {
        for &b in bits {
            if let Some(v) = Scalar::from_bits(f.kind, b) {
                self.push(m, f, v)?;
            }
        }
        Ok(())
    }
    /// Set singular field `f` (of a [packable](super::Kind::packable) kind whose
    /// every value is kept: not a closed enum) to the value whose
    /// [`Scalar::bits`] are `bits`. The default goes through
    /// [`set`](MessageBuilder::set); a builder that keeps numbers natively
    /// may store the bits.
    fn set_bits(&mut self, m: &mut Self::Msg, f: &FieldInfo, bits: u64) -> Result<(), Self::Err> {
        match Scalar::from_bits(f.kind, bits) {
            Some(v) => self.set(m, f, v),
            None => Ok(()),
        }
    }
    /// The decoder's direct write: set singular field `f`, outside any
    /// oneof and of a [packable](super::Kind::packable) kind whose every
    /// value is kept (not a closed enum), to the value whose
    /// [`Scalar::bits`] are `bits`. Nothing else needs clearing, so a
    /// builder may write the field's place directly; the default is
    /// [`set_bits`](MessageBuilder::set_bits).
    #[inline(always)]
    fn set_bits_at(
        &mut self,
        m: &mut Self::Msg,
        f: &FieldInfo,
        bits: u64,
    ) -> Result<(), Self::Err> {
        self.set_bits(m, f, bits)
    }
    /// The decoder's direct write of a `string` or `bytes` value `v`
    /// ([`Scalar::Str`] or [`Scalar::Bytes`]) to singular field `f`,
    /// outside any oneof; the default is [`set`](MessageBuilder::set).
    #[inline(always)]
    fn set_text_at(
        &mut self,
        m: &mut Self::Msg,
        f: &FieldInfo,
        v: Scalar<'_>,
    ) -> Result<(), Self::Err> {
        self.set(m, f, v)
    }
    /// Begin a message field's value: for a singular field, the message
    /// already there (taken out of `m`) or a new one, so a second occurrence
    /// merges; for a repeated field, a new message.
    fn begin(&mut self, m: &mut Self::Msg, f: &FieldInfo, ty: u32) -> Result<Self::Msg, Self::Err>;
    /// End a message field's value begun with `begin`: store (singular) or
    /// append (repeated) `sub`.
    fn end(&mut self, m: &mut Self::Msg, f: &FieldInfo, sub: Self::Msg) -> Result<(), Self::Err>;
    /// How this builder takes message fields' values; the default builds
    /// them.
    #[inline(always)]
    fn raw_mode(&self) -> RawMode {
        RawMode::Build
    }
    /// Keep the value of message field `f` (of type `ty`), length-delimited,
    /// as its bytes `bytes` (a slice of the input, its contents without the
    /// length; checked unless [`RawMode::Trust`]). `false`: the builder
    /// builds this one instead, and the decoder goes through
    /// [`begin`](MessageBuilder::begin) and [`end`](MessageBuilder::end)
    /// as in [`RawMode::Build`]. Called only when
    /// [`raw_mode`](MessageBuilder::raw_mode) is not `Build`.
    fn raw(
        &mut self,
        _m: &mut Self::Msg,
        _f: &FieldInfo,
        _ty: u32,
        _bytes: &[u8],
    ) -> Result<bool, Self::Err> {
        Ok(false)
    }
    /// A map entry whose value, a message of type `ty`, is kept as its
    /// bytes `bytes` (as [`raw`](MessageBuilder::raw) keeps a message
    /// field's; a missing key is the kind's default). `false`: the builder
    /// builds this value instead, and the decoder hands it over through
    /// [`map_entry`](MessageBuilder::map_entry). Called only when
    /// [`raw_mode`](MessageBuilder::raw_mode) is not `Build`.
    fn raw_entry(
        &mut self,
        _m: &mut Self::Msg,
        _f: &FieldInfo,
        _key: Scalar<'_>,
        _ty: u32,
        _bytes: &[u8],
    ) -> Result<bool, Self::Err> {
        Ok(false)
    }
    /// Where the map entry the decoder hands over next (through
    /// [`map_entry`](MessageBuilder::map_entry) or
    /// [`raw_entry`](MessageBuilder::raw_entry)) lies in the wire input:
    /// `at`, the offset of its tag, and `left`, the bytes of the enclosing
    /// message after it. Only the wire decoder calls this, before each
    /// entry; a builder may guess from two entries' places how many more
    /// are likely to follow (a guess only: the bytes may turn out to hold
    /// anything else). The default ignores it.
    #[inline(always)]
    fn entry_at(&mut self, _at: usize, _left: usize) {}
    /// A map entry (missing key or value: the kind's default). A repeated
    /// key replaces the earlier entry's value.
    fn map_entry(
        &mut self,
        m: &mut Self::Msg,
        f: &FieldInfo,
        key: Scalar<'_>,
        value: MapValue<'_, Self::Msg>,
    ) -> Result<(), Self::Err>;
    /// An unknown field: its tag and value as they were on the wire.
    fn unknown(&mut self, m: &mut Self::Msg, bytes: &[u8]) -> Result<(), Self::Err>;
}
