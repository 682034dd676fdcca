//! Reading dicts in place: their size, and (`Table`) their entries in
//! insertion order.
//!
//! On CPython 3.11 to 3.15 (with the GIL) a combined-table dict is read
//! through its entry array (its layout, from `Include/internal/pycore_dict.h`,
//! is the same in those versions; `build.rs` sets `amber_dict_table`), which
//! is several times cheaper per pair than `PyDict_Next`. Callers fall back to
//! `PyDict_Next` where `Table::of` gives `None` and on other versions.
//!
//! Python code may run between two pairs (a hook, or another thread while
//! that code runs), so callers check `Table::current` after any step that
//! may run it. On 3.11 to 3.13 the dict's version tag, which CPython changes
//! on every insertion, deletion, replacement and clear, tells whether the
//! table and every entry in it are as they were. CPython 3.14 removed the
//! tag: there `current` checks that the dict still holds the same keys
//! object (the same address, size class, kind, entry count and item count),
//! which is what makes reading entry `i` of it sound: a table that was
//! freed and replaced by another at the same address is then the dict's
//! live table, laid out as the one read. What it cannot see is a value
//! replaced in place, which callers read again after Python code runs, as
//! they do on the `PyDict_Next` path, and such a replacement table holding
//! other keys: the walk over a dict written as a shape checks each key
//! against the shape's once Python code has run (`Encoder::dict_entries`).

use pyo3::ffi;

/// `struct _dictkeysobject` up to its flexible `dk_indices` array.
#[cfg(amber_dict_table)]
#[repr(C)]
struct DictKeys {
    dk_refcnt: isize,
    dk_log2_size: u8,
    dk_log2_index_bytes: u8,
    dk_kind: u8,
    dk_version: u32,
    dk_usable: isize,
    dk_nentries: isize,
}

#[cfg(amber_dict_table)]
const DICT_KEYS_GENERAL: u8 = 0;
#[cfg(amber_dict_table)]
const DICT_KEYS_SPLIT: u8 = 2;

#[cfg(amber_dict_table)]
pub struct Table {
    entries: *const *mut ffi::PyObject,
    /// Pointers per entry: 2 for str-keyed tables, 3 (hash first) otherwise.
    stride: usize,
    key_at: usize,
    /// Entries in use or deleted (deleted ones have a null value).
    pub n: usize,
    /// What `current` compares: the dict's version tag when the table was
    /// read, or (without one) the table itself.
    seen: Seen,
}

/// The dict's state when its table was read (see the module's text).
#[cfg(amber_dict_table)]
#[derive(PartialEq, Eq)]
struct Seen {
    #[cfg(amber_dict_version_tag)]
    version: u64,
    #[cfg(not(amber_dict_version_tag))]
    keys: *const DictKeys,
    #[cfg(not(amber_dict_version_tag))]
    log2_index_bytes: u8,
    #[cfg(not(amber_dict_version_tag))]
    kind: u8,
    #[cfg(not(amber_dict_version_tag))]
    nentries: isize,
    #[cfg(not(amber_dict_version_tag))]
    used: isize,
}

/// The state `current` compares, read from a live dict and its keys object.
///
/// # Safety
/// `dict` must point to a live dict and `k` to its keys object.
#[cfg(amber_dict_table)]
#[inline(always)]
unsafe fn seen(dict: *mut ffi::PyDictObject, k: *const DictKeys) -> Seen {
    #[cfg(amber_dict_version_tag)]
    {
        let _ = k;
        // SAFETY: `dict` is live (the caller's contract).
        let version = unsafe { version(dict) };
        Seen { version }
    }
    #[cfg(not(amber_dict_version_tag))]
    // SAFETY: `dict` and its keys object `k` are live (the caller's
    // contract).
    unsafe {
        Seen {
            keys: k,
            log2_index_bytes: (*k).dk_log2_index_bytes,
            kind: (*k).dk_kind,
            nentries: (*k).dk_nentries,
            used: (*dict).ma_used,
        }
    }
}

