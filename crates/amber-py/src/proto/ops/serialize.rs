//! Messages into wire bytes: the core's encoder reads each message through
//! a source over its slots. Every message and container read is borrowed
//! for the whole encode (a change made meanwhile, by a finalizer say, gets
//! an "already borrowed" error instead of changing what is being read), and
//! stored values are exact builtin types, so no Python code runs.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use amber_core::proto::runtime::{
    encode_planned, EncodeError, EncodeFailure, EncodeKind, EncodeOptions, EncodePlans, EntryParts,
    FieldInfo, Held, Kind, MessageSource, Plain, Scalar, SrcValue, SubParts, TextParts,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyFloat, PyInt, PyString};

use amber_core::proto::text::{print_text, PrintFailure, TextOptions};

use crate::errors;
use crate::proto::state::cell::{Borrow, Ref};
use crate::proto::state::map::{MapField, Part};
use crate::proto::state::message::{text_scalar, Message, PyMessage, Slot};
use crate::proto::state::objects::sub_type;
use crate::proto::state::repeated::{Items, Repeated};
use crate::proto::state::schema::SchemaRef;
use crate::proto::state::values;

pub(crate) struct Source<'py> {
    py: Python<'py>,
    msgs: RefCell<Vec<Ref<'py, PyMessage>>>,
    lists: RefCell<Vec<PyRef<'py, Repeated>>>,
    maps: RefCell<Vec<PyRef<'py, MapField>>>,
    escaped: RefCell<Vec<Bound<'py, PyBytes>>>,
    /// Sub-messages a parse kept as places in its input ([`Slot::Raw`]),
    /// built for this encode and kept until it ends.
    #[allow(clippy::vec_box)]
    built: RefCell<Vec<Box<Message>>>,
    /// The container `count` borrowed last, which the encoder's `get` and
    /// `entry` calls that follow read (by its object's address).
    last_list: Cell<(usize, *const Repeated)>,
    last_map: Cell<(usize, *const MapField)>,
    /// The error behind a `Stashed` (kept here so the encoder's results
    /// stay small).
    err: RefCell<Option<PyErr>>,
    /// The object behind the scalar `scalar` gave last (see [`Given`]),
    /// kept only when `record` (a source made by `recording`).
    given: Cell<Given>,
    record: bool,
}

/// The stored Python object behind the last scalar a [`Source`] gave: a
/// printer that makes Python values (`to_dict`) hands on that object when
/// it is about to make an equal one (the same text, at the same address;
/// the same integer; the same float bits). The object stays alive until
/// the source is dropped: the message or container holding it is borrowed
/// by the source for the whole print.
#[derive(Clone, Copy)]
pub(crate) enum Given {
    None,
    Str(*const u8, usize, *mut pyo3::ffi::PyObject),
    Int(i64, *mut pyo3::ffi::PyObject),
    Float(u64, *mut pyo3::ffi::PyObject),
}

/// The source failed; the error is in `Source::err`.
pub struct Stashed;

/// An `amber.EncodeError` of `kind` the source raises (the encoder adds
/// no path to these).
#[cold]
fn fail(kind: EncodeKind, msg: String) -> PyErr {
    Python::attach(|py| {
        errors::make(
            py,
            errors::encode_error(py),
            kind.name(),
            msg,
            None,
            None,
            None,
        )
    })
}

/// A message or container found borrowed for a change while it is being
/// written (code run by a change, a finalizer say, that writes the
/// message): `amber.EncodeError` of kind `mutated`, the borrow's error as
/// its cause.
#[cold]
pub(crate) fn changing(e: PyErr) -> PyErr {
    Python::attach(|py| {
        errors::make(
            py,
            errors::encode_error(py),
            EncodeKind::Mutated.name(),
            format!("a message or container changed while it was written ({e})"),
            None,
            None,
            Some(e),
        )
    })
}

impl<'py> Source<'py> {
    /// The error behind a `Stashed`.
    pub(crate) fn take_err(&self) -> PyErr {
        self.err.borrow_mut().take().expect("a stashed error")
    }

