//! Trees of values built by `arbitrary`, written with the `writer`
//! primitives into one frame, then read back.
//!
//! Checks: `validate` accepts every frame the writer makes; its `Stats`
//! (items, strings, containers) match counts taken from the tree; and a
//! small `Build` that rebuilds the values gives back the tree that was
//! written (floats compared bit for bit, string-table references resolved).
#![no_main]

use std::cell::RefCell;
use std::collections::HashMap;
use std::convert::Infallible;
use std::rc::Rc;

use amber_core::codec::build::{ArrowTable, Build, DateTimeParts, DictKind, NdArray, SeqKind};
use amber_core::codec::format as f;
use amber_core::codec::validate::{validate, Stats};
use amber_core::codec::walker::{self as decode, Limits};
use amber_core::codec::writer as w;
use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;

/// Nesting the generator may reach; below the decoder's default limit.
const MAX_GEN_DEPTH: usize = 24;

/// Ints where the shortest form changes, and the i64 extremes.
const EDGE_INTS: [i64; 20] = [
    0,
    63,
    64,
    -32,
    -33,
    127,
    128,
    -128,
    -129,
    32_767,
    32_768,
    -32_768,
    -32_769,
    2_147_483_647,
    2_147_483_648,
    -2_147_483_648,
    -2_147_483_649,
    i64::MAX,
    i64::MIN,
    -1,
];

#[derive(Debug, Clone, PartialEq)]
enum Value {
    None,
    Bool(bool),
    Int(i64),
    /// Outside i64: written as BIGINT in shortest two's complement.
    BigInt(i128),
    /// Compared by bits, so NaNs and -0.0 round-trip exactly.
    Float(u64),
    /// `intern`: enter it in the string table (STR_DEF) when first written;
    /// later copies of an entered string are written as references.
    Str {
        s: String,
        intern: bool,
    },
    Bytes {
        b: Vec<u8>,
        mutable: bool,
    },
    List(Vec<Value>),
    Tuple(Vec<Value>),
    Set(Vec<Value>),
    FrozenSet(Vec<Value>),
    Dict(Vec<(Value, Value)>),
}

fn gen(u: &mut Unstructured<'_>, depth: usize) -> Result<Value> {
    let leaf_kinds = 8u8;
    let kinds = if depth >= MAX_GEN_DEPTH {
        leaf_kinds
    } else {
        leaf_kinds + 5
    };
    Ok(match u.int_in_range(0..=kinds - 1)? {
        0 => Value::None,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::Int(u.arbitrary()?),
        3 => Value::Int(*u.choose(&EDGE_INTS)?),
        4 => {
            let v: i128 = u.arbitrary()?;
            if let Ok(small) = i64::try_from(v) {
                // Push it outside i64 so BIGINT is the right encoding.
                Value::BigInt(if small < 0 {
                    i128::from(i64::MIN) - 1 - i128::from(small.unsigned_abs() >> 1)
                } else {
                    i128::from(i64::MAX) + 1 + i128::from(small)
                })
            } else {
                Value::BigInt(v)
            }
        }
        5 => Value::Float(u.arbitrary::<f64>()?.to_bits()),
        6 => {
            let s: String = u.arbitrary()?;
            Value::Str {
                s,
                intern: u.arbitrary()?,
            }
        }
        7 => Value::Bytes {
            b: u.arbitrary()?,
            mutable: u.arbitrary()?,
        },
        k => {
            let n = u.arbitrary_len::<u8>()?.min(40);
            if k == 12 {
                let mut pairs = Vec::with_capacity(n);
                for _ in 0..n {
                    if u.is_empty() {
                        break;
                    }
                    pairs.push((gen(u, depth + 1)?, gen(u, depth + 1)?));
                }
                return Ok(Value::Dict(pairs));
            }
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                if u.is_empty() {
                    break;
                }
                items.push(gen(u, depth + 1)?);
            }
            match k {
                8 => Value::List(items),
                9 => Value::Tuple(items),
                10 => Value::Set(items),
                _ => Value::FrozenSet(items),
            }
        }
    })
}

