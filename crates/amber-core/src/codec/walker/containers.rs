//! Containers: lists, tuples, sets, deques, dicts of every kind, and dict
//! shapes (SHAPE_DEF, SHAPED).

use super::{Build, DecodeError, DictKind, PathSeg, Res, SeqKind, Walker};
use crate::bytes::path::key_segment;
use crate::codec::format as f;

impl<B: Build> Walker<'_, '_, B> {
    /// LIST, SET, TUPLE and FROZENSET after the tag; `true` when the value
    /// was registered in the memo before its items (mutable and shared).
    pub(super) fn sequence(&mut self, t: u8, shared: bool, at: usize) -> Res<(B::V, bool), B::Err> {
        let n = self.r.count("item count", 1)?;
        let kind = match t {
            f::LIST => SeqKind::List,
            f::SET => SeqKind::Set,
            f::TUPLE => SeqKind::Tuple,
            _ => SeqKind::FrozenSet,
        };
        let early = shared && matches!(kind, SeqKind::List | SeqKind::Set);
        Ok((self.seq(kind, n, early, at)?, early))
    }

    /// DICT, ORDERED_DICT, COUNTER and DEFAULTDICT after the tag.
    pub(super) fn mapping(&mut self, t: u8, shared: bool, at: usize) -> Res<B::V, B::Err> {
        let kind = match t {
            f::DICT => DictKind::Dict,
            f::ORDERED_DICT => DictKind::Ordered,
            f::COUNTER => DictKind::Counter,
            _ => {
                let code = self.r.u8("defaultdict factory")?;
                if code as usize >= f::DEFAULT_FACTORIES.len() {
                    return Err(DecodeError::reserved(
                        at + 1,
                        format_args!("defaultdict factory code {code}"),
                    ));
                }
                DictKind::Default(code)
            }
        };
        let n = self.r.count("pair count", 2)?;
        self.dict(kind, n, shared, at)
    }

    /// SHAPE_DEF and SHAPED after the tag.
    pub(super) fn shape(&mut self, t: u8, shared: bool, at: usize) -> Res<B::V, B::Err> {
        if t == f::SHAPE_DEF {
            let n = self.r.count("pair count", 2)?;
            self.nested(at, |w| w.shape_def(n, shared, at))
        } else {
            let s = self.index("shape index")?;
            self.nested(at, |w| w.shaped(s, shared, at))
        }
    }

    /// DEQUE after the tag: maxlen, then the items.
    pub(super) fn deque(&mut self, shared: bool, at: usize) -> Res<B::V, B::Err> {
        self.nested(at, |w| {
            let maxlen = w.item()?;
            let n = w.r.count("item count", 1)?;
            let d = build!(w, at, w.b.deque_begin(maxlen))?;
            if shared {
                w.memo.push(d.clone());
            }
            w.fill_seq(&d, SeqKind::Deque, n)?;
            Ok(d)
        })
    }

    pub(super) fn seq(
        &mut self,
        kind: SeqKind,
        n: usize,
        shared: bool,
        at: usize,
    ) -> Res<B::V, B::Err> {
        let kind = if shared && kind == SeqKind::List {
            SeqKind::SharedList
        } else {
            kind
        };
        self.nested(at, |w| {
            let s = build!(w, at, w.b.seq_begin(kind, n))?;
            if shared {
                w.memo.push(s.clone());
            }
            w.fill_seq(&s, kind, n)?;
            build!(w, at, w.b.seq_end(s, kind))
        })
    }

    #[inline(always)]
    fn fill_seq(&mut self, s: &B::V, kind: SeqKind, n: usize) -> Res<(), B::Err> {
        for i in 0..n {
            let at = self.r.pos();
            let item = self.item().map_err(|e| e.within(PathSeg::Index(i)))?;
            self.b
                .seq_item(s, kind, i, item)
                .map_err(|e| DecodeError::build(at, e).within(PathSeg::Index(i)))?;
        }
        Ok(())
    }

    pub(super) fn dict(
        &mut self,
        kind: DictKind,
        n: usize,
        shared: bool,
        at: usize,
    ) -> Res<B::V, B::Err> {
        self.nested(at, |w| w.dict_body(kind, n, shared, at))
    }

    fn dict_body(
        &mut self,
        kind: DictKind,
        n: usize,
        shared: bool,
        at: usize,
    ) -> Res<B::V, B::Err> {
        let d = build!(self, at, self.b.dict_begin(kind, n))?;
        if shared {
            self.memo.push(d.clone());
        }
        for i in 0..n {
            let kat = self.r.pos();
            let k = self
                .item()
                .map_err(|e| e.within(PathSeg::Key(format!("[<key {i}>]"))))?;
            let v = match self.item() {
                Ok(v) => v,
                Err(e) => return Err(e.within(self.key_seg(&k, i))),
            };
            if let Err(e) = self.b.dict_item(&d, k.clone(), v) {
                let seg = self.key_seg(&k, i);
                return Err(DecodeError::build(kat, e).within(seg));
            }
        }
        Ok(d)
    }

    /// SHAPE_DEF after its pair count: the keys, which become the next
    /// shape, then a value for each.
    fn shape_def(&mut self, n: usize, shared: bool, at: usize) -> Res<B::V, B::Err> {
        let d = build!(self, at, self.b.dict_begin(DictKind::Dict, n))?;
        if shared {
            self.memo.push(d.clone());
        }
        let start = self.shape_keys.len();
        for i in 0..n {
            let k = self
                .item()
                .map_err(|e| e.within(PathSeg::Key(format!("[<key {i}>]"))))?;
            self.shape_keys.push(k);
        }
        self.shapes.push((start, n));
        self.shape_values(&d, start, n)?;
        Ok(d)
    }

    /// SHAPED after its tag: a dict with the keys of shape `s`.
    fn shaped(&mut self, s: usize, shared: bool, at: usize) -> Res<B::V, B::Err> {
        let Some(&(start, n)) = self.shapes.get(s) else {
            return Err(DecodeError::malformed(
                at,
                format!(
                    "shape reference {s} but only {} shapes are defined",
                    self.shapes.len()
                ),
            ));
        };
        // One byte at least per value: refuse before sizing the dict.
        if self.r.remaining() < n {
            return Err(DecodeError::malformed(
                self.r.pos(),
                format!(
                    "truncated: shape {s} has {n} keys but only {} bytes are left for the values",
                    self.r.remaining()
                ),
            ));
        }
        let d = build!(self, at, self.b.dict_begin(DictKind::Dict, n))?;
        if shared {
            self.memo.push(d.clone());
        }
        self.shape_values(&d, start, n)?;
        Ok(d)
    }

    /// The values of a dict whose keys are `shape_keys[start..start + n]`.
    fn shape_values(&mut self, d: &B::V, start: usize, n: usize) -> Res<(), B::Err> {
        for i in start..start + n {
            let vat = self.r.pos();
            let v = match self.item() {
                Ok(v) => v,
                Err(e) => return Err(e.within(self.key_seg(&self.shape_keys[i], i - start))),
            };
            let k = self.shape_keys[i].clone();
            if let Err(e) = self.b.dict_item(d, k, v) {
                let seg = self.key_seg(&self.shape_keys[i], i - start);
                return Err(DecodeError::build(vat, e).within(seg));
            }
        }
        Ok(())
    }

    #[cold]
    fn key_seg(&self, k: &B::V, i: usize) -> PathSeg {
        match self.b.key_str(k) {
            Some(s) => PathSeg::Key(key_segment(&s)),
            None => PathSeg::Key(format!("[<key {i}>]")),
        }
    }
}
