//! The walk: one frame, and one item dispatched on its exact type (the hot
//! types inline) or through the per-type cache to its family's method.

use super::*;

impl<'py> Encoder<'py> {
    /// Encode `obj` as one frame appended to `self.out`.
    pub(super) fn frame(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<()> {
        self.frame_start = w::begin_frame(&mut self.out);
        match self.item(obj.into()) {
            Ok(()) if self.out.failed() => Err(out_of_memory(self.out.len())),
            Ok(()) => {
                w::finish_frame(&mut self.out, self.frame_start);
                Ok(())
            }
            Err(e) => Err(self.to_pyerr(*e)),
        }
    }

    /// Run `f`, which writes child items, one level deeper: the same tags
    /// count as levels here as in the decoder, so a frame written within a
    /// limit always reads within it. The stack grows on demand.
    #[inline(always)]
    pub(crate) fn nested(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        if self.out.failed() {
            return Err(Box::new(EncErr::from(out_of_memory(self.out.len()))));
        }
        if self.depth >= self.opts.max_depth {
            return Err(Box::new(EncErr {
                fail: Fail::Msg(
                    EncodeKind::Limit,
                    format!(
                        "objects nested deeper than max_depth={}",
                        self.opts.max_depth
                    ),
                ),
                path: vec![],
                chain: vec![],
                depth_exceeded: true,
            }));
        }
        self.depth += 1;
        let r = amber_core::bytes::stack::descend(
            self.depth,
            || f(self),
            || {
                Box::new(EncErr::from(PyMemoryError::new_err(
                    "out of memory for the stack of nested objects",
                )))
            },
        );
        self.depth -= 1;
        r
    }

    /// An immutable value that may be shared (bytes, arrays): memo after
    /// writing.
    pub(crate) fn shared_leaf(&mut self, o: Borrowed<'_>, body: impl FnOnce(&mut Self) -> R) -> R {
        let memo = self.memo_before(o, false);
        match memo {
            Memo::Done => Ok(()),
            Memo::Plain => body(self),
            Memo::Shared(at) => {
                body(self)?;
                // Only an array can reach itself (through its dtype's
                // metadata), and REPLACE cannot stand before an array.
                if self.memo.contains_key(&(o.ptr() as usize)) {
                    return fail(
                        EncodeKind::Cycle,
                        "the value refers to itself (through an array's dtype metadata or a \
                         table's attrs); amber cannot encode this cycle",
                    );
                }
                self.memo_after_immutable(o, at);
                Ok(())
            }
        }
    }

    /// Encode any object.
    #[inline(always)]
    pub(crate) fn item(&mut self, o: Borrowed<'_>) -> R {
        match self.atom(o) {
            Some(r) => r,
            None => self.compound(&o.to_owned()),
        }
    }

    /// Atoms (str, int, float, None, bool) inline in the caller's loop;
    /// `None` for anything else, and for ints beyond 64 bits. Atoms run no
    /// Python code, so `o` may be lent under a `NoCode` token.
    #[inline(always)]
    pub(super) fn atom(&mut self, o: Borrowed<'_>) -> Option<R> {
        if let Some(s) = o.exact_str() {
            Some(self.str(s, strings::MAX_VALUE_LEN, false))
        } else if let Some(i) = o.exact_int() {
            self.int(i)
        } else if let Some(f) = o.exact_float() {
            w::write_float(&mut self.out, f);
            Some(Ok(()))
        } else if o.is_none() {
            w::write_none(&mut self.out);
            Some(Ok(()))
        } else if o.is_exactly(&raw mut ffi::PyBool_Type) {
            w::write_bool(&mut self.out, o.is_true());
            Some(Ok(()))
        } else {
            None
        }
    }

    /// Everything but atoms, out of line: containers recurse through here.
    /// `held` is a reference the caller took for this walk alone, which
    /// keeps the object alive whatever Python code runs meanwhile (and
    /// which `memo_before` does not count).
    #[inline(never)]
    pub(super) fn compound(&mut self, held: &Obj) -> R {
        let o = held.borrowed();
        if let Some(d) = o.exact_dict() {
            self.dict(d)
        } else if let Some(l) = o.exact_list() {
            self.list(l)
        } else if let Some(t) = o.exact_tuple() {
            self.tuple(t)
        } else if o.is_exactly(&raw mut ffi::PyLong_Type) {
            self.bigint(o)
        } else {
            self.other(o)
        }
    }

    /// Encode `o` alone into a buffer of its own, as a set item in
    /// deterministic mode: with the string and shape tables, sharing and
    /// out-of-band buffers off, its bytes do not depend on where they land.
    pub(crate) fn detached(&mut self, o: Borrowed<'_>) -> R<Vec<u8>> {
        let outer = std::mem::replace(&mut self.out, w::Out::new());
        let strings = self.strings.suspend();
        let lookups = self.shapes.suspend();
        self.scratch += 1;
        let r = self.item(o);
        self.scratch -= 1;
        self.shapes.resume(lookups);
        self.strings.resume(strings);
        let inner = std::mem::replace(&mut self.out, outer);
        if inner.failed() {
            return Err(Box::new(EncErr::from(out_of_memory(inner.len()))));
        }
        r.map(|()| inner.as_slice().to_vec())
    }

    /// Fails inside a detached item: array data is aligned to its place in
    /// the frame, which a detached item does not know.
    pub(crate) fn aligned_data_here(&self) -> R {
        if self.scratch > 0 {
            return fail(
                EncodeKind::Unsupported,
                "deterministic=True cannot order a set whose items hold arrays or tables",
            );
        }
        Ok(())
    }

    /// Identity mode bookkeeping before writing a container, as dispatched
    /// by `compound`. One that no other object refers to (a count of 2: one
    /// reference from its container, one `compound` was given for the walk)
    /// cannot be met again, and is written plainly; met again through a
    /// cycle while it is walked, it counts the walk's reference too.
    #[inline(always)]
    pub(crate) fn memo_before(&mut self, o: Borrowed<'_>, mutable: bool) -> Memo {
        if !self.opts.identity || self.scratch > 0 || o.refcnt() <= 2 {
            return Memo::Plain;
        }
        if let Some(&i) = self.memo.get(&(o.ptr() as usize)) {
            w::write_memo_ref(&mut self.out, i);
            return Memo::Done;
        }
        let at = w::write_share(&mut self.out);
        if mutable {
            self.memo_insert(o);
        }
        Memo::Shared(at)
    }

    pub(super) fn memo_insert(&mut self, o: Borrowed<'_>) {
        let i = self.memo_keep.len();
        // The reference keeps `o`, and so its address in `memo`, for the
        // whole frame.
        self.memo_keep.push(o.to_owned());
        self.memo.insert(o.ptr() as usize, i);
    }

    /// Identity mode bookkeeping after writing an immutable container that
    /// got a SHARE marker at `at`. If a cycle through its contents already
    /// wrote and registered it, the outer copy is wrapped in REPLACE.
    pub(crate) fn memo_after_immutable(&mut self, o: Borrowed<'_>, at: usize) {
        match self.memo.get(&(o.ptr() as usize)) {
            None => self.memo_insert(o),
            Some(&i) => w::replace_share(&mut self.out, at, i),
        }
    }
}
