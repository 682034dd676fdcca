//! The few libpq calls amber makes itself on a psycopg connection: draining
//! a `COPY ... TO STDOUT` and reading a result's values, without a Python
//! call per row.
//!
//! amber never loads a libpq of its own: calls on a `PGconn` must go to the
//! very library that made it. The Python side finds the file of the libpq
//! already mapped into the process (the one psycopg uses) and passes its
//! path to [`bind`], which opens it with `RTLD_NOLOAD`: that returns the
//! loaded copy or fails, and never loads a second one. When binding fails,
//! `amber.pg` reads through psycopg's own API instead (slower, same
//! results).
//!
//! # Where the pointers come from, and why they are live
//!
//! No address ever crosses the Python boundary: the native API takes
//! psycopg's own `PGconn` and `PGresult` objects, of exactly the classes
//! given to [`bind`], and reads their pointer here, through the class's own
//! descriptor, found at bind time (so reading it runs no Python code):
//!
//! - psycopg's C implementation (`psycopg_binary`, `psycopg_c`, Cython):
//!   the `pgconn_ptr`/`pgresult_ptr` properties, C getters that give the
//!   address, or None once freed;
//! - its ctypes implementation: the `_pgconn_ptr`/`_pgresult_ptr` slots,
//!   which hold a ctypes pointer, or None once freed.
//!
//! psycopg frees a `PGconn` only in `PGconn.finish()` (from
//! `Connection.close()`, which another thread may call at any time: it does
//! not take the connection's lock) or when the object dies (which a held
//! reference prevents), and a `PGresult` only in `PGresult.clear()` or on
//! death. In the C implementation `finish()` calls `PQfinish` and then
//! clears the pointer without ever releasing the GIL (no `nogil` block;
//! `clear()` likewise); in the ctypes one, `finish()` first sets the slot
//! to None, holding the GIL, and only then calls `PQfinish` (ctypes
//! releases the GIL for that call; `clear()` likewise). So a pointer read
//! here, with the GIL held, that is not None stays valid for as long as
//! this thread keeps the GIL and runs no Python code: every method below
//! makes its libpq calls at once, holding the GIL, with a pointer read
//! since the last point Python code could have run, and nothing here
//! releases the GIL except the socket wait, after which the pointer is
//! read again. A pointer is never kept across a call that may run Python
//! code (a loader, a codec, a signal handler): [`Conn::forget`] drops it.
//!
//! This rests on the GIL: `amber._native` declares that it uses it, and
//! `amber.pg` does not bind libpq on an interpreter running without it.
//!
//! One path is outside amber's hands: libpq itself calls psycopg's notice
//! receiver (Python code) when the server sends a NOTICE, from inside the
//! libpq call that reads it. If that Python code lets another thread close
//! the connection meanwhile, libpq's own call goes on with a freed
//! `PGconn`. psycopg's own COPY and fetches have the same exposure: the
//! receiver is psycopg's and runs inside its calls alike.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;

/// An opaque `PGconn`.
#[repr(C)]
pub struct PgConn {
    _private: [u8; 0],
}

/// An opaque `PGresult`.
#[repr(C)]
pub struct PgResult {
    _private: [u8; 0],
}

/// `PGRES_COMMAND_OK`: a command that returns no rows succeeded.
pub const PGRES_COMMAND_OK: c_int = 1;
/// `PG_DIAG_SQLSTATE`.
pub const DIAG_SQLSTATE: c_int = b'C' as c_int;