struct Input(Value);

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        gen(u, 0).map(Input)
    }
}

impl std::fmt::Debug for Input {
    fn fmt(&self, fm: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(fm)
    }
}

/// Shortest little-endian two's complement of `v`.
fn bigint_le(v: i128) -> Vec<u8> {
    let mut le = v.to_le_bytes().to_vec();
    while le.len() > 1 {
        let last = le[le.len() - 1];
        let sign_of_next = le[le.len() - 2] & 0x80;
        if (last == 0x00 && sign_of_next == 0) || (last == 0xFF && sign_of_next != 0) {
            le.pop();
        } else {
            break;
        }
    }
    le
}

/// Writes a tree, keeping the string table the way an encoder would.
struct Writer {
    out: w::Out,
    table: HashMap<String, usize>,
}

impl Writer {
    fn value(&mut self, v: &Value) {
        let out = &mut self.out;
        match v {
            Value::None => w::write_none(out),
            Value::Bool(b) => w::write_bool(out, *b),
            Value::Int(i) => w::write_int(out, *i),
            Value::BigInt(i) => w::write_bigint(out, &bigint_le(*i)),
            Value::Float(bits) => w::write_float(out, f64::from_bits(*bits)),
            Value::Str { s, intern } => match self.table.get(s) {
                Some(&i) => w::write_str_ref(out, i),
                None if *intern => {
                    w::write_str_def(out, s.as_bytes());
                    let n = self.table.len();
                    self.table.insert(s.clone(), n);
                }
                None => w::write_str(out, s.as_bytes()),
            },
            Value::Bytes { b, mutable } => w::write_bytes(out, b, *mutable),
            Value::List(items) => {
                w::write_list_header(out, items.len());
                self.values(items);
            }
            Value::Tuple(items) => {
                w::write_tuple_header(out, items.len());
                self.values(items);
            }
            Value::Set(items) => {
                w::write_counted(out, f::SET, items.len());
                self.values(items);
            }
            Value::FrozenSet(items) => {
                w::write_counted(out, f::FROZENSET, items.len());
                self.values(items);
            }
            Value::Dict(pairs) => {
                w::write_dict_header(out, pairs.len());
                for (k, v) in pairs {
                    self.value(k);
                    self.value(v);
                }
            }
        }
    }

    fn values(&mut self, items: &[Value]) {
        for v in items {
            self.value(v);
        }
    }
}

/// What `Stats` should say: every value is an item, except string-table
/// references, which hand out an earlier value without calling the builder;
/// strs written in full are strings; lists, tuples, sets and dicts are
/// containers (and items).
fn expected_stats(v: &Value, seen: &mut HashMap<String, ()>, st: &mut Stats) {
    match v {
        Value::Str { s, intern } => {
            if seen.contains_key(s) {
                return;
            }
            if *intern {
                seen.insert(s.clone(), ());
            }
            st.items += 1;
            st.strings += 1;
        }
        Value::List(items) | Value::Tuple(items) | Value::Set(items) | Value::FrozenSet(items) => {
            st.items += 1;
            st.containers += 1;
            for i in items {
                expected_stats(i, seen, st);
            }
        }
        Value::Dict(pairs) => {
            st.items += 1;
            st.containers += 1;
            for (k, v) in pairs {
                expected_stats(k, seen, st);
                expected_stats(v, seen, st);
            }
        }
        _ => st.items += 1,
    }
}

/// A decoded value. Containers fill through shared handles, as the
/// decoder's `Build` contract asks.
#[derive(Debug, Clone)]
enum Node {
    Leaf(Value),
    Seq(SeqKind, Vec<H>),
    Dict(Vec<(H, H)>),
}

/// A handle to a decoded value.
type H = Rc<RefCell<Node>>;

fn leaf(v: Value) -> std::result::Result<H, &'static str> {
    Ok(Rc::new(RefCell::new(Node::Leaf(v))))
}