    pub(crate) fn new(py: Python<'py>) -> Self {
        Source {
            py,
            msgs: RefCell::new(Vec::new()),
            lists: RefCell::new(Vec::new()),
            maps: RefCell::new(Vec::new()),
            escaped: RefCell::new(Vec::new()),
            built: RefCell::new(Vec::new()),
            last_list: Cell::new((0, std::ptr::null())),
            last_map: Cell::new((0, std::ptr::null())),
            err: RefCell::new(None),
            given: Cell::new(Given::None),
            record: false,
        }
    }

    /// A source that keeps the object behind each scalar it gives, for a
    /// printer making Python values (see [`Given`]).
    pub(crate) fn recording(py: Python<'py>) -> Self {
        Source {
            record: true,
            ..Source::new(py)
        }
    }

    /// The object behind the scalar given last (see [`Given`]).
    pub(crate) fn given(&self) -> Given {
        self.given.get()
    }

    #[cold]
    fn stash(&self, e: PyErr) -> Stashed {
        *self.err.borrow_mut() = Some(e);
        Stashed
    }

    /// Borrow a sub-message for the rest of the encode.
    fn message<'m>(&self, o: &Py<PyAny>, ty: u32) -> PyResult<&'m Message> {
        let m = o
            .bind(self.py)
            .cast::<PyMessage>()?
            .state()
            .map_err(changing)?;
        if m.ty != ty {
            return Err(fail(
                EncodeKind::TypeMismatch,
                format!("a field of type {} holds a {}", ty, m.info().full_name),
            ));
        }
        let r: *const Message = &*m;
        keep(&mut self.msgs.borrow_mut(), m);
        // SAFETY: the guard just pushed keeps the object alive and shared-
        // borrowed until this source is dropped, after `encode` returns and
        // with it every `'m` reference; the pyclass contents live in the
        // Python object's memory, which never moves, so moving the guard
        // into the vector does not move `*r`.
        Ok(unsafe { &*r })
    }

    /// Build the sub-message of kind `kind` kept at place `sp` of `m`'s
    /// input, for the rest of the encode.
    fn built<'m>(&self, m: &Message, kind: Kind, sp: (u32, u32)) -> PyResult<&'m Message> {
        let b = Box::new(m.build_at(self.py, sub_type(kind), sp)?);
        let r: *const Message = &*b;
        self.built.borrow_mut().push(b);
        // SAFETY: the box just pushed is kept until this source is dropped,
        // after `encode` returns and with it every `'m` reference; moving
        // the box into the vector does not move the message it points to,
        // and nothing removes it or hands out a mutable reference to it.
        Ok(unsafe { &*r })
    }

    fn list<'m>(&self, l: &Py<Repeated>) -> PyResult<&'m Repeated> {
        let key = l.as_ptr() as usize;
        let (k, r) = self.last_list.get();
        if k != key {
            let g = l
                .bind(self.py)
                .try_borrow()
                .map_err(|e| changing(e.into()))?;
            let r: *const Repeated = &*g;
            keep(&mut self.lists.borrow_mut(), g);
            self.last_list.set((key, r));
            // SAFETY: as in `message`.
            return Ok(unsafe { &*r });
        }
        // SAFETY: `r` was taken from a guard of this same object pushed
        // into `lists` (the object stays alive, so its address is not
        // reused); as in `message`, it is valid until the source drops.
        Ok(unsafe { &*r })
    }

    fn map<'m>(&self, l: &Py<MapField>) -> PyResult<&'m MapField> {
        let key = l.as_ptr() as usize;
        let (k, r) = self.last_map.get();
        if k != key {
            let g = l
                .bind(self.py)
                .try_borrow()
                .map_err(|e| changing(e.into()))?;
            let r: *const MapField = &*g;
            self.maps.borrow_mut().push(g);
            self.last_map.set((key, r));
            // SAFETY: as in `message`.
            return Ok(unsafe { &*r });
        }
        // SAFETY: as in `list`.
        Ok(unsafe { &*r })
    }