/// The functions, resolved once from the bound library.
#[allow(non_snake_case)]
pub struct Libpq {
    pub PQgetCopyData: unsafe extern "C" fn(*mut PgConn, *mut *mut c_char, c_int) -> c_int,
    pub PQfreemem: unsafe extern "C" fn(*mut c_void),
    pub PQconsumeInput: unsafe extern "C" fn(*mut PgConn) -> c_int,
    pub PQisBusy: unsafe extern "C" fn(*mut PgConn) -> c_int,
    pub PQsocket: unsafe extern "C" fn(*const PgConn) -> c_int,
    pub PQgetResult: unsafe extern "C" fn(*mut PgConn) -> *mut PgResult,
    pub PQresultStatus: unsafe extern "C" fn(*const PgResult) -> c_int,
    pub PQresultErrorField: unsafe extern "C" fn(*const PgResult, c_int) -> *const c_char,
    pub PQresultErrorMessage: unsafe extern "C" fn(*const PgResult) -> *const c_char,
    pub PQclear: unsafe extern "C" fn(*mut PgResult),
    pub PQerrorMessage: unsafe extern "C" fn(*const PgConn) -> *const c_char,
    pub PQntuples: unsafe extern "C" fn(*const PgResult) -> c_int,
    pub PQnfields: unsafe extern "C" fn(*const PgResult) -> c_int,
    pub PQfformat: unsafe extern "C" fn(*const PgResult, c_int) -> c_int,
    pub PQgetvalue: unsafe extern "C" fn(*const PgResult, c_int, c_int) -> *const c_char,
    pub PQgetlength: unsafe extern "C" fn(*const PgResult, c_int, c_int) -> c_int,
    pub PQgetisnull: unsafe extern "C" fn(*const PgResult, c_int, c_int) -> c_int,
}

/// How the objects of one psycopg class give their libpq pointer.
enum Read {
    /// A C getter (`getset_descriptor`): an int, or None once freed.
    Getter,
    /// A slot (`member_descriptor`) holding a ctypes pointer, or None.
    CtypesSlot,
}

/// A psycopg class whose objects amber takes, and the descriptor, taken
/// from the class at bind time, that reads their pointer.
struct Class {
    ty: Py<PyType>,
    descr: Py<PyAny>,
    read: Read,
}

/// What [`bind`] bound: the library and psycopg's two classes.
pub struct Binding {
    lib: Libpq,
    conn: Class,
    result: Class,
    /// `ctypes._Pointer`, for the ctypes implementation's slots.
    ctypes_pointer: Option<Py<PyType>>,
}

static BOUND: OnceLock<Binding> = OnceLock::new();

/// The binding, if [`bind`] succeeded.
pub fn get() -> Option<&'static Binding> {
    BOUND.get()
}

/// The descriptor in `ty`'s own namespace that reads the pointer: the C
/// getter `public` or else the slot `slot`. None when the class has
/// neither (a pointer only Python code could read is not read).
fn class_of(ty: &Bound<'_, PyType>, public: &str, slot: &str) -> PyResult<Option<Class>> {
    let ns = ty.getattr("__dict__")?;
    for (name, read) in [(public, Read::Getter), (slot, Read::CtypesSlot)] {
        let Ok(d) = ns.get_item(name) else {
            continue;
        };
        let want = match read {
            Read::Getter => &raw mut ffi::PyGetSetDescr_Type,
            Read::CtypesSlot => &raw mut ffi::PyMemberDescr_Type,
        };
        // SAFETY: `d` is a live object (held by `d`); comparing its type's
        // address with a static type object's only reads it.
        if unsafe { ffi::Py_TYPE(d.as_ptr()) } == want {
            return Ok(Some(Class {
                ty: ty.clone().unbind(),
                descr: d.unbind(),
                read,
            }));
        }
    }
    Ok(None)
}

