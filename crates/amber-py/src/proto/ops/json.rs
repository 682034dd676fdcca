//! ProtoJSON at the edge: the core's printer reads messages through the
//! wire encoder's source (`serialize::Source`) and its parser makes them
//! with the wire decoder's builder (`state::build::Builder`), so no Python code
//! runs and nothing is built twice. `amber.proto.Message` wraps these in
//! `to_json`/`from_json`/`to_dict`/`from_dict`.

use std::borrow::Cow;

use amber_core::proto::json::lex::LexError;
use amber_core::proto::json::num as json_num;
use amber_core::proto::json::{
    self, Input, Num, ParseFailure, ParseOptions, Peek, PrintFailure, PrintOptions, Sink,
};
use amber_core::proto::runtime::DecodeKind;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::errors;
use crate::proto::ops::parse::{install, schema_of};
use crate::proto::ops::serialize::{
    changing, write_error, Given, Source, Stashed as SourceStashed,
};
use crate::proto::state::build::{Builder, Stashed as BuildStashed};
use crate::proto::state::cell::Borrow;
use crate::proto::state::message::PyMessage;
use crate::proto::state::schema::FieldKeys;

/// A printer failure as a Python exception: the source's own error, or
/// `amber.EncodeError` with the path.
pub(crate) fn print_error(
    py: Python<'_>,
    e: PrintFailure<SourceStashed>,
    src: &Source<'_>,
) -> PyErr {
    match e {
        PrintFailure::Source(SourceStashed) => src.take_err(),
        PrintFailure::Print(e) => write_error(py, &e),
    }
}

/// Makes the dicts, lists and scalars `json.loads` would make of the
/// printer's text, directly.
struct PySink<'py, 'k> {
    py: Python<'py>,
    stack: Vec<Frame<'py>>,
    /// The key of the member whose value comes next.
    key: Option<Bound<'py, PyString>>,
    root: Option<Bound<'py, PyAny>>,
    err: Option<PyErr>,
    /// The schema's field-name keys (see `Schema::field_keys`).
    keys: &'k FieldKeys,
    /// The source the printer reads, whose last scalar's object a value
    /// equal to it reuses.
    src: &'k Source<'py>,
}

enum Frame<'py> {
    Dict(Bound<'py, PyDict>),
    List(Bound<'py, PyList>),
}

impl<'py> PySink<'py, '_> {
    fn put(&mut self, v: Bound<'py, PyAny>) {
        let r = match self.stack.last() {
            Some(Frame::Dict(d)) => match self.key.take() {
                Some(k) => d.set_item(k, v),
                None => Ok(()),
            },
            Some(Frame::List(l)) => l.append(v),
            None => {
                self.root = Some(v);
                Ok(())
            }
        };
        if let Err(e) = r {
            self.err.get_or_insert(e);
        }
    }
}