#[cfg(amber_dict_table)]
impl Table {
    /// The entry table of `d`, or `None` for a split table.
    ///
    /// # Safety
    /// `d` must be a dict (or subclass).
    #[inline(always)]
    pub unsafe fn of(d: *mut ffi::PyObject) -> Option<Table> {
        let dict = d as *mut ffi::PyDictObject;
        // SAFETY: `d` is a live dict (the caller's contract), so its object
        // struct, laid out as `PyDictObject`, can be read.
        let (keys, values) = unsafe { ((*dict).ma_keys, (*dict).ma_values) };
        let k = keys as *const DictKeys;
        // SAFETY: every dict has a keys object, laid out as `DictKeys` on
        // the versions this is compiled for.
        let kind = unsafe { (*k).dk_kind };
        if !values.is_null() || kind == DICT_KEYS_SPLIT {
            return None;
        }
        let general = kind == DICT_KEYS_GENERAL;
        // SAFETY: the index array follows the header in the same
        // allocation, and the entry array follows its
        // `1 << dk_log2_index_bytes` bytes (`DK_ENTRIES` in CPython).
        let indices = unsafe { (k as *const u8).add(std::mem::size_of::<DictKeys>()) };
        // SAFETY: as above.
        let entries = unsafe { indices.add(1usize << (*k).dk_log2_index_bytes) };
        Some(Table {
            entries: entries as *const *mut ffi::PyObject,
            stride: if general { 3 } else { 2 },
            key_at: if general { 1 } else { 0 },
            // SAFETY: the keys object is live (read above).
            n: unsafe { (*k).dk_nentries } as usize,
            // SAFETY: `dict` and its keys object are live.
            seen: unsafe { seen(dict, k) },
        })
    }

    /// Whether `d` is unchanged since `of` read it: same table, same
    /// entries (Python code may have changed or resized it).
    ///
    /// # Safety
    /// `d` must be the dict given to `of`, still alive.
    #[inline(always)]
    pub unsafe fn current(&self, d: *mut ffi::PyObject) -> bool {
        let dict = d as *mut ffi::PyDictObject;
        // Every change that replaces the table (a resize, a clear) or an
        // entry bumps the version.
        #[cfg(amber_dict_version_tag)]
        // SAFETY: `d` is the live dict given to `of` (the caller's contract).
        return unsafe { version(dict) } == self.seen.version;
        #[cfg(not(amber_dict_version_tag))]
        {
            // SAFETY: `d` is the live dict given to `of` (the caller's
            // contract); its keys object is the one it holds now.
            let (keys, values) = unsafe { ((*dict).ma_keys as *const DictKeys, (*dict).ma_values) };
            // A split table keeps its values outside the keys object.
            // SAFETY: `dict` and `keys`, its keys object, are live.
            values.is_null() && unsafe { seen(dict, keys) } == self.seen
        }
    }

    /// Where the first entry's key is, and the distance in pointers from
    /// one entry's key to the next.
    #[inline(always)]
    pub fn keys(&self) -> (*const *mut ffi::PyObject, usize) {
        // SAFETY: `key_at` (0 or 1) is inside the first entry slot, which
        // every entry array has (CPython allocates at least 8).
        (unsafe { self.entries.add(self.key_at) }, self.stride)
    }

    /// Key and value of entry `i` (borrowed); the value is null for a
    /// deleted entry.
    ///
    /// # Safety
    /// `i < self.n`, and the table must be current.
    #[inline(always)]
    pub unsafe fn entry(&self, i: usize) -> (*mut ffi::PyObject, *mut ffi::PyObject) {
        // SAFETY: `i < n` entries of `stride` pointers each, in the array
        // `of` found, which is current (the caller's contract).
        let e = unsafe { self.entries.add(i * self.stride + self.key_at) };
        // SAFETY: as above: the key and, next to it, the value.
        unsafe { (*e, *e.add(1)) }
    }
}