/// Bind the libpq at `path`, which must already be loaded in this process,
/// for objects of psycopg's classes `conn_ty` (`psycopg.pq.PGconn`) and
/// `result_ty` (`psycopg.pq.PGresult`). Returns whether amber now calls it:
/// false when the library is not loaded or lacks a function, or when a
/// class reads its pointer in Python code; true at once if already bound
/// with the same classes.
// Each transmute's target is the `Libpq` field the symbol is assigned to.
#[allow(clippy::missing_transmute_annotations)]
pub fn bind(
    py: Python<'_>,
    path: &str,
    conn_ty: &Bound<'_, PyType>,
    result_ty: &Bound<'_, PyType>,
) -> PyResult<bool> {
    if let Some(b) = BOUND.get() {
        return Ok(b.conn.ty.bind(py).is(conn_ty) && b.result.ty.bind(py).is(result_ty));
    }
    let (Some(conn), Some(result)) = (
        class_of(conn_ty, "pgconn_ptr", "_pgconn_ptr")?,
        class_of(result_ty, "pgresult_ptr", "_pgresult_ptr")?,
    ) else {
        return Ok(false);
    };
    let ctypes_pointer =
        if matches!(conn.read, Read::CtypesSlot) || matches!(result.read, Read::CtypesSlot) {
            Some(
                py.import("ctypes")?
                    .getattr("_Pointer")?
                    .cast_into::<PyType>()?
                    .unbind(),
            )
        } else {
            None
        };
    let Ok(cpath) = CString::new(path) else {
        return Ok(false);
    };
    // SAFETY: `cpath` is a NUL-terminated string; RTLD_NOLOAD only returns
    // a handle to a library already loaded (bumping its count, so it stays
    // loaded for the life of the process), never loading code.
    let handle = unsafe { libc::dlopen(cpath.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if handle.is_null() {
        return Ok(false);
    }
    macro_rules! sym {
        ($name:ident) => {{
            let name = concat!(stringify!($name), "\0");
            // SAFETY: `handle` is a live dlopen handle and `name` is
            // NUL-terminated.
            let p = unsafe { libc::dlsym(handle, name.as_ptr() as *const c_char) };
            if p.is_null() {
                return Ok(false);
            }
            // SAFETY: libpq exports this function with the C signature
            // declared in `Libpq` (libpq-fe.h); a data pointer from dlsym
            // is the function's address.
            unsafe { std::mem::transmute::<*mut c_void, _>(p) }
        }};
    }
    let lib = Libpq {
        PQgetCopyData: sym!(PQgetCopyData),
        PQfreemem: sym!(PQfreemem),
        PQconsumeInput: sym!(PQconsumeInput),
        PQisBusy: sym!(PQisBusy),
        PQsocket: sym!(PQsocket),
        PQgetResult: sym!(PQgetResult),
        PQresultStatus: sym!(PQresultStatus),
        PQresultErrorField: sym!(PQresultErrorField),
        PQresultErrorMessage: sym!(PQresultErrorMessage),
        PQclear: sym!(PQclear),
        PQerrorMessage: sym!(PQerrorMessage),
        PQntuples: sym!(PQntuples),
        PQnfields: sym!(PQnfields),
        PQfformat: sym!(PQfformat),
        PQgetvalue: sym!(PQgetvalue),
        PQgetlength: sym!(PQgetlength),
        PQgetisnull: sym!(PQgetisnull),
    };
    let _ = BOUND.set(Binding {
        lib,
        conn,
        result,
        ctypes_pointer,
    });
    Ok(true)
}

impl Binding {
    /// The address `obj` (of `class`) holds now, 0 once freed. Runs no
    /// Python code: the descriptor is psycopg's C getter or slot (checked
    /// at bind time), called directly, and a ctypes pointer's value is read
    /// through its buffer.
    fn address(&self, class: &Class, obj: &Bound<'_, PyAny>) -> PyResult<usize> {
        let py = obj.py();
        let descr = class.descr.bind(py);
        // SAFETY: `descr` is a live getset or member descriptor (checked in
        // `class_of`), whose type has a `tp_descr_get`; `obj` is an exact
        // instance of the class the descriptor belongs to (checked by the
        // callers), as the getter requires. The GIL is held (`py`).
        let got = unsafe {
            let get = (*ffi::Py_TYPE(descr.as_ptr()))
                .tp_descr_get
                .ok_or_else(|| PyRuntimeError::new_err("descriptor without a getter"))?;
            let r = get(descr.as_ptr(), obj.as_ptr(), class.ty.as_ptr());
            Bound::from_owned_ptr_or_err(py, r)?
        };
        if got.is_none() {
            return Ok(0);
        }
        match class.read {
            Read::Getter => got.extract::<usize>(),
            Read::CtypesSlot => {
                let pointer = self.ctypes_pointer.as_ref().map(|t| t.bind(py));
                if !pointer.is_some_and(|t| got.is_instance(t).unwrap_or(false)) {
                    return Err(PyTypeError::new_err(
                        "psycopg's slot holds no ctypes pointer",
                    ));
                }
                ctypes_address(&got)
            }
        }
    }

    /// psycopg's `PGconn` object `obj`, checked to be of the bound class.
    pub fn conn<'a, 'py>(&'static self, obj: &'a Bound<'py, PyAny>) -> PyResult<Conn<'a, 'py>> {
        if !obj.get_type().is(self.conn.ty.bind(obj.py())) {
            return Err(PyTypeError::new_err(format!(
                "expected psycopg's PGconn (a connection's .pgconn), not {}",
                obj.get_type().name()?
            )));
        }
        let conn = Conn {
            b: self,
            obj,
            read: std::cell::Cell::new(None),
        };
        conn.ptr()?;
        Ok(conn)
    }

    /// psycopg's `PGresult` object `obj`, checked to be of the bound class.
    pub fn result<'a, 'py>(
        &'static self,
        obj: &'a Bound<'py, PyAny>,
    ) -> PyResult<ResultRef<'a, 'py>> {
        if !obj.get_type().is(self.result.ty.bind(obj.py())) {
            return Err(PyTypeError::new_err(format!(
                "expected psycopg's PGresult (a cursor's .pgresult), not {}",
                obj.get_type().name()?
            )));
        }
        let res = ResultRef { b: self, obj };
        // SAFETY: the view is dropped at once.
        unsafe { res.view() }?;
        Ok(res)
    }
}

/// The address a ctypes pointer object holds: its buffer is the pointer.
fn ctypes_address(p: &Bound<'_, PyAny>) -> PyResult<usize> {
    let mut view = std::mem::MaybeUninit::<ffi::Py_buffer>::zeroed();
    // SAFETY: `p` is a live object and `view` a zeroed buffer struct that
    // PyObject_GetBuffer fills on success; the GIL is held.
    if unsafe { ffi::PyObject_GetBuffer(p.as_ptr(), view.as_mut_ptr(), ffi::PyBUF_SIMPLE) } != 0 {
        return Err(PyErr::fetch(p.py()));
    }
    // SAFETY: filled by the successful PyObject_GetBuffer above.
    let mut view = unsafe { view.assume_init() };
    let addr = (view.len == std::mem::size_of::<usize>() as isize && !view.buf.is_null())
        // SAFETY: the buffer holds `len` = size_of::<usize>() readable
        // bytes at `buf` (a ctypes pointer's storage), maybe unaligned.
        .then(|| unsafe { std::ptr::read_unaligned(view.buf as *const usize) });
    // SAFETY: `view` was filled by PyObject_GetBuffer and is released once.
    unsafe { ffi::PyBuffer_Release(&mut view) };
    addr.ok_or_else(|| PyTypeError::new_err("a ctypes pointer's buffer is not one address"))
}

fn psycopg_error(py: Python<'_>, name: &str, msg: &str) -> PyErr {
    match py.import("psycopg").and_then(|m| m.getattr(name)) {
        Ok(cls) => match cls.call1((msg,)) {
            Ok(e) => PyErr::from_value(e),
            Err(e) => e,
        },
        Err(e) => e,
    }
}

/// Text from libpq (NULL is empty), trimmed of its final newline.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string that stays valid for the call.
pub unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the caller guarantees a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_string_lossy().trim_end().to_string()
}

/// What a step of draining a COPY gave.
pub enum CopyStep {
    /// One CopyData message; free it with [`CopyMessage`]'s drop.
    Data(CopyMessage),
    /// No complete message buffered: wait for the socket, then consume.
    WouldBlock,
    /// The COPY ended; its final result(s) wait in `PQgetResult`.
    Done,
    /// libpq reported an error (the connection broke): its message.
    Failed(String),
}

/// A CopyData message allocated by libpq, freed on drop. It does not
/// depend on the connection: it stays valid after the `PGconn` is freed.
pub struct CopyMessage {
    lib: &'static Libpq,
    ptr: *mut c_char,
    len: usize,
}

impl CopyMessage {
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: PQgetCopyData returned `len` bytes at `ptr`, which stay
        // allocated until PQfreemem in drop.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl Drop for CopyMessage {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from PQgetCopyData and is freed once, here;
        // PQfreemem is `free`, which needs no connection.
        unsafe { (self.lib.PQfreemem)(self.ptr as *mut c_void) }
    }
}

