//! The walk: one frame, and one item dispatched on its exact type (the hot
//! types inline) or through the per-type cache to its family's method.

use super::*;

impl<'py> Encoder<'py> {
    /// Encode `obj` as one frame appended to `self.out`.
    pub(super) fn frame(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<()> {
        self.frame_start = w::begin_frame(&mut self.out);
        // SAFETY: `obj` is live, held by its Bound for the whole encode.
        match unsafe { self.item(obj.as_ptr()) } {
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
    pub(crate) unsafe fn shared_leaf(
        &mut self,
        o: *mut ffi::PyObject,
        body: impl FnOnce(&mut Self) -> R,
    ) -> R {
        // SAFETY: the caller's `o` is live.
        let memo = unsafe { self.memo_before(o, false) };
        match memo {
            Memo::Done => Ok(()),
            Memo::Plain => body(self),
            Memo::Shared(at) => {
                body(self)?;
                // Only an array can reach itself (through its dtype's
                // metadata), and REPLACE cannot stand before an array.
                if self.memo.contains_key(&(o as usize)) {
                    return fail(
                        EncodeKind::Cycle,
                        "the value refers to itself (through an array's dtype metadata or a \
                         table's attrs); amber cannot encode this cycle",
                    );
                }
                // SAFETY: the caller's `o` is live.
                unsafe { self.memo_after_immutable(o, at) };
                Ok(())
            }
        }
    }

    /// Encode any object.
    #[inline(always)]
    pub(crate) unsafe fn item(&mut self, o: *mut ffi::PyObject) -> R {
        // SAFETY: `o` is live (this function's contract).
        match unsafe { self.atom(o) } {
            Some(r) => r,
            // SAFETY: as above.
            None => unsafe { self.compound(o) },
        }
    }

    /// Atoms (str, int, float, None, bool) inline in the caller's loop;
    /// `None` for anything else. Atoms run no Python code.
    #[inline(always)]
    pub(super) unsafe fn atom(&mut self, o: *mut ffi::PyObject) -> Option<R> {
        // SAFETY: `o` is live (this function's contract).
        let t = unsafe { ffi::Py_TYPE(o) };
        // SAFETY: `o` is live and each branch treats it as the exact type
        // just compared; the singletons are only compared by address.
        unsafe {
            if t == &raw mut ffi::PyUnicode_Type {
                Some(self.str(o, strings::MAX_VALUE_LEN, false))
            } else if t == &raw mut ffi::PyLong_Type {
                Some(self.int(o))
            } else if t == &raw mut ffi::PyFloat_Type {
                w::write_float(&mut self.out, ffi::PyFloat_AS_DOUBLE(o));
                Some(Ok(()))
            } else if o == ffi::Py_None() {
                w::write_none(&mut self.out);
                Some(Ok(()))
            } else if t == &raw mut ffi::PyBool_Type {
                w::write_bool(&mut self.out, o == ffi::Py_True());
                Some(Ok(()))
            } else {
                None
            }
        }
    }

    /// Everything but atoms, out of line: containers recurse through here.
    #[inline(never)]
    pub(super) unsafe fn compound(&mut self, o: *mut ffi::PyObject) -> R {
        // SAFETY: `o` is live (this function's contract).
        let t = unsafe { ffi::Py_TYPE(o) };
        // SAFETY: each handler gets a live object of exactly its type.
        unsafe {
            if t == &raw mut ffi::PyDict_Type {
                self.dict(o)
            } else if t == &raw mut ffi::PyList_Type {
                self.list(o)
            } else if t == &raw mut ffi::PyTuple_Type {
                self.tuple(o)
            } else {
                self.other(o, t)
            }
        }
    }

    /// Encode `o` alone into a buffer of its own, as a set item in
    /// deterministic mode: with the string and shape tables, sharing and
    /// out-of-band buffers off, its bytes do not depend on where they land.
    ///
    /// # Safety
    /// `o` is a live object.
    pub(crate) unsafe fn detached(&mut self, o: *mut ffi::PyObject) -> R<Vec<u8>> {
        let outer = std::mem::replace(&mut self.out, w::Out::new());
        let strings = self.strings.suspend();
        let lookups = self.shapes.suspend();
        self.scratch += 1;
        // SAFETY: `o` is live (this function's contract).
        let r = unsafe { self.item(o) };
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

    /// Identity mode bookkeeping before writing a container.
    #[inline(always)]
    pub(crate) unsafe fn memo_before(&mut self, o: *mut ffi::PyObject, mutable: bool) -> Memo {
        // SAFETY: the caller's `o` is live.
        if !self.opts.identity || self.scratch > 0 || unsafe { ffi::Py_REFCNT(o) } <= 1 {
            return Memo::Plain;
        }
        if let Some(&i) = self.memo.get(&(o as usize)) {
            w::write_memo_ref(&mut self.out, i);
            return Memo::Done;
        }
        let at = w::write_share(&mut self.out);
        if mutable {
            // SAFETY: as above.
            unsafe { self.memo_insert(o) };
        }
        Memo::Shared(at)
    }

    /// # Safety
    /// `o` is a live object.
    pub(super) unsafe fn memo_insert(&mut self, o: *mut ffi::PyObject) {
        let i = self.memo_keep.len();
        // SAFETY: `o` is live (this function's contract); the reference
        // keeps it, and so its address in `memo`, for the whole frame.
        self.memo_keep.push(unsafe { Obj::from_borrowed(o) });
        self.memo.insert(o as usize, i);
    }

    /// Identity mode bookkeeping after writing an immutable container that
    /// got a SHARE marker at `at`. If a cycle through its contents already
    /// wrote and registered it, the outer copy is wrapped in REPLACE.
    ///
    /// # Safety
    /// `o` is a live object.
    pub(crate) unsafe fn memo_after_immutable(&mut self, o: *mut ffi::PyObject, at: usize) {
        match self.memo.get(&(o as usize)) {
            // SAFETY: `o` is live (this function's contract).
            None => unsafe { self.memo_insert(o) },
            Some(&i) => w::replace_share(&mut self.out, at, i),
        }
    }
}