/// Turn a decoded node back into a `Value`. String-table flags are not in
/// the bytes, so strs come back with `intern` taken from the original.
fn to_value(h: &H, like: &Value) -> Option<Value> {
    let node = h.borrow();
    Some(match (&*node, like) {
        (Node::Leaf(Value::Str { s, .. }), Value::Str { intern, .. }) => Value::Str {
            s: s.clone(),
            intern: *intern,
        },
        (Node::Leaf(v), _) => v.clone(),
        (Node::Seq(kind, items), _) => {
            let likes = match like {
                Value::List(l) | Value::Tuple(l) | Value::Set(l) | Value::FrozenSet(l) => l,
                _ => return None,
            };
            if likes.len() != items.len() {
                return None;
            }
            let vals = items
                .iter()
                .zip(likes)
                .map(|(i, l)| to_value(i, l))
                .collect::<Option<Vec<_>>>()?;
            match kind {
                SeqKind::List => Value::List(vals),
                SeqKind::Tuple => Value::Tuple(vals),
                SeqKind::Set => Value::Set(vals),
                SeqKind::FrozenSet => Value::FrozenSet(vals),
                SeqKind::SharedList | SeqKind::Deque => return None,
            }
        }
        (Node::Dict(pairs), Value::Dict(likes)) => {
            if likes.len() != pairs.len() {
                return None;
            }
            Value::Dict(
                pairs
                    .iter()
                    .zip(likes)
                    .map(|((k, v), (lk, lv))| Some((to_value(k, lk)?, to_value(v, lv)?)))
                    .collect::<Option<Vec<_>>>()?,
            )
        }
        (Node::Dict(_), _) => return None,
    })
}

/// Rebuilds the subset of values the generator makes; anything else is an
/// error (the writer never produces it).
struct Rebuild;

type R<T> = std::result::Result<T, &'static str>;

impl Build for Rebuild {
    type V = H;
    type Err = &'static str;
    type Class = Infallible;