/// A psycopg `PGconn` object. Each method makes its libpq calls at once,
/// holding the GIL, with the pointer read from the object since the last
/// point Python code could have run (see the module's documentation): the
/// pointer read is kept until [`Conn::forget`], which whoever runs Python
/// code or releases the GIL in between must call. A freed connection raises
/// psycopg's `OperationalError`.
pub struct Conn<'a, 'py> {
    b: &'static Binding,
    obj: &'a Bound<'py, PyAny>,
    read: std::cell::Cell<Option<*mut PgConn>>,
}

impl Conn<'_, '_> {
    /// The live `PGconn`: the one read since the last [`Conn::forget`], or
    /// read now.
    fn ptr(&self) -> PyResult<*mut PgConn> {
        if let Some(p) = self.read.get() {
            return Ok(p);
        }
        match self.b.address(&self.b.conn, self.obj)? {
            0 => Err(psycopg_error(
                self.obj.py(),
                "OperationalError",
                "the connection is closed",
            )),
            p => {
                let p = p as *mut PgConn;
                self.read.set(Some(p));
                Ok(p)
            }
        }
    }

    /// Python code may have run, or the GIL been released: the next call
    /// reads the pointer from the object again.
    pub fn forget(&self) {
        self.read.set(None);
    }

    /// The next CopyData message, without blocking.
    pub fn copy_step(&self) -> PyResult<CopyStep> {
        let lib = &self.b.lib;
        let p = self.ptr()?;
        let mut buf: *mut c_char = std::ptr::null_mut();
        // SAFETY: `p` is live until this thread releases the GIL or runs
        // Python code (module documentation), and neither happens before
        // the last call here; async mode (1) never blocks.
        let n = unsafe { (lib.PQgetCopyData)(p, &mut buf, 1) };
        Ok(match n {
            n if n > 0 => CopyStep::Data(CopyMessage {
                lib,
                ptr: buf,
                len: n as usize,
            }),
            0 => CopyStep::WouldBlock,
            -1 => CopyStep::Done,
            // SAFETY: as above.
            _ => CopyStep::Failed(unsafe { error_message(lib, p) }),
        })
    }

