//! Iterating a dict's pairs in insertion order.
//!
//! On CPython 3.11 to 3.13 a combined-table dict is walked through its entry
//! array directly (its layout, from `Include/internal/pycore_dict.h`, is the
//! same in those versions); elsewhere, and for split tables, `PyDict_Next`.
//! Python code may run between two pairs (a hook), so each step re-checks
//! that the dict still holds the same keys object before reading from it.

use pyo3::ffi;

#[cfg(all(Py_3_11, not(Py_3_14), not(Py_GIL_DISABLED)))]
mod layout {
    /// `struct _dictkeysobject` up to its flexible `dk_indices` array.
    #[repr(C)]
    pub struct DictKeys {
        pub dk_refcnt: isize,
        pub dk_log2_size: u8,
        pub dk_log2_index_bytes: u8,
        pub dk_kind: u8,
        pub dk_version: u32,
        pub dk_usable: isize,
        pub dk_nentries: isize,
    }
    pub const DICT_KEYS_GENERAL: u8 = 0;
    pub const DICT_KEYS_SPLIT: u8 = 2;
}

pub struct DictIter {
    pos: ffi::Py_ssize_t,
    #[cfg(all(Py_3_11, not(Py_3_14), not(Py_GIL_DISABLED)))]
    fast: Option<Fast>,
}

#[cfg(all(Py_3_11, not(Py_3_14), not(Py_GIL_DISABLED)))]
struct Fast {
    keys: *mut ffi::PyDictKeysObject,
    entries: *const *mut ffi::PyObject,
    /// Pointers per entry: 2 for str-keyed tables, 3 (hash first) otherwise.
    stride: usize,
    key_at: usize,
    n: usize,
}

/// The dict changed size or storage while being walked.
pub struct Changed;

impl DictIter {
    /// # Safety
    /// `d` must be a dict (or subclass) that stays alive while iterating.
    #[inline(always)]
    pub unsafe fn new(d: *mut ffi::PyObject) -> DictIter {
        #[cfg(all(Py_3_11, not(Py_3_14), not(Py_GIL_DISABLED)))]
        {
            use layout::*;
            let dict = d as *mut ffi::PyDictObject;
            let (keys, values) = unsafe { ((*dict).ma_keys, (*dict).ma_values) };
            let k = keys as *const DictKeys;
            let fast = if values.is_null() && unsafe { (*k).dk_kind } != DICT_KEYS_SPLIT {
                let general = unsafe { (*k).dk_kind } == DICT_KEYS_GENERAL;
                let indices = unsafe { (k as *const u8).add(std::mem::size_of::<DictKeys>()) };
                let entries = unsafe { indices.add(1usize << (*k).dk_log2_index_bytes) };
                Some(Fast {
                    keys,
                    entries: entries as *const *mut ffi::PyObject,
                    stride: if general { 3 } else { 2 },
                    key_at: if general { 1 } else { 0 },
                    n: unsafe { (*k).dk_nentries } as usize,
                })
            } else {
                None
            };
            DictIter { pos: 0, fast }
        }
        #[cfg(not(all(Py_3_11, not(Py_3_14), not(Py_GIL_DISABLED))))]
        {
            let _ = d;
            DictIter { pos: 0 }
        }
    }

    /// The next pair (borrowed references), `Ok(None)` at the end.
    ///
    /// # Safety
    /// `d` must be the dict given to `new`.
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    pub unsafe fn next(
        &mut self,
        d: *mut ffi::PyObject,
    ) -> Result<Option<(*mut ffi::PyObject, *mut ffi::PyObject)>, Changed> {
        #[cfg(all(Py_3_11, not(Py_3_14), not(Py_GIL_DISABLED)))]
        if let Some(f) = &self.fast {
            if unsafe { (*(d as *mut ffi::PyDictObject)).ma_keys } != f.keys {
                return Err(Changed);
            }
            while (self.pos as usize) < f.n {
                let e = unsafe { f.entries.add(self.pos as usize * f.stride) };
                self.pos += 1;
                let (k, v) = unsafe { (*e.add(f.key_at), *e.add(f.key_at + 1)) };
                if !v.is_null() {
                    return Ok(Some((k, v)));
                }
            }
            return Ok(None);
        }
        let mut k: *mut ffi::PyObject = std::ptr::null_mut();
        let mut v: *mut ffi::PyObject = std::ptr::null_mut();
        if unsafe { ffi::PyDict_Next(d, &mut self.pos, &mut k, &mut v) } != 0 {
            Ok(Some((k, v)))
        } else {
            Ok(None)
        }
    }
}