    fn none(&mut self) -> R<H> {
        leaf(Value::None)
    }
    fn bool(&mut self, v: bool) -> R<H> {
        leaf(Value::Bool(v))
    }
    fn int(&mut self, v: i64) -> R<H> {
        leaf(Value::Int(v))
    }
    fn bigint(&mut self, le: &[u8]) -> R<H> {
        if le.len() > 16 {
            return Err("bigint wider than i128");
        }
        let fill = if le[le.len() - 1] & 0x80 != 0 {
            0xFF
        } else {
            0
        };
        let mut b = [fill; 16];
        b[..le.len()].copy_from_slice(le);
        leaf(Value::BigInt(i128::from_le_bytes(b)))
    }
    fn float(&mut self, v: f64) -> R<H> {
        leaf(Value::Float(v.to_bits()))
    }
    fn complex(&mut self, _: f64, _: f64) -> R<H> {
        Err("complex")
    }
    fn str(&mut self, s: &str, ascii: bool) -> R<H> {
        if ascii != s.is_ascii() {
            return Err("wrong ascii flag");
        }
        leaf(Value::Str {
            s: s.to_owned(),
            intern: false,
        })
    }
    fn str_surrogates(&mut self, _: &[u8]) -> R<H> {
        Err("str with surrogates")
    }
    fn bytes(&mut self, b: &[u8], _: usize, mutable: bool) -> R<H> {
        leaf(Value::Bytes {
            b: b.to_vec(),
            mutable,
        })
    }
    fn bytes_oob(&mut self, _: usize, _: bool) -> R<H> {
        Err("out-of-band bytes")
    }
    fn seq_begin(&mut self, kind: SeqKind, n: usize) -> R<H> {
        Ok(Rc::new(RefCell::new(Node::Seq(
            kind,
            Vec::with_capacity(n),
        ))))
    }
    fn seq_item(&mut self, seq: &H, _: SeqKind, i: usize, item: H) -> R<()> {
        match &mut *seq.borrow_mut() {
            Node::Seq(_, items) if items.len() == i => {
                items.push(item);
                Ok(())
            }
            _ => Err("seq_item out of order"),
        }
    }
    fn seq_end(&mut self, seq: H, _: SeqKind) -> R<H> {
        Ok(seq)
    }
    fn deque_begin(&mut self, _: H) -> R<H> {
        Err("deque")
    }
    fn dict_begin(&mut self, kind: DictKind, n: usize) -> R<H> {
        if kind != DictKind::Dict {
            return Err("dict kind");
        }
        Ok(Rc::new(RefCell::new(Node::Dict(Vec::with_capacity(n)))))
    }
    fn dict_item(&mut self, dict: &H, key: H, value: H) -> R<()> {
        match &mut *dict.borrow_mut() {
            Node::Dict(pairs) => {
                pairs.push((key, value));
                Ok(())
            }
            _ => Err("dict_item on a non-dict"),
        }
    }
    fn date(&mut self, _: u16, _: u8, _: u8) -> R<H> {
        Err("date")
    }
    fn time(&mut self, _: DateTimeParts<H>) -> R<H> {
        Err("time")
    }
    fn datetime(&mut self, _: DateTimeParts<H>) -> R<H> {
        Err("datetime")
    }
    fn timedelta(&mut self, _: i32, _: i32, _: i32) -> R<H> {
        Err("timedelta")
    }
    fn tz_utc(&mut self) -> R<H> {
        Err("tz")
    }
    fn tz_fixed(&mut self, _: i64, _: H) -> R<H> {
        Err("tz")
    }
    fn tz_zone(&mut self, _: H) -> R<H> {
        Err("tz")
    }
    fn decimal(&mut self, _: &str) -> R<H> {
        Err("decimal")
    }
    fn uuid(&mut self, _: [u8; 16], _: u8) -> R<H> {
        Err("uuid")
    }
    fn fraction(&mut self, _: H, _: H) -> R<H> {
        Err("fraction")
    }
    fn class(&mut self, _: &H) -> R<Infallible> {
        Err("class")
    }
    fn enum_member(&mut self, c: &Infallible, _: H) -> R<H> {
        match *c {}
    }
    fn object_new(&mut self, c: &Infallible) -> R<H> {
        match *c {}
    }
    fn object_fill(&mut self, c: &Infallible, _: &H, _: H) -> R<()> {
        match *c {}
    }
    fn object_build(&mut self, c: &Infallible, _: H) -> R<H> {
        match *c {}
    }
    fn object_base(&mut self, c: &Infallible, _: H) -> R<H> {
        match *c {}
    }
    fn object_setstate(&mut self, c: &Infallible, _: &H, _: H) -> R<()> {
        match *c {}
    }
    fn ndarray(&mut self, _: NdArray<'_, H>) -> R<H> {
        Err("ndarray")
    }
    fn ndarray_items(&mut self, _: H, _: Vec<u64>, _: bool, _: H) -> R<H> {
        Err("ndarray")
    }
    fn npscalar(&mut self, _: H, _: &[u8]) -> R<H> {
        Err("npscalar")
    }
    fn arrow(&mut self, _: ArrowTable<'_, H>) -> R<H> {
        Err("arrow")
    }
    fn key_str(&self, _: &H) -> Option<String> {
        None
    }
}

fuzz_target!(|input: Input| {
    let tree = input.0;
    let mut wr = Writer {
        out: w::Out::new(),
        table: HashMap::new(),
    };
    let start = w::begin_frame(&mut wr.out);
    wr.value(&tree);
    w::finish_frame(&mut wr.out, start);
    assert!(!wr.out.failed());
    let frame = wr.out.as_slice().to_vec();

    let stats = match validate(&frame, Limits::default()) {
        Ok(s) => s,
        Err(e) => panic!("validate refused a written frame: {e}\nframe: {frame:02x?}"),
    };
    let mut want = Stats::default();
    expected_stats(&tree, &mut HashMap::new(), &mut want);
    assert_eq!(stats, want, "Stats disagree with the tree");

    let decoded = match decode::decode(&frame, &mut Rebuild, Limits::default()) {
        Ok(h) => h,
        Err(e) => panic!("decode refused a written frame: {e}\nframe: {frame:02x?}"),
    };
    let back = to_value(&decoded, &tree).expect("decoded tree has another shape");
    assert_eq!(back, tree, "decoded value differs");
});