    /// The socket to wait on, or libpq's message when there is none.
    pub fn socket(&self) -> PyResult<Result<c_int, String>> {
        let lib = &self.b.lib;
        let p = self.ptr()?;
        // SAFETY: `p` is live (as in `copy_step`).
        let fd = unsafe { (lib.PQsocket)(p) };
        Ok(if fd < 0 {
            // SAFETY: as above.
            Err(unsafe { error_message(lib, p) })
        } else {
            Ok(fd)
        })
    }

    /// Read what the socket holds into libpq's buffer, without blocking
    /// (libpq's socket is non-blocking); libpq's message on failure.
    pub fn consume(&self) -> PyResult<Result<(), String>> {
        let lib = &self.b.lib;
        let p = self.ptr()?;
        // SAFETY: `p` is live (as in `copy_step`).
        Ok(if unsafe { (lib.PQconsumeInput)(p) } == 0 {
            // SAFETY: as above.
            Err(unsafe { error_message(lib, p) })
        } else {
            Ok(())
        })
    }

    /// Whether `PQgetResult` would block (wait for input).
    pub fn is_busy(&self) -> PyResult<bool> {
        let p = self.ptr()?;
        // SAFETY: `p` is live (as in `copy_step`); PQisBusy never blocks.
        Ok(unsafe { (self.b.lib.PQisBusy)(p) } != 0)
    }

