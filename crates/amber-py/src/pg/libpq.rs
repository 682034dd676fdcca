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

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

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

static LIBPQ: OnceLock<Libpq> = OnceLock::new();

/// The bound library, if [`bind`] succeeded.
pub fn get() -> Option<&'static Libpq> {
    LIBPQ.get()
}

/// Bind the libpq at `path`, which must already be loaded in this process.
/// Returns whether amber now calls it (true at once if already bound).
// Each transmute's target is the `Libpq` field the symbol is assigned to.
#[allow(clippy::missing_transmute_annotations)]
pub fn bind(path: &str) -> bool {
    if LIBPQ.get().is_some() {
        return true;
    }
    let Ok(cpath) = CString::new(path) else {
        return false;
    };
    // SAFETY: `cpath` is a NUL-terminated string; RTLD_NOLOAD only returns
    // a handle to a library already loaded (bumping its count, so it stays
    // loaded for the life of the process), never loading code.
    let handle = unsafe { libc::dlopen(cpath.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if handle.is_null() {
        return false;
    }
    macro_rules! sym {
        ($name:ident) => {{
            let name = concat!(stringify!($name), "\0");
            // SAFETY: `handle` is a live dlopen handle and `name` is
            // NUL-terminated.
            let p = unsafe { libc::dlsym(handle, name.as_ptr() as *const c_char) };
            if p.is_null() {
                return false;
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
    let _ = LIBPQ.set(lib);
    true
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

/// A CopyData message allocated by libpq, freed on drop.
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
        // SAFETY: `ptr` came from PQgetCopyData and is freed once, here.
        unsafe { (self.lib.PQfreemem)(self.ptr as *mut c_void) }
    }
}

/// A connection handle from psycopg's `pgconn.pgconn_ptr`.
#[derive(Clone, Copy)]
pub struct Conn {
    lib: &'static Libpq,
    ptr: *mut PgConn,
}

// SAFETY: a PGconn may be used from any thread as long as one thread uses
// it at a time; the Python side holds psycopg's connection lock around the
// whole drain, so no other thread touches it meanwhile.
unsafe impl Send for Conn {}

impl Conn {
    /// # Safety
    /// `ptr` is the live `PGconn*` of a psycopg connection bound to the same
    /// libpq, that nothing else uses while this handle is in use.
    pub unsafe fn new(lib: &'static Libpq, ptr: usize) -> Conn {
        Conn {
            lib,
            ptr: ptr as *mut PgConn,
        }
    }

    /// The next CopyData message, without blocking.
    pub fn copy_step(&self) -> CopyStep {
        let mut buf: *mut c_char = std::ptr::null_mut();
        // SAFETY: `ptr` is a live PGconn (see `new`); async mode never blocks.
        let n = unsafe { (self.lib.PQgetCopyData)(self.ptr, &mut buf, 1) };
        match n {
            n if n > 0 => CopyStep::Data(CopyMessage {
                lib: self.lib,
                ptr: buf,
                len: n as usize,
            }),
            0 => CopyStep::WouldBlock,
            -1 => CopyStep::Done,
            _ => CopyStep::Failed(self.error_message()),
        }
    }

    /// Wait up to `timeout_ms` for the socket to be readable, then read what
    /// arrived into libpq's buffer. Err with libpq's message when the
    /// connection failed.
    pub fn wait_and_consume(&self, timeout_ms: c_int) -> Result<(), String> {
        // SAFETY: `ptr` is a live PGconn.
        let fd = unsafe { (self.lib.PQsocket)(self.ptr) };
        if fd < 0 {
            return Err(self.error_message());
        }
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; a timeout bounds the wait.
        let r = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
        if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("poll failed: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: `ptr` is a live PGconn; consuming input never blocks.
        if unsafe { (self.lib.PQconsumeInput)(self.ptr) } == 0 {
            return Err(self.error_message());
        }
        Ok(())
    }

    /// Collect the results that follow a finished COPY until libpq has no
    /// more: Ok(()) if all succeeded, else the first failure's SQLSTATE and
    /// message. Each result is cleared.
    pub fn finish_results(&self) -> Result<(), (String, String)> {
        let mut failure = None;
        loop {
            // SAFETY: `ptr` is a live PGconn; after a COPY ends libpq holds
            // its final result(s) and PQgetResult returns them, then NULL.
            let res = unsafe { (self.lib.PQgetResult)(self.ptr) };
            if res.is_null() {
                break;
            }
            // SAFETY: `res` is a live result, cleared once below.
            let status = unsafe { (self.lib.PQresultStatus)(res) };
            if status != PGRES_COMMAND_OK && failure.is_none() {
                // SAFETY: `res` is live; the strings live until PQclear.
                failure = Some(unsafe {
                    (
                        text((self.lib.PQresultErrorField)(res, DIAG_SQLSTATE)),
                        text((self.lib.PQresultErrorMessage)(res)),
                    )
                });
            }
            // SAFETY: `res` came from PQgetResult and is cleared once.
            unsafe { (self.lib.PQclear)(res) };
        }
        failure.map_or(Ok(()), Err)
    }

    pub fn error_message(&self) -> String {
        // SAFETY: `ptr` is a live PGconn; the message lives until the next
        // call on it, and is copied at once.
        unsafe { text((self.lib.PQerrorMessage)(self.ptr)) }
    }
}

/// A result handle from psycopg's `pgresult.pgresult_ptr`, read-only.
pub struct ResultView {
    lib: &'static Libpq,
    ptr: *const PgResult,
}

impl ResultView {
    /// # Safety
    /// `ptr` is a live `PGresult*` of the same libpq that stays alive (held
    /// by its psycopg object) while this handle is used.
    pub unsafe fn new(lib: &'static Libpq, ptr: usize) -> ResultView {
        ResultView {
            lib,
            ptr: ptr as *const PgResult,
        }
    }

    pub fn rows(&self) -> usize {
        // SAFETY: `ptr` is a live PGresult.
        unsafe { (self.lib.PQntuples)(self.ptr) }.max(0) as usize
    }

    pub fn fields(&self) -> usize {
        // SAFETY: `ptr` is a live PGresult.
        unsafe { (self.lib.PQnfields)(self.ptr) }.max(0) as usize
    }

    pub fn is_binary(&self, col: usize) -> bool {
        // SAFETY: as in `ftype`.
        unsafe { (self.lib.PQfformat)(self.ptr, col as c_int) == 1 }
    }

    /// The value at (row, col), `None` for NULL.
    pub fn value(&self, row: usize, col: usize) -> Option<&[u8]> {
        let (r, c) = (row as c_int, col as c_int);
        // SAFETY: `ptr` is a live PGresult and (r, c) within its bounds
        // (callers iterate below `rows()` and `fields()`); the value's
        // bytes live as long as the result, which outlives `&self`.
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