impl Sink for PySink<'_, '_> {
    fn begin_object(&mut self) {
        let d = PyDict::new(self.py);
        self.put(d.clone().into_any());
        self.stack.push(Frame::Dict(d));
    }
    fn begin_object_sized(&mut self, n: usize) {
        if n <= 5 {
            // What a new dict holds without growing.
            return self.begin_object();
        }
        match crate::ffi::dict::new_presized(self.py, n) {
            Ok(d) => {
                self.put(d.clone().into_any());
                self.stack.push(Frame::Dict(d));
            }
            Err(e) => {
                self.err.get_or_insert(e);
                self.begin_object();
            }
        }
    }
    fn key(&mut self, k: &str) {
        match crate::ffi::text::string(self.py, k) {
            Ok(k) => self.key = Some(k),
            Err(e) => {
                self.err.get_or_insert(e);
            }
        }
    }
    fn field_key(&mut self, k: &str) {
        self.key = Some(match self.keys.get(&(k.as_ptr() as usize, k.len())) {
            Some(s) => s.bind(self.py).clone(),
            None => PyString::intern(self.py, k),
        });
    }
    fn end_object(&mut self) {
        self.stack.pop();
    }
    fn begin_array(&mut self) {
        let l = PyList::empty(self.py);
        self.put(l.clone().into_any());
        self.stack.push(Frame::List(l));
    }
    fn item(&mut self) {}
    fn end_array(&mut self) {
        self.stack.pop();
    }
    fn null(&mut self) {
        self.put(self.py.None().into_bound(self.py));
    }
    fn bool(&mut self, v: bool) {
        self.put(PyBool::new(self.py, v).to_owned().into_any());
    }
    fn str(&mut self, s: &str) {
        if let Given::Str(p, n, o) = self.src.given() {
            if p == s.as_ptr() && n == s.len() {
                // SAFETY: `o` is the live str whose text `s` is (same
                // address and length), kept alive by the source's borrows
                // for the whole print (see `Given`); the GIL is held.
                return self.put(unsafe { Bound::from_borrowed_ptr(self.py, o) });
            }
        }
        match crate::ffi::text::string(self.py, s) {
            Ok(o) => self.put(o.into_any()),
            Err(e) => {
                self.err.get_or_insert(e);
            }
        }
    }
    fn int_str(&mut self, v: i128) {
        // The digits of 0 to 255 as shared `str` objects: repeated 64-bit
        // fields and map values are mostly small.
        static SMALL: PyOnceLock<Vec<Py<PyString>>> = PyOnceLock::new();
        if (0..256).contains(&v) {
            let small = SMALL.get_or_init(self.py, || {
                (0..256)
                    .map(|n: u32| PyString::new(self.py, &n.to_string()).unbind())
                    .collect()
            });
            return self.put(small[v as usize].bind(self.py).clone().into_any());
        }
        let mut b = [0u8; 24];
        self.str(json_num::fmt_i64_or_u64(&mut b, v))
    }
    fn int(&mut self, v: i64) {
        if let Given::Int(x, o) = self.src.given() {
            if x == v {
                // SAFETY: `o` is a live exact int of value `v`, kept alive
                // as in `str`.
                return self.put(unsafe { Bound::from_borrowed_ptr(self.py, o) });
            }
        }
        let o = v.into_pyobject(self.py);
        let Ok(o) = o;
        self.put(o.into_any());
    }
    fn float(&mut self, v: f64) {
        if let Given::Float(x, o) = self.src.given() {
            if x == v.to_bits() {
                // SAFETY: `o` is a live exact float with these bits, kept
                // alive as in `str`.
                return self.put(unsafe { Bound::from_borrowed_ptr(self.py, o) });
            }
        }
        self.put(PyFloat::new(self.py, v).into_any());
    }
}

/// `m` as the Python values `json.loads(proto_to_json(m, ...))` gives
/// (`json_format.MessageToDict`), made directly (`Message.to_dict`).
pub fn to_dict<'py>(
    m: &Bound<'py, PyMessage>,
    preserving_proto_field_name: bool,
    use_integers_for_enums: bool,
    always_print_fields_with_no_presence: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let py = m.py();
    let opts = PrintOptions {
        preserving_proto_field_name,
        use_integers_for_enums,
        always_print_fields_with_no_presence,
        ..PrintOptions::default()
    };
    let root = m.state().map_err(changing)?;
    let src = Source::recording(py);
    let mut sink = PySink {
        py,
        stack: Vec::new(),
        key: None,
        root: None,
        err: None,
        keys: &root.s.field_keys,
        src: &src,
    };
    let r = json::print_to(&root.s.tables, root.ty, &*root, &src, &opts, &mut sink);
    if let Err(e) = r {
        return Err(print_error(py, e, &src));
    }
    let (err, out) = (sink.err, sink.root);
    drop(src);
    if let Some(e) = err {
        return Err(e);
    }
    Ok(out.unwrap_or_else(|| py.None().into_bound(py)))
}

/// Parse ProtoJSON from `input` as a message of `m`'s type and merge it
/// into `m` (after clearing it when `replace`).
pub(crate) fn merge_input<'a, I: Input<'a>>(
    m: &Bound<'_, PyMessage>,
    input: I,
    ignore_unknown_fields: bool,
    replace: bool,
) -> PyResult<()> {
    let py = m.py();
    let opts = ParseOptions {
        ignore_unknown_fields,
        ..ParseOptions::default()
    };
    let (s, ty) = schema_of(m)?;
    let mut builder = Builder::new(py, &s);
    let draft = match json::parse_input(&s.tables, ty, input, &mut builder, &opts) {
        Ok(d) => d,
        Err(ParseFailure::Json(e)) => {
            let offset = (e.line > 0).then_some(e.offset);
            return Err(errors::proto_decode(
                py,
                e.kind.name(),
                e.to_string(),
                offset,
                Some(e.path),
            ));
        }
        Err(ParseFailure::Build(BuildStashed)) => return Err(builder.take_err()),
    };
    install(m, draft, replace)
}