    /// The next result, when not [`is_busy`](Self::is_busy): None when there
    /// is none left, Ok(()) for a success, else its SQLSTATE and message.
    /// The result is cleared.
    #[allow(clippy::type_complexity)]
    pub fn next_result(&self) -> PyResult<Option<Result<(), (String, String)>>> {
        let lib = &self.b.lib;
        let p = self.ptr()?;
        // SAFETY: `p` is live (as in `copy_step`); the caller saw PQisBusy
        // false, so PQgetResult returns without waiting.
        let res = unsafe { (lib.PQgetResult)(p) };
        if res.is_null() {
            return Ok(None);
        }
        // SAFETY: `res` is a live result, cleared once below.
        let status = unsafe { (lib.PQresultStatus)(res) };
        let outcome = if status == PGRES_COMMAND_OK {
            Ok(())
        } else {
            // SAFETY: `res` is live; the strings live until PQclear.
            Err(unsafe {
                (
                    text((lib.PQresultErrorField)(res, DIAG_SQLSTATE)),
                    text((lib.PQresultErrorMessage)(res)),
                )
            })
        };
        // SAFETY: `res` came from PQgetResult and is cleared once.
        unsafe { (lib.PQclear)(res) };
        Ok(Some(outcome))
    }
}

/// libpq's last error message on `p`, copied.
///
/// # Safety
/// `p` is a live `PGconn` of the bound library.
unsafe fn error_message(lib: &Libpq, p: *mut PgConn) -> String {
    // SAFETY: the caller's contract; the message lives until the next call
    // on `p` and is copied at once.
    unsafe { text((lib.PQerrorMessage)(p)) }
}

