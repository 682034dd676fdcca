//! The interface between the decode walker and whatever makes values: the
//! walker checks the format and calls a [`Build`] for each value (amber-py's
//! builder makes Python objects; [`super::validate`] makes nothing).

/// Kinds of sequence a builder makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqKind {
    List,
    /// A list registered before its items (identity mode): visible through
    /// shared references while it fills, so items are appended.
    SharedList,
    Tuple,
    Set,
    FrozenSet,
    Deque,
}

/// Kinds of mapping a builder makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DictKind {
    Dict,
    Ordered,
    Counter,
    /// A defaultdict; the index into [`crate::format::DEFAULT_FACTORIES`].
    Default(u8),
}

/// Where an array's bytes are.
#[derive(Debug, Clone, Copy)]
pub enum NdData<'a> {
    /// Inside the frame, at `offset` from the frame's start.
    Inline { bytes: &'a [u8], offset: usize },
    /// In the caller's out-of-band buffer number `index`.
    OutOfBand { index: usize },
}

/// A decoded array header.
pub struct NdArray<'a, V> {
    pub dtype: V,
    pub shape: Vec<u64>,
    pub fortran: bool,
    pub data: NdData<'a>,
}

/// A decoded ARROW item: what to rebuild (`format::ARROW_*`), the extras
/// item, and where the Arrow IPC stream is.
pub struct ArrowTable<'a, V> {
    pub kind: u8,
    pub extras: V,
    pub data: NdData<'a>,
}

/// A datetime's fields.
pub struct DateTimeParts<V> {
    pub year: u16,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub microsecond: u32,
    pub fold: bool,
    pub tz: Option<V>,
}

/// Makes values for the decoder. `V` is an owned value; cloning it must give
/// another handle to the same object (the string table and shared references
/// hand out clones).
pub trait Build {
    type V: Clone;
    type Err;
    /// A registered class, as resolved from its name.
    type Class;

    fn none(&mut self) -> Result<Self::V, Self::Err>;
    fn bool(&mut self, v: bool) -> Result<Self::V, Self::Err>;
    fn int(&mut self, v: i64) -> Result<Self::V, Self::Err>;
    /// Little-endian two's complement, shortest form checked by the decoder.
    fn bigint(&mut self, le: &[u8]) -> Result<Self::V, Self::Err>;
    fn float(&mut self, v: f64) -> Result<Self::V, Self::Err>;
    fn complex(&mut self, re: f64, im: f64) -> Result<Self::V, Self::Err>;
    /// Valid UTF-8; `ascii` says every byte is below 0x80.
    fn str(&mut self, s: &str, ascii: bool) -> Result<Self::V, Self::Err>;
    /// UTF-8 in which lone surrogates appear as 3-byte sequences.
    fn str_surrogates(&mut self, raw: &[u8]) -> Result<Self::V, Self::Err>;
    /// `offset` is where `b` starts in the frame, for zero-copy views.
    fn bytes(&mut self, b: &[u8], offset: usize, mutable: bool) -> Result<Self::V, Self::Err>;
    fn bytes_oob(&mut self, index: usize, mutable: bool) -> Result<Self::V, Self::Err>;

    /// Start a sequence of `n` items (for SharedList, `n` is a hint: items
    /// are appended, the list being visible while it fills).
    fn seq_begin(&mut self, kind: SeqKind, n: usize) -> Result<Self::V, Self::Err>;
    fn seq_item(
        &mut self,
        seq: &Self::V,
        kind: SeqKind,
        i: usize,
        item: Self::V,
    ) -> Result<(), Self::Err>;
    fn seq_end(&mut self, seq: Self::V, kind: SeqKind) -> Result<Self::V, Self::Err>;
    /// A deque is a sequence whose `maxlen` comes first.
    fn deque_begin(&mut self, maxlen: Self::V) -> Result<Self::V, Self::Err>;

    fn dict_begin(&mut self, kind: DictKind, n: usize) -> Result<Self::V, Self::Err>;
    fn dict_item(&mut self, dict: &Self::V, key: Self::V, value: Self::V) -> Result<(), Self::Err>;

    fn date(&mut self, year: u16, month: u8, day: u8) -> Result<Self::V, Self::Err>;
    fn time(&mut self, parts: DateTimeParts<Self::V>) -> Result<Self::V, Self::Err>;
    fn datetime(&mut self, parts: DateTimeParts<Self::V>) -> Result<Self::V, Self::Err>;
    fn timedelta(&mut self, days: i32, seconds: i32, micros: i32) -> Result<Self::V, Self::Err>;
    fn tz_utc(&mut self) -> Result<Self::V, Self::Err>;
    fn tz_fixed(&mut self, offset_us: i64, name: Self::V) -> Result<Self::V, Self::Err>;
    fn tz_zone(&mut self, key: Self::V) -> Result<Self::V, Self::Err>;

    /// `s` is ASCII.
    fn decimal(&mut self, s: &str) -> Result<Self::V, Self::Err>;
    fn uuid(&mut self, bytes: [u8; 16], safe: u8) -> Result<Self::V, Self::Err>;
    fn fraction(&mut self, num: Self::V, den: Self::V) -> Result<Self::V, Self::Err>;

    /// Look a class up by its registered name; unregistered names are errors.
    fn class(&mut self, name: &Self::V) -> Result<Self::Class, Self::Err>;
    fn enum_member(&mut self, class: &Self::Class, value: Self::V) -> Result<Self::V, Self::Err>;
    /// OBJECT_FILL: make an instance to fill; refuse classes built from state.
    fn object_new(&mut self, class: &Self::Class) -> Result<Self::V, Self::Err>;
    fn object_fill(
        &mut self,
        class: &Self::Class,
        obj: &Self::V,
        state: Self::V,
    ) -> Result<(), Self::Err>;
    /// OBJECT: build an instance from its state; refuse classes made first.
    fn object_build(&mut self, class: &Self::Class, state: Self::V) -> Result<Self::V, Self::Err>;
    /// OBJECT_STATE: make an instance from its base (None for classes made
    /// empty, the fields of a named tuple).
    fn object_base(&mut self, class: &Self::Class, base: Self::V) -> Result<Self::V, Self::Err>;
    /// OBJECT_STATE: give a made instance its state, as pickle's BUILD does.
    fn object_setstate(
        &mut self,
        class: &Self::Class,
        obj: &Self::V,
        state: Self::V,
    ) -> Result<(), Self::Err>;

    fn ndarray(&mut self, array: NdArray<'_, Self::V>) -> Result<Self::V, Self::Err>;
    /// An NDARRAY whose elements are items (`format::ND_ITEMS`): `items` is
    /// the LIST of them, for an array of `shape`, in Fortran order when
    /// `fortran`, else in C order.
    fn ndarray_items(
        &mut self,
        dtype: Self::V,
        shape: Vec<u64>,
        fortran: bool,
        items: Self::V,
    ) -> Result<Self::V, Self::Err>;
    fn npscalar(&mut self, dtype: Self::V, raw: &[u8]) -> Result<Self::V, Self::Err>;
    fn arrow(&mut self, table: ArrowTable<'_, Self::V>) -> Result<Self::V, Self::Err>;

    /// Render a dict key for an error path (`None` if it is not a str).
    fn key_str(&self, key: &Self::V) -> Option<String>;
}