    #[inline(always)]
    fn scalar<'m>(&self, o: &'m Py<PyAny>, f: &FieldInfo, kind: Kind) -> PyResult<Scalar<'m>>
    where
        'py: 'm,
    {
        let b: &'m Bound<'py, PyAny> = o.bind(self.py);
        if !self.record {
            if let Kind::String = kind {
                // A str read in place when compact ASCII (see `text_of`).
                if let Some(t) = text_of(b, kind) {
                    return Ok(Scalar::Str(t));
                }
            } else if let Some(s) = quick_bits(b, kind).and_then(|v| Scalar::from_bits(kind, v)) {
                return Ok(s);
            }
        }
        match values::to_scalar(b, kind) {
            Some(Ok(s)) if !self.record => Ok(s),
            Some(Ok(s)) => {
                let p = o.as_ptr();
                let int = || b.is_exact_instance_of::<pyo3::types::PyInt>();
                self.given.set(match s {
                    Scalar::Str(t) => Given::Str(t.as_ptr(), t.len(), p),
                    Scalar::I32(v) | Scalar::Enum(v) if int() => Given::Int(v.into(), p),
                    Scalar::I64(v) if int() => Given::Int(v, p),
                    Scalar::U32(v) if int() => Given::Int(v.into(), p),
                    Scalar::F64(x) => Given::Float(x.to_bits(), p),
                    _ => Given::None,
                });
                Ok(s)
            }
            Some(Err(())) => {
                let e = values::escaped_bytes(b)?;
                let p = e.as_bytes();
                let r: *const [u8] = p;
                self.escaped.borrow_mut().push(e);
                // SAFETY: the bytes object pushed is kept until the source
                // is dropped (after `encode` returns); bytes are immutable.
                let bytes: &'m [u8] = unsafe { &*r };
                Ok(Scalar::Str(bytes))
            }
            None => Err(fail(
                EncodeKind::TypeMismatch,
                format!(
                    "field {} holds a {}, not a {} value",
                    f.name,
                    b.get_type().name()?,
                    values::kind_name(kind).0
                ),
            )),
        }
    }

    #[inline(always)]
    fn value<'m>(
        &self,
        o: &'m Py<PyAny>,
        f: &FieldInfo,
        kind: Kind,
    ) -> PyResult<SrcValue<'m, &'m Message>>
    where
        'py: 'm,
    {
        match kind {
            Kind::Message(t) => Ok(SrcValue::Message(self.message(o, t)?)),
            k => Ok(SrcValue::Scalar(self.scalar(o, f, k)?)),
        }
    }
}

/// A map field's entries as kept (see [`MessageSource::entries`]): keys
/// and values as bits and spans from a wire parse, or as objects.
pub(crate) enum View<'m, 'py> {
    Parts(&'m [(Part, Part)], &'m Message, Python<'py>),
    Objs(&'m [(Py<PyAny>, Py<PyAny>)], Python<'py>),
}

impl<'m, 'py: 'm> EntryParts<'m> for View<'m, 'py> {
    #[inline(always)]
    fn part(&self, i: usize, part: u32, kind: Kind) -> Option<Plain<'m>> {
        match *self {
            View::Parts(v, m, py) => {
                let (k, v) = v.get(i)?;
                match *(if part == 1 { k } else { v }) {
                    Part::Bits(b) => Some(Plain::Bits(b)),
                    Part::Span(off, len) => Some(Plain::Text(m.span(py, (off, len)))),
                    Part::Msg | Part::Raw(..) => None,
                }
            }
            View::Objs(v, py) => {
                // Once per entry: the encoder asks for its value (part 2)
                // before its key.
                if part == 2 && i >= AHEAD {
                    let (k, v) = &v[i - AHEAD];
                    prefetch(k.as_ptr());
                    prefetch(v.as_ptr());
                }
                let (k, v) = v.get(i)?;
                let o = (if part == 1 { k } else { v }).bind(py);
                match kind {
                    Kind::String | Kind::Bytes => text_of(o, kind).map(Plain::Text),
                    Kind::Message(_) => None,
                    _ => quick_bits(o, kind)
                        .or_else(|| values::bits(o, kind).ok())
                        .map(Plain::Bits),
                }
            }
        }
    }
}