/// Wait up to `timeout_ms` for `fd` to be readable (or closed, or in
/// error: the next libpq call tells). Made without the GIL and without a
/// `PGconn`: another thread may close the connection meanwhile, so the
/// caller reads the pointer again afterwards. Err when poll itself failed.
pub fn wait_readable(fd: c_int, timeout_ms: c_int) -> Result<(), String> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd; the timeout bounds the wait.
    let r = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
    if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
        return Err(format!("poll failed: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Where draining a COPY stands, kept between calls of a non-blocking drain.
#[derive(Default)]
pub struct Drain {
    /// The data ended (`PQgetCopyData` gave -1): the results follow.
    ended: bool,
    /// The first failed result among them.
    failure: Option<(String, String)>,
}

/// How a call to [`Drain::run`] ended.
pub enum DrainEnd {
    /// The COPY and its results are over: None if all went well, else the
    /// SQLSTATE (empty when the connection failed) and message.
    Finished(Option<(String, String)>),
    /// (Not blocking) every buffered message was taken; wait for the
    /// socket to be readable, then call again.
    Wait,
}

impl Drain {
    /// Take the COPY's messages, passing each to `data`, then its results.
    /// Blocking, the socket is waited on without the GIL, 100 ms at a time,
    /// with signal handlers run in between (Ctrl-C stops it). Not blocking,
    /// what the socket holds is read once and [`DrainEnd::Wait`] returned
    /// when that is used up.
    /// `data` takes each CopyData message; with `data_runs_python`, the
    /// pointer is read again after each (it may have run Python code),
    /// else only after the socket waits.
    pub fn run(
        &mut self,
        conn: &Conn<'_, '_>,
        block: bool,
        data_runs_python: bool,
        mut data: impl FnMut(&[u8]) -> PyResult<()>,
    ) -> PyResult<DrainEnd> {
        let failed = |msg: String| Ok(DrainEnd::Finished(Some((String::new(), msg))));
        if !block {
            if let Err(msg) = conn.consume()? {
                return failed(msg);
            }
        }
        loop {
            if !self.ended {
                match conn.copy_step()? {
                    CopyStep::Data(msg) => {
                        data(msg.bytes())?;
                        if data_runs_python {
                            conn.forget();
                        }
                        continue;
                    }
                    CopyStep::Done => {
                        self.ended = true;
                        continue;
                    }
                    CopyStep::Failed(msg) => return failed(msg),
                    CopyStep::WouldBlock => {}
                }
            } else if !conn.is_busy()? {
                match conn.next_result()? {
                    None => return Ok(DrainEnd::Finished(self.failure.take())),
                    Some(Ok(())) => {}
                    Some(Err(f)) => {
                        self.failure.get_or_insert(f);
                    }
                }
                continue;
            }
            if !block {
                return Ok(DrainEnd::Wait);
            }
            let fd = match conn.socket()? {
                Ok(fd) => fd,
                Err(msg) => return failed(msg),
            };
            let py = conn.obj.py();
            conn.forget();
            if let Err(msg) = py.detach(move || wait_readable(fd, 100)) {
                return failed(msg);
            }
            py.check_signals()?;
            if let Err(msg) = conn.consume()? {
                return failed(msg);
            }
        }
    }
}

/// A psycopg `PGresult` object, held for as long as this lives (so it is
/// not freed by its death; `clear()` is seen by [`ResultRef::view`]).
pub struct ResultRef<'a, 'py> {
    b: &'static Binding,
    obj: &'a Bound<'py, PyAny>,
}

impl ResultRef<'_, '_> {
    /// A view of the result as it is now; a cleared result raises psycopg's
    /// `InterfaceError`.
    ///
    /// # Safety
    /// The view (and every value borrowed from it) is used only until this
    /// thread runs Python code or releases the GIL (see the module
    /// documentation): psycopg may clear the result then. Take a new view
    /// after that.
    pub unsafe fn view(&self) -> PyResult<ResultView> {
        match self.b.address(&self.b.result, self.obj)? {
            0 => Err(psycopg_error(
                self.obj.py(),
                "InterfaceError",
                "the result was cleared while amber read it",
            )),
            p => Ok(ResultView {
                lib: &self.b.lib,
                ptr: p as *const PgResult,
            }),
        }
    }
}

/// A read-only view of a live `PGresult`, from [`ResultRef::view`].
pub struct ResultView {
    lib: &'static Libpq,
    ptr: *const PgResult,
}

impl ResultView {
    pub fn rows(&self) -> usize {
        // SAFETY: `ptr` is a live PGresult (see `ResultRef::view`).
        unsafe { (self.lib.PQntuples)(self.ptr) }.max(0) as usize
    }

    pub fn fields(&self) -> usize {
        // SAFETY: `ptr` is a live PGresult.
        unsafe { (self.lib.PQnfields)(self.ptr) }.max(0) as usize
    }

    pub fn is_binary(&self, col: usize) -> bool {
        // SAFETY: `ptr` is a live PGresult; an out-of-range column gives 0.
        unsafe { (self.lib.PQfformat)(self.ptr, col as c_int) == 1 }
    }

    /// The value at (row, col), `None` for NULL.
    pub fn value(&self, row: usize, col: usize) -> Option<&[u8]> {
        let (r, c) = (row as c_int, col as c_int);
        // SAFETY: `ptr` is a live PGresult and (r, c) within its bounds
        // (callers iterate below `rows()` and `fields()`); the value's
        // bytes live as long as the result, which outlives `&self` (the
        // view is used only while no Python code runs: `ResultRef::view`).
        unsafe {
            // A NULL has length 0: only then is it worth asking.
            let n = (self.lib.PQgetlength)(self.ptr, r, c).max(0) as usize;
            if n == 0 && (self.lib.PQgetisnull)(self.ptr, r, c) != 0 {
                return None;
            }
            let p = (self.lib.PQgetvalue)(self.ptr, r, c);
            if p.is_null() {
                return Some(&[]);
            }
            Some(std::slice::from_raw_parts(p as *const u8, n))
        }
    }
}