/// Python values read as a JSON document.
pub(crate) struct PyInput<'py> {
    /// The next value.
    pub(crate) cur: Option<Bound<'py, PyAny>>,
    pub(crate) stack: Vec<PFrame<'py>>,
    /// Every `str` whose text was handed out borrowed (see `borrow`).
    pub(crate) keep: Vec<Bound<'py, PyString>>,
}

pub(crate) enum PFrame<'py> {
    Obj {
        items: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
        i: usize,
    },
    Arr {
        seq: Seq<'py>,
        len: usize,
        i: usize,
    },
}

/// A list or tuple, read in place.
pub(crate) enum Seq<'py> {
    List(Bound<'py, PyList>),
    Tuple(Bound<'py, PyTuple>),
}

impl<'py> Seq<'py> {
    fn get(&self, i: usize) -> Option<Bound<'py, PyAny>> {
        match self {
            Seq::List(l) => l.get_item(i).ok(),
            Seq::Tuple(t) => t.get_item(i).ok(),
        }
    }
}

fn lex_err<T>(message: String) -> Result<T, LexError> {
    Err(LexError {
        kind: DecodeKind::TypeMismatch,
        offset: 0,
        message,
    })
}

fn type_name(o: Option<&Bound<'_, PyAny>>) -> String {
    match o {
        None => "nothing".into(),
        Some(o) => o
            .get_type()
            .name()
            .map(|n| format!("a {n}"))
            .unwrap_or_else(|_| "an object".into()),
    }
}

impl<'py> PyInput<'py> {
    fn take(&mut self) -> Result<Bound<'py, PyAny>, LexError> {
        match self.cur.take() {
            Some(o) => Ok(o),
            None => lex_err("expected a value".into()),
        }
    }

    /// The text of `s`, borrowed (no copy): `s` is kept alive until this
    /// input is dropped.
    fn borrow(
        &mut self,
        s: &Bound<'py, PyString>,
        what: &str,
    ) -> Result<Cow<'static, str>, LexError> {
        let text: *const str = match s.to_str() {
            Ok(t) => t,
            Err(_) => return lex_err(format!("lone surrogate in {what}")),
        };
        self.keep.push(s.clone());
        // SAFETY: `text` points into the `str` object just pushed to
        // `keep`, which holds a strong reference to it until this input is
        // dropped. The input is owned by the parser, which hands the text
        // on only for the length of a builder call or keeps it in its own
        // locals (a map's keys), all gone when `parse_input` returns, so no
        // borrow outlives the object; a `str`'s UTF-8 text (its data, or
        // the UTF-8 copy CPython caches in it) does not move or change while
        // the object lives.
        Ok(Cow::Borrowed(unsafe { &*text }))
    }
}