/// The bits ([`Scalar::bits`]) of an exact float stored for a double
/// field or an exact int of up to two digits stored for an integer field
/// (the common cases), read in place; `None` for anything else, and for an
/// int out of the kind's range (`values::bits` reads or reports those).
#[inline(always)]
fn quick_bits(o: &Bound<'_, PyAny>, kind: Kind) -> Option<u64> {
    match kind {
        Kind::Double => Some(o.cast_exact::<PyFloat>().ok()?.value().to_bits()),
        Kind::Float | Kind::Bool | Kind::String | Kind::Bytes | Kind::Message(_) => None,
        _ if o.is_exact_instance_of::<PyInt>() => {
            // SAFETY: `o` is a live exact int, held by the caller's borrow.
            let v = unsafe { crate::ffi::long::small_int(o.as_ptr()) }?;
            // As `to_scalar` then `Scalar::bits`: in range for the kind,
            // sign-extended from 32 bits for the signed 32-bit kinds.
            match kind {
                Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 | Kind::Enum(_) => {
                    i32::try_from(v).ok().map(|v| v as i64 as u64)
                }
                Kind::Uint32 | Kind::Fixed32 => u32::try_from(v).ok().map(u64::from),
                Kind::Uint64 | Kind::Fixed64 => u64::try_from(v).ok(),
                _ => Some(v as u64),
            }
        }
        _ => None,
    }
}

/// How many items ahead of the one encoded the objects of a list or map
/// are fetched into the cache (the encoder goes from the last item to the
/// first).
const AHEAD: usize = 4;

/// Ask for the cache line holding `o`'s header.
#[inline(always)]
fn prefetch(o: *mut pyo3::ffi::PyObject) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it reads nothing and cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(o as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = o;
}

/// A repeated string or bytes field's values as kept (see
/// [`MessageSource::texts`]): spans of a wire parse, or objects.
pub(crate) enum Texts<'m, 'py> {
    Spans(&'m [(u32, u32)], &'m Message, Python<'py>),
    Objs(&'m [Py<PyAny>], Kind, Python<'py>),
}

impl<'m, 'py: 'm> TextParts<'m> for Texts<'m, 'py> {
    #[inline(always)]
    fn text(&self, i: usize) -> Option<&'m [u8]> {
        match *self {
            Texts::Spans(v, m, py) => v.get(i).map(|&sp| m.span(py, sp)),
            Texts::Objs(v, kind, py) => {
                if i >= AHEAD {
                    prefetch(v[i - AHEAD].as_ptr());
                }
                text_of(v.get(i)?.bind(py), kind)
            }
        }
    }

    #[inline(always)]
    fn len(&self) -> usize {
        match *self {
            Texts::Spans(v, ..) => v.len(),
            Texts::Objs(v, ..) => v.len(),
        }
    }
}

/// A repeated message field's messages kept natively (see
/// [`MessageSource::messages`]).
pub(crate) struct Subs<'m>(&'m [Message]);

impl<'m> SubParts<&'m Message> for Subs<'m> {
    #[inline(always)]
    fn len(&self) -> usize {
        self.0.len()
    }

    #[inline(always)]
    fn get(&self, i: usize) -> Option<&'m Message> {
        self.0.get(i)
    }
}

/// The bytes of a string or bytes object stored for a field of `kind`:
/// what the setters store; anything else goes the long way (`None`), which
/// reports it, and so does a string holding lone surrogates (written with
/// `surrogateescape`).
#[inline(always)]
fn text_of<'m>(o: &'m Bound<'_, PyAny>, kind: Kind) -> Option<&'m [u8]> {
    match kind {
        Kind::String => (o.cast_exact::<PyString>().ok()).and_then(crate::ffi::text::str_utf8),
        _ => (o.cast_exact::<PyBytes>().ok()).map(|b| b.as_bytes()),
    }
}

/// Keep a borrow guard for the rest of the encode: the first takes room
/// for 16, so that a message of a dozen sub-messages or containers does
/// not grow the list guard by guard (and one without any allocates none).
#[inline]
fn keep<T>(v: &mut Vec<T>, guard: T) {
    if v.capacity() == 0 {
        v.reserve(16);
    }
    v.push(guard);
}