/// The version tag of `dict` (PEP 509; still maintained, though deprecated,
/// in 3.12 and 3.13). There its low bits also hold watcher flags: a dict that
/// starts being watched meanwhile reads as changed, which errs on the safe
/// side.
///
/// # Safety
/// `dict` must point to a live dict.
#[cfg(amber_dict_version_tag)]
#[inline(always)]
#[allow(deprecated)]
unsafe fn version(dict: *mut ffi::PyDictObject) -> u64 {
    // SAFETY: `dict` is live (the caller's contract).
    unsafe { (*dict).ma_version_tag }
}

/// The number of pairs of a dict (or subclass), read in place.
///
/// # Safety
/// `o` must be a live dict or dict subclass.
#[inline(always)]
pub unsafe fn len(o: *mut ffi::PyObject) -> usize {
    // SAFETY: `o` is a live dict (the caller's contract), whose struct
    // starts as `PyDictObject` on every version.
    unsafe { (*(o as *mut ffi::PyDictObject)).ma_used as usize }
}

/// Call `f` with each key and value of `d` in order, without a list of the
/// pairs made first. `f` may run Python code that changes `d`: the pair
/// it is given is held for the call, `PyDict_Next` checks its position
/// against the dict as it is, and a change of size raises `RuntimeError`
/// as Python's own dict iterators do.
pub fn for_each_pair<'py>(
    d: &pyo3::Bound<'py, pyo3::types::PyDict>,
    mut f: impl FnMut(
        &pyo3::Bound<'py, pyo3::PyAny>,
        &pyo3::Bound<'py, pyo3::PyAny>,
    ) -> pyo3::PyResult<()>,
) -> pyo3::PyResult<()> {
    use pyo3::types::PyDictMethods;
    let py = d.py();
    let n = d.len();
    let mut pos: ffi::Py_ssize_t = 0;
    let mut k: *mut ffi::PyObject = std::ptr::null_mut();
    let mut v: *mut ffi::PyObject = std::ptr::null_mut();
    // SAFETY: `d` is a live dict (the `Bound` holds it) and the GIL is held
    // (the `Python` token); PyDict_Next checks `pos` against the dict as it
    // is at each call and gives borrowed references, which the two
    // `from_borrowed_ptr` take new references to before any code runs.
    while unsafe { ffi::PyDict_Next(d.as_ptr(), &mut pos, &mut k, &mut v) } != 0 {
        // SAFETY: as above: `k` and `v` are live, borrowed from `d`.
        let (key, value) = unsafe {
            (
                pyo3::Bound::from_borrowed_ptr(py, k),
                pyo3::Bound::from_borrowed_ptr(py, v),
            )
        };
        f(&key, &value)?;
        if d.len() != n {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "dictionary changed size during iteration",
            ));
        }
    }
    Ok(())
}

// `_PyDict_NewPresized` is private (pyo3-ffi leaves it out) but exported by
// every CPython this module builds for; it is what CPython's own
// `BUILD_MAP` and `dict.fromkeys` use.
extern "C" {
    fn _PyDict_NewPresized(minused: ffi::Py_ssize_t) -> *mut ffi::PyObject;
}

/// A new reference to an empty dict with room for `n` items without
/// growing, or NULL with an exception set.
///
/// # Safety
/// The calling thread must be attached to the interpreter (hold the GIL).
#[inline(always)]
pub unsafe fn new_presized_raw(n: usize) -> *mut ffi::PyObject {
    // SAFETY: the caller is attached; the call takes no pointers.
    unsafe { _PyDict_NewPresized(n as ffi::Py_ssize_t) }
}

/// A new empty dict with room for `n` items without growing.
pub fn new_presized(
    py: pyo3::Python<'_>,
    n: usize,
) -> pyo3::PyResult<pyo3::Bound<'_, pyo3::types::PyDict>> {
    // SAFETY: the GIL is held (the `Python` token); the call returns a new
    // reference to a dict, or NULL with an exception set.
    let d = unsafe { pyo3::Bound::from_owned_ptr_or_err(py, new_presized_raw(n)) }?;
    Ok(d.cast_into::<pyo3::types::PyDict>()?)
}