impl<'py> Input<'static> for PyInput<'py> {
    type Mark = (usize, Option<Bound<'py, PyAny>>);

    fn peek(&mut self) -> Peek {
        let Some(o) = &self.cur else {
            return Peek::Other;
        };
        if o.is_instance_of::<PyString>() {
            Peek::String
        } else if o.is_instance_of::<PyBool>() {
            if o.is_truthy().unwrap_or(false) {
                Peek::True
            } else {
                Peek::False
            }
        } else if o.is_instance_of::<PyInt>() || o.is_instance_of::<PyFloat>() {
            Peek::Number
        } else if o.is_none() {
            Peek::Null
        } else if o.is_instance_of::<PyDict>() {
            Peek::Object
        } else if o.is_instance_of::<PyList>() || o.is_instance_of::<PyTuple>() {
            Peek::Array
        } else {
            Peek::Other
        }
    }

    fn pos(&mut self) -> usize {
        0
    }

    fn line_col(&self, _offset: usize) -> (usize, usize) {
        (0, 0)
    }

    fn at_end(&mut self) -> bool {
        self.cur.is_none() && self.stack.is_empty()
    }

    fn open_object(&mut self, what: &str) -> Result<bool, LexError> {
        let Some(d) = self.cur.as_ref().and_then(|o| o.cast::<PyDict>().ok()) else {
            return self.expected(what);
        };
        let items: Vec<_> = d.iter().collect();
        self.cur = None;
        if items.is_empty() {
            return Ok(false);
        }
        self.stack.push(PFrame::Obj { items, i: 0 });
        Ok(true)
    }

    fn key(&mut self) -> Result<Cow<'static, str>, LexError> {
        let Some(PFrame::Obj { items, i }) = self.stack.last() else {
            return lex_err("expected a key".into());
        };
        let (k, v) = items[*i].clone();
        self.cur = Some(v);
        if let Ok(s) = k.cast::<PyString>() {
            return self.borrow(s, "a key");
        }
        let key = if k.is_instance_of::<PyBool>() {
            if k.is_truthy().unwrap_or(false) {
                "true"
            } else {
                "false"
            }
            .to_string()
        } else if k.is_instance_of::<PyInt>() {
            k.str().map(|s| s.to_string()).unwrap_or_default()
        } else if k.is_instance_of::<PyFloat>() {
            k.repr().map(|s| s.to_string()).unwrap_or_default()
        } else if k.is_none() {
            "null".into()
        } else {
            return lex_err(format!(
                "keys must be str, int, float, bool or None, not {}",
                type_name(Some(&k))
            ));
        };
        Ok(Cow::Owned(key))
    }

    fn next_member(&mut self) -> Result<bool, LexError> {
        let Some(PFrame::Obj { items, i }) = self.stack.last_mut() else {
            return lex_err("not in an object".into());
        };
        *i += 1;
        if *i < items.len() {
            return Ok(true);
        }
        self.stack.pop();
        self.cur = None;
        Ok(false)
    }

    fn open_array(&mut self, what: &str) -> Result<bool, LexError> {
        let seq = match &self.cur {
            Some(o) => match (o.cast::<PyList>(), o.cast::<PyTuple>()) {
                (Ok(l), _) => Seq::List(l.clone()),
                (_, Ok(t)) => Seq::Tuple(t.clone()),
                _ => return self.expected(what),
            },
            None => return self.expected(what),
        };
        let len = match &seq {
            Seq::List(l) => l.len(),
            Seq::Tuple(t) => t.len(),
        };
        self.cur = seq.get(0);
        if self.cur.is_none() {
            return Ok(false);
        }
        self.stack.push(PFrame::Arr { seq, len, i: 0 });
        Ok(true)
    }

    fn next_item(&mut self) -> Result<bool, LexError> {
        let Some(PFrame::Arr { seq, len, i }) = self.stack.last_mut() else {
            return lex_err("not in an array".into());
        };
        *i += 1;
        // A list that shrank meanwhile ends early.
        if *i < *len {
            if let Some(v) = seq.get(*i) {
                self.cur = Some(v);
                return Ok(true);
            }
        }
        self.stack.pop();
        self.cur = None;
        Ok(false)
    }

    fn string(&mut self) -> Result<Cow<'static, str>, LexError> {
        let o = self.take()?;
        let Ok(s) = o.cast::<PyString>() else {
            return lex_err(format!("expected a string, found {}", type_name(Some(&o))));
        };
        self.borrow(s, "a string")
    }

    fn number(&mut self) -> Result<Num<'static>, LexError> {
        let o = self.take()?;
        if let Ok(f) = o.cast::<PyFloat>() {
            return Ok(Num::Float(f.value()));
        }
        if let Ok(v) = o.extract::<i128>() {
            return Ok(Num::Int(v));
        }
        if o.is_instance_of::<PyInt>() {
            let neg = o.lt(0).unwrap_or(false);
            return Ok(Num::Float(if neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }));
        }
        lex_err(format!("expected a number, found {}", type_name(Some(&o))))
    }

    fn literal(&mut self) -> Result<(), LexError> {
        self.take().map(|_| ())
    }

    fn skip_value(&mut self, _max_depth: usize) -> Result<(), LexError> {
        self.take().map(|_| ())
    }

    fn mark(&mut self) -> Self::Mark {
        (self.stack.len(), self.cur.clone())
    }

    fn reset(&mut self, (depth, cur): Self::Mark) {
        self.stack.truncate(depth);
        self.cur = cur;
    }

    fn expected<T>(&mut self, what: &str) -> Result<T, LexError> {
        lex_err(format!(
            "expected {what}, found {}",
            type_name(self.cur.as_ref())
        ))
    }
}