/// The position of field `f` among `m`'s values. `f` is one of the
/// fields of `m`'s own type (the walkers go through a message's own
/// fields), so its `pos` says where it is; a field from elsewhere would
/// read another slot (or none), never out of bounds.
#[inline(always)]
fn pos(m: &Message, f: &FieldInfo) -> usize {
    debug_assert_eq!(m.info().position(f), f.pos as usize);
    f.pos as usize
}

impl<'m, 'py: 'm> MessageSource<'m> for Source<'py> {
    type Msg = &'m Message;
    type Err = Stashed;
    type Entries = View<'m, 'py>;
    type Texts = Texts<'m, 'py>;
    type Subs = Subs<'m>;

    #[inline]
    fn count(&self, m: &'m Message, f: &FieldInfo) -> Result<usize, Stashed> {
        Ok(match m.slot(pos(m, f)) {
            Slot::Unset | Slot::Lazy(_) => 0,
            Slot::Val(_) | Slot::Num(_) => 1,
            Slot::List(l) => self.list(l).map_err(|e| self.stash(e))?.items.len(),
            Slot::Map(l) => self.map(l).map_err(|e| self.stash(e))?.data.entries.len(),
            Slot::Sub(_) => 1,
            Slot::Subs(v) => v.len(),
            Slot::Items(v) => v.len(),
            Slot::Entries(d) => d.entries.len(),
            Slot::Span(..) => 1,
            Slot::Spans(v) => v.len(),
            Slot::Pairs(p) => p.entries.len(),
            Slot::Raw(..) => 1,
            Slot::Raws(v) => v.len(),
        })
    }

    #[inline]
    fn get(
        &self,
        m: &'m Message,
        f: &FieldInfo,
        i: usize,
    ) -> Result<SrcValue<'m, &'m Message>, Stashed> {
        self.get_value(m, f, i).map_err(|e| self.stash(e))
    }

    #[inline(always)]
    fn singular(
        &self,
        m: &'m Message,
        f: &FieldInfo,
    ) -> Result<Option<SrcValue<'m, &'m Message>>, Stashed> {
        match m.slot(pos(m, f)) {
            Slot::Unset | Slot::Lazy(_) => Ok(None),
            slot => self
                .slot_value(m, slot, f)
                .map(Some)
                .map_err(|e| self.stash(e)),
        }
    }

    #[inline(always)]
    fn entry(
        &self,
        m: &'m Message,
        f: &FieldInfo,
        i: usize,
    ) -> Result<(Scalar<'m>, SrcValue<'m, &'m Message>), Stashed> {
        self.get_entry(m, f, i).map_err(|e| self.stash(e))
    }

    fn unknown(&self, m: &'m Message) -> Result<&'m [u8], Stashed> {
        Ok(&m.unknown)
    }

    #[inline]
    fn numbers(&self, m: &'m Message, f: &FieldInfo) -> Result<Option<&'m [u64]>, Stashed> {
        let items = match m.slot(pos(m, f)) {
            Slot::List(l) => &self.list(l).map_err(|e| self.stash(e))?.items,
            Slot::Items(items) => &**items,
            _ => return Ok(None),
        };
        match items {
            Items::Nums(_, v) => {
                self.no_object();
                Ok(Some(v))
            }
            Items::Objs(_) => Ok(None),
        }
    }

    #[inline(always)]
    fn text(&self, m: &'m Message, f: &FieldInfo, i: usize) -> Result<Option<&'m [u8]>, Stashed> {
        if self.record {
            // A recording source hands on the object behind each value
            // (see `Given`): `singular` and `get` do that.
            return Ok(None);
        }
        let items = match m.slot(pos(m, f)) {
            &Slot::Span(off, len) if i == 0 => return Ok(Some(m.span(self.py, (off, len)))),
            Slot::Spans(v) => return Ok(v.get(i).map(|&sp| m.span(self.py, sp))),
            Slot::Val(o) if i == 0 => return Ok(text_of(o.bind(self.py), f.kind)),
            Slot::List(l) => &self.list(l).map_err(|e| self.stash(e))?.items,
            Slot::Items(items) => &**items,
            _ => return Ok(None),
        };
        // (`get` reports a value that is not there.)
        let Items::Objs(v) = items else {
            return Ok(None);
        };
        let Some(o) = v.get(i) else { return Ok(None) };
        Ok(text_of(o.bind(self.py), f.kind))
    }

    #[inline]
    fn entries(&self, m: &'m Message, f: &FieldInfo) -> Result<Option<View<'m, 'py>>, Stashed> {
        if self.record {
            // A recording source hands on the object behind each value
            // (see `Given`): `entry` does that.
            return Ok(None);
        }
        Ok(Some(match m.slot(pos(m, f)) {
            Slot::Pairs(p) => View::Parts(&p.entries, m, self.py),
            Slot::Map(l) => View::Objs(
                &self.map(l).map_err(|e| self.stash(e))?.data.entries,
                self.py,
            ),
            Slot::Entries(d) => View::Objs(&d.entries, self.py),
            _ => return Ok(None),
        }))
    }

    #[inline]
    fn texts(&self, m: &'m Message, f: &FieldInfo) -> Result<Option<Texts<'m, 'py>>, Stashed> {
        if self.record {
            // As in `text`.
            return Ok(None);
        }
        let items = match m.slot(pos(m, f)) {
            Slot::Spans(v) => return Ok(Some(Texts::Spans(v, m, self.py))),
            Slot::List(l) => &self.list(l).map_err(|e| self.stash(e))?.items,
            Slot::Items(items) => &**items,
            _ => return Ok(None),
        };
        Ok(match items {
            Items::Objs(v) => Some(Texts::Objs(v, f.kind, self.py)),
            Items::Nums(..) => None,
        })
    }

    #[inline(always)]
    fn messages(&self, m: &'m Message, pos: usize) -> Result<Option<Subs<'m>>, Stashed> {
        Ok(match m.slot(pos) {
            Slot::Subs(v) => Some(Subs(v)),
            _ => None,
        })
    }

    #[inline(always)]
    fn held(&self, m: &'m Message, pos: usize, kind: Kind) -> Result<Held<'m>, Stashed> {
        // Only the wire encoder reads values this way (`encode_planned`),
        // never with a recording source: printers that make Python values
        // read through `singular`, `get` and `entry`, which hand on the
        // object behind each value (see `Given`).
        debug_assert!(!self.record);
        Ok(match (m.slot(pos), kind) {
            (Slot::Unset, _) => Held::Unset,
            (&Slot::Num(n), _) => Held::Bits(n),
            (&Slot::Span(off, len), _) => Held::Text(m.span(self.py, (off, len))),
            (Slot::Val(o), Kind::String | Kind::Bytes) => match text_of(o.bind(self.py), kind) {
                Some(b) => Held::Text(b),
                None => Held::Other,
            },
            _ => Held::Other,
        })
    }

    #[inline(always)]
    fn number(&self, m: &'m Message, f: &FieldInfo) -> Result<Option<u64>, Stashed> {
        match m.slot(pos(m, f)) {
            Slot::Num(n) => {
                self.no_object();
                Ok(Some(*n))
            }
            _ => Ok(None),
        }
    }
}

impl<'py> Source<'py> {
    #[inline]
    fn get_value<'m>(
        &self,
        m: &'m Message,
        f: &FieldInfo,
        i: usize,
    ) -> PyResult<SrcValue<'m, &'m Message>>
    where
        'py: 'm,
    {
        let items = match m.slot(pos(m, f)) {
            Slot::List(l) => &self.list(l)?.items,
            Slot::Items(items) => &**items,
            Slot::Subs(v) => {
                let v = v
                    .get(i)
                    .ok_or_else(|| fail(EncodeKind::Mutated, "a repeated field changed".into()))?;
                return Ok(SrcValue::Message(v));
            }
            Slot::Spans(v) => {
                let &sp = v
                    .get(i)
                    .ok_or_else(|| fail(EncodeKind::Mutated, "a repeated field changed".into()))?;
                self.no_object();
                return Ok(SrcValue::Scalar(text_scalar(f.kind, m.span(self.py, sp))));
            }
            Slot::Raws(v) => {
                let &sp = v
                    .get(i)
                    .ok_or_else(|| fail(EncodeKind::Mutated, "a repeated field changed".into()))?;
                return Ok(SrcValue::Message(self.built(m, f.kind, sp)?));
            }
            slot => return self.slot_value(m, slot, f),
        };
        match items {
            Items::Objs(v) => {
                let v = v
                    .get(i)
                    .ok_or_else(|| fail(EncodeKind::Mutated, "a repeated field changed".into()))?;
                self.value(v, f, f.kind)
            }
            nums => {
                self.no_object();
                let s = nums
                    .scalar(i)
                    .ok_or_else(|| fail(EncodeKind::Mutated, "a repeated field changed".into()))?;
                Ok(SrcValue::Scalar(s))
            }
        }
    }

    /// The next scalars come from numbers kept natively: no object stands
    /// behind them for a recording source to hand on (see [`Given`]).
    #[inline(always)]
    fn no_object(&self) {
        if self.record {
            self.given.set(Given::None);
        }
    }

    /// The value of a singular field's slot (`Val`, `Num`, `Sub` or
    /// `Span`) of message `m`.
    #[inline(always)]
    fn slot_value<'m>(
        &self,
        m: &'m Message,
        slot: &'m Slot,
        f: &FieldInfo,
    ) -> PyResult<SrcValue<'m, &'m Message>>
    where
        'py: 'm,
    {
        match slot {
            Slot::Val(v) => self.value(v, f, f.kind),
            Slot::Num(n) => {
                self.no_object();
                let s = Scalar::from_bits(f.kind, *n).ok_or_else(|| {
                    fail(
                        EncodeKind::TypeMismatch,
                        format!("field {} holds a number", f.name),
                    )
                })?;
                Ok(SrcValue::Scalar(s))
            }
            Slot::Sub(sub) => Ok(SrcValue::Message(sub)),
            &Slot::Raw(off, len) => Ok(SrcValue::Message(self.built(m, f.kind, (off, len))?)),
            Slot::Span(off, len) => {
                self.no_object();
                Ok(SrcValue::Scalar(text_scalar(
                    f.kind,
                    m.span(self.py, (*off, *len)),
                )))
            }
            _ => Err(fail(
                EncodeKind::TypeMismatch,
                format!("field {} holds no single value", f.name),
            )),
        }
    }

    fn get_entry<'m>(
        &self,
        m: &'m Message,
        f: &FieldInfo,
        i: usize,
    ) -> PyResult<(Scalar<'m>, SrcValue<'m, &'m Message>)>
    where
        'py: 'm,
    {
        let data = match m.slot(pos(m, f)) {
            Slot::Map(l) => &self.map(l)?.data,
            Slot::Entries(d) => &**d,
            Slot::Pairs(p) => {
                let &(k, v) = p
                    .entries
                    .get(i)
                    .ok_or_else(|| fail(EncodeKind::Mutated, "a map field changed".into()))?;
                let (kk, vk) = m.entry_kinds(f);
                if let Part::Raw(off, len) = v {
                    let Some(k) = m.part_scalar(self.py, kk, k) else {
                        return Err(fail(EncodeKind::Mutated, "a map field changed".into()));
                    };
                    self.no_object();
                    return Ok((k, SrcValue::Message(self.built(m, vk, (off, len))?)));
                }
                if v == Part::Msg {
                    let (Some(k), Some(v)) = (m.part_scalar(self.py, kk, k), p.msgs.get(i)) else {
                        return Err(fail(EncodeKind::Mutated, "a map field changed".into()));
                    };
                    self.no_object();
                    return Ok((k, SrcValue::Message(v)));
                }
                let (Some(k), Some(v)) =
                    (m.part_scalar(self.py, kk, k), m.part_scalar(self.py, vk, v))
                else {
                    return Err(fail(
                        EncodeKind::TypeMismatch,
                        format!("map field {} holds a number of another kind", f.name),
                    ));
                };
                self.no_object();
                return Ok((k, SrcValue::Scalar(v)));
            }
            _ => {
                return Err(fail(
                    EncodeKind::TypeMismatch,
                    format!("field {} is not a map", f.name),
                ))
            }
        };
        let (k, v) = data
            .entries
            .get(i)
            .ok_or_else(|| fail(EncodeKind::Mutated, "a map field changed".into()))?;
        let Kind::Message(entry) = f.kind else {
            return Err(fail(
                EncodeKind::TypeMismatch,
                format!("field {} is not a map", f.name),
            ));
        };
        let ef = &m.s.tables.messages[entry as usize].fields;
        Ok((
            self.scalar(k, &ef[0], ef[0].kind)?,
            self.value(v, &ef[1], ef[1].kind)?,
        ))
    }
}

thread_local! {
    /// The buffer messages are encoded into, kept from call to call so that
    /// an encode allocates nothing but its `bytes` (see `encode_into`).
    static OUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The encode plans of the schemas written last, by schema id (see
    /// [`plans_for`]).
    static PLANS: RefCell<Vec<(u64, Rc<EncodePlans>)>> = const { RefCell::new(Vec::new()) };
}

/// How many schemas' plans a thread keeps.
const PLANS_KEPT: usize = 4;

/// The encode plans of schema `s`, made on its first write on this thread
/// and kept for the schemas written last. Each is keyed by its schema's
/// [`id`](crate::proto::state::schema::Schema::id), which no other schema
/// has, so a kept plan is never taken for a schema made after its own was
/// freed.
fn plans_for(s: &SchemaRef) -> Rc<EncodePlans> {
    PLANS.with(|kept| {
        let mut kept = kept.borrow_mut();
        if let Some(i) = kept.iter().position(|&(id, _)| id == s.id) {
            if i != 0 {
                kept.swap(0, i);
            }
            return kept[0].1.clone();
        }
        let plans = Rc::new(EncodePlans::new(&s.tables));
        if kept.len() == PLANS_KEPT {
            kept.pop();
        }
        kept.insert(0, (s.id, plans.clone()));
        plans
    })
}

/// A buffer kept for the next encode is let go above this size.
const KEEP_MAX: usize = 1 << 20;

/// The wire form of `m`.
pub fn to_bytes<'py>(
    m: &Bound<'py, PyMessage>,
    deterministic: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let py = m.py();
    let root = m.state().map_err(changing)?;
    let src = Source::new(py);
    let plans = plans_for(&root.s);
    let opts = EncodeOptions {
        deterministic,
        ..EncodeOptions::default()
    };
    OUT.with(|kept| {
        // Encoding runs no Python code, so no other encode on this thread
        // can hold the buffer; a fresh one would do if one did.
        let mut fresh = Vec::new();
        let mut guard = kept.try_borrow_mut().ok();
        let buf = guard.as_deref_mut().unwrap_or(&mut fresh);
        let r = encode_planned(&root.s.tables, &plans, root.ty, &*root, &src, opts, buf);
        let out = match r {
            Ok(start) => Ok(PyBytes::new(py, &buf[start..])),
            Err(EncodeFailure::Source(Stashed)) => Err(src.take_err()),
            Err(EncodeFailure::Encode(e)) => Err(write_error(py, &e)),
        };
        if buf.len() > KEEP_MAX {
            *buf = Vec::new();
        }
        out
    })
}

/// The text format of `m` (Google's `text_format.MessageToString`).
pub fn to_text(m: &Bound<'_, PyMessage>, opts: TextOptions) -> PyResult<String> {
    let py = m.py();
    let root = m.state().map_err(changing)?;
    let src = Source::new(py);
    match print_text(&root.s.tables, root.ty, &*root, &src, opts) {
        Ok(s) => Ok(s),
        Err(PrintFailure::Source(Stashed)) => Err(src.take_err()),
        Err(PrintFailure::Print(e)) => Err(write_error(py, &e)),
    }
}

/// What the wire encoder or a printer (text, JSON) could not write, as
/// `amber.EncodeError` of the error's kind (see [`EncodeKind::name`]),
/// with the field path when there is one.
pub(crate) fn write_error(py: Python<'_>, e: &EncodeError) -> PyErr {
    let path = (!e.path.is_empty()).then(|| e.path.clone());
    errors::make(
        py,
        errors::encode_error(py),
        e.kind.name(),
        e.to_string(),
        None,
        path,
        None,
    )
}
