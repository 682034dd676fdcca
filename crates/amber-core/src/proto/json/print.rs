//! The ProtoJSON printer: reads a message through a [`MessageSource`] and
//! writes the text `json_format.MessageToJson` writes for it.

use crate::proto::json::b64;
use crate::proto::json::num;
use crate::proto::json::wkt::{self, Wkt, NULL_VALUE};
use crate::proto::json::write::{Sink, Writer};
use crate::proto::runtime::dynamic::{decode_dyn, DynSource};
use crate::proto::runtime::error::{render, EncodeError, EncodeKind, PathSeg};
use crate::proto::runtime::scalar::{is_zero, Scalar};
use crate::proto::runtime::schema::{Cardinality, DefaultValue, FieldInfo, Kind, Tables};
use crate::proto::runtime::source::{MessageSource, SrcValue};
use crate::proto::wire;

/// The printer's settings: `json_format.MessageToJson`'s options.
#[derive(Debug, Clone, Copy)]
pub struct PrintOptions {
    /// Keys are the fields' `.proto` names, not their JSON (lowerCamel)
    /// names.
    pub preserving_proto_field_name: bool,
    /// Enum values as numbers, not names.
    pub use_integers_for_enums: bool,
    /// Also print fields without presence (implicit-presence scalars,
    /// repeated fields and maps) at their default values.
    pub always_print_fields_with_no_presence: bool,
    /// `None`: one line. `Some(n)`: `json.dumps(indent=n)`'s layout.
    pub indent: Option<usize>,
    /// Every object's keys sorted.
    pub sort_keys: bool,
    /// Non-ASCII characters written as `\uXXXX` escapes.
    pub ensure_ascii: bool,
    /// Deepest nesting of messages printed.
    pub max_depth: usize,
}

impl Default for PrintOptions {
    /// `MessageToJson`'s defaults, but compact (`indent=None`).
    fn default() -> Self {
        PrintOptions {
            preserving_proto_field_name: false,
            use_integers_for_enums: false,
            always_print_fields_with_no_presence: false,
            indent: None,
            sort_keys: false,
            ensure_ascii: true,
            max_depth: wire::MAX_DEPTH,
        }
    }
}

/// Why printing failed.
#[derive(Debug)]
pub enum PrintFailure<E> {
    /// A value ProtoJSON cannot print (a Timestamp out of range, an Any
    /// of an unknown type, a NaN in a `Value`, ...), or nesting too deep.
    Print(Box<EncodeError>),
    /// The source's own error.
    Source(E),
}

type Res<T, E> = Result<T, PrintFailure<E>>;

/// Print message `m` of type `ty` as ProtoJSON text.
pub fn print<'m, S: MessageSource<'m>>(
    tables: &Tables,
    ty: u32,
    m: S::Msg,
    src: &S,
    opts: &PrintOptions,
) -> Res<String, S::Err> {
    let mut w = Writer::new(opts.indent, opts.sort_keys, opts.ensure_ascii);
    print_to(tables, ty, m, src, opts, &mut w)?;
    // Only whole `&str`s and ASCII were written.
    Ok(String::from_utf8(w.out).unwrap_or_default())
}

/// Print message `m` of type `ty` into any [`Sink`] (the Python edge
/// makes dicts and lists with one; `indent`, `sort_keys` and
/// `ensure_ascii` are the text [`Writer`]'s own settings).
pub fn print_to<'m, S: MessageSource<'m>, W: Sink>(
    tables: &Tables,
    ty: u32,
    m: S::Msg,
    src: &S,
    opts: &PrintOptions,
    sink: &mut W,
) -> Res<(), S::Err> {
    let mut p = Printer {
        t: tables,
        o: *opts,
        w: sink,
        path: Vec::new(),
        scratch: Vec::new(),
    };
    crate::bytes::stack::enter(
        || p.message(src, ty, m, 0),
        || {
            PrintFailure::Print(Box::new(EncodeError {
                kind: EncodeKind::Limit,
                message: "out of stack".into(),
                path: "$".into(),
            }))
        },
    )
}

struct Printer<'t, W> {
    t: &'t Tables,
    o: PrintOptions,
    w: W,
    path: Vec<PathSeg<'t>>,
    /// Reused for base64.
    scratch: Vec<u8>,
}

/// A field's value read through the source.
fn src_err<E>(e: E) -> PrintFailure<E> {
    PrintFailure::Source(e)
}

impl<'t, W: Sink> Printer<'t, W> {
    #[cold]
    fn err<T, E>(&self, kind: EncodeKind, msg: impl Into<String>) -> Res<T, E> {
        Err(PrintFailure::Print(Box::new(EncodeError {
            kind,
            message: msg.into(),
            path: render(&self.path),
        })))
    }

    fn message<'m, S: MessageSource<'m>>(
        &mut self,
        src: &S,
        ty: u32,
        m: S::Msg,
        depth: usize,
    ) -> Res<(), S::Err> {
        if depth > self.o.max_depth {
            return self.err(
                EncodeKind::Limit,
                format!("messages nested deeper than {}", self.o.max_depth),
            );
        }
        let t = self.t;
        let info = t.message(ty);
        crate::bytes::stack::descend(
            depth,
            || match wkt::wkt_of(&info.full_name) {
                Some(w) => self.wkt(src, w, ty, m, depth),
                None => {
                    self.w.begin_object_sized(info.fields.len());
                    self.fields(src, ty, m, depth)?;
                    self.w.end_object();
                    Ok(())
                }
            },
            || {
                PrintFailure::Print(Box::new(EncodeError::new(
                    EncodeKind::Limit,
                    "out of stack",
                )))
            },
        )
    }

    /// Whether field `f` is printed as set, and its number of values; for
    /// a singular field, its value (read once: the check and the printing
    /// share it).
    #[allow(clippy::type_complexity)]
    fn present<'m, S: MessageSource<'m>>(
        &self,
        src: &S,
        m: S::Msg,
        f: &FieldInfo,
    ) -> Res<(bool, Option<SrcValue<'m, S::Msg>>, usize), S::Err> {
        Ok(match f.card {
            Cardinality::Singular { presence } => match src.singular(m, f).map_err(src_err)? {
                None => (false, None, 0),
                Some(v) => {
                    let set = presence || !matches!(v, SrcValue::Scalar(s) if is_zero(s));
                    (set, Some(v), 1)
                }
            },
            _ => {
                let n = src.count(m, f).map_err(src_err)?;
                (n > 0, None, n)
            }
        })
    }

    fn name(&self, f: &'t FieldInfo) -> &'t str {
        if self.o.preserving_proto_field_name {
            &f.name
        } else {
            &f.json_name
        }
    }

    /// The members of a regular message (no braces): set fields by
    /// number, then (`always_print_fields_with_no_presence`) the unset
    /// fields without presence, in declaration order.
    fn fields<'m, S: MessageSource<'m>>(
        &mut self,
        src: &S,
        ty: u32,
        m: S::Msg,
        depth: usize,
    ) -> Res<(), S::Err> {
        let t = self.t;
        let info = t.message(ty);
        let always = self.o.always_print_fields_with_no_presence;
        let mut unset = false;
        for f in &info.fields {
            let (set, v, n) = self.present(src, m, f)?;
            if !set {
                unset |= always && !matches!(f.card, Cardinality::Singular { presence: true });
                continue;
            }
            self.w.field_key(self.name(f));
            self.path.push(PathSeg {
                name: &f.name,
                index: None,
            });
            match v {
                Some(v) => self.value(src, f.kind, v, depth)?,
                None => self.field(src, m, f, n, depth)?,
            }
            self.path.pop();
        }
        if unset {
            for &i in &info.decl_order {
                let f = &info.fields[i as usize];
                if matches!(f.card, Cardinality::Singular { presence: true }) {
                    continue;
                }
                if self.present(src, m, f)?.0 {
                    continue;
                }
                self.w.field_key(self.name(f));
                self.path.push(PathSeg {
                    name: &f.name,
                    index: None,
                });
                match f.card {
                    Cardinality::Map => {
                        self.w.begin_object();
                        self.w.end_object();
                    }
                    Cardinality::Repeated { .. } => {
                        self.w.begin_array();
                        self.w.end_array();
                    }
                    Cardinality::Singular { .. } => {
                        let d = default_scalar(f);
                        self.scalar::<S::Err>(f.kind, d)?;
                    }
                }
                self.path.pop();
            }
        }
        Ok(())
    }

    /// A Struct or ListValue: its only field (field 1, a map or a repeated
    /// field) as the object or array itself, `{}` or `[]` when empty.
    fn only_field<'m, S: MessageSource<'m>>(
        &mut self,
        src: &S,
        ty: u32,
        m: S::Msg,
        depth: usize,
        array: bool,
    ) -> Res<(), S::Err> {
        let info = self.t.message(ty);
        let Some(f) = info.field(1) else {
            return self.err(
                EncodeKind::Unsupported,
                format!("a {} without field 1", info.full_name),
            );
        };
        let n = src.count(m, f).map_err(src_err)?;
        self.path.push(PathSeg {
            name: &f.name,
            index: None,
        });
        match (n, array) {
            (0, true) => {
                self.w.begin_array();
                self.w.end_array();
            }
            (0, false) => {
                self.w.begin_object();
                self.w.end_object();
            }
            _ => self.field(src, m, f, n, depth)?,
        }
        self.path.pop();
        Ok(())
    }

    /// The value of a set field (`n` values).
    fn field<'m, S: MessageSource<'m>>(
        &mut self,
        src: &S,
        m: S::Msg,
        f: &'t FieldInfo,
        n: usize,
        depth: usize,
    ) -> Res<(), S::Err> {
        match f.card {
            Cardinality::Singular { .. } => {
                let v = src.get(m, f, 0).map_err(src_err)?;
                self.value(src, f.kind, v, depth)
            }
            Cardinality::Repeated { .. } => {
                // Numbers the source keeps natively are read from their slice.
                let nums = match f.kind.packable() {
                    true => src.numbers(m, f).map_err(src_err)?,
                    false => None,
                };
                self.w.begin_array();
                for i in 0..n {
                    if let Some(last) = self.path.last_mut() {
                        last.index = Some(i as u32);
                    }
                    self.w.item();
                    let v = match nums.and_then(|v| Scalar::from_bits(f.kind, *v.get(i)?)) {
                        Some(s) => SrcValue::Scalar(s),
                        None => src.get(m, f, i).map_err(src_err)?,
                    };
                    self.value(src, f.kind, v, depth)?;
                }
                self.w.end_array();
                Ok(())
            }
            Cardinality::Map => {
                let Kind::Message(entry) = f.kind else {
                    return self.err(EncodeKind::Unsupported, "a map field without an entry type");
                };
                let t = self.t;
                let einfo = t.message(entry);
                let (Some(kf), Some(vf)) = (einfo.field(1), einfo.field(2)) else {
                    return self.err(
                        EncodeKind::Unsupported,
                        "map entry type without key and value",
                    );
                };
                self.w.begin_object_sized(n);
                let mut key = Vec::new();
                for i in 0..n {
                    if let Some(last) = self.path.last_mut() {
                        last.index = Some(i as u32);
                    }
                    let (k, v) = src.entry(m, f, i).map_err(src_err)?;
                    key.clear();
                    self.map_key::<S::Err>(kf.kind, k, &mut key)?;
                    match crate::bytes::utf8::str(&key) {
                        Ok(k) => self.w.key(k),
                        Err(_) => {
                            return self
                                .err(EncodeKind::InvalidValue, "a map key holds invalid UTF-8")
                        }
                    }
                    self.value(src, vf.kind, v, depth)?;
                }
                self.w.end_object();
                Ok(())
            }
        }
    }

    fn map_key<E>(&self, kind: Kind, k: Scalar<'_>, out: &mut Vec<u8>) -> Res<(), E> {
        match (kind, k) {
            (_, Scalar::Bool(b)) => out.extend_from_slice(if b { b"true" } else { b"false" }),
            (_, Scalar::Str(s) | Scalar::Bytes(s)) => out.extend_from_slice(s),
            (_, s) => match (int(s), uint(s)) {
                (Some(v), _) => num::push_i64(out, v),
                (_, Some(v)) => num::push_u64(out, v),
                _ => return self.err(EncodeKind::TypeMismatch, format!("{k:?} is not a map key")),
            },
        }
        Ok(())
    }

    fn value<'m, S: MessageSource<'m>>(
        &mut self,
        src: &S,
        kind: Kind,
        v: SrcValue<'m, S::Msg>,
        depth: usize,
    ) -> Res<(), S::Err> {
        match (kind, v) {
            (Kind::Message(ty), SrcValue::Message(sub)) => self.message(src, ty, sub, depth + 1),
            (Kind::Message(_), SrcValue::Scalar(_)) => self.err(
                EncodeKind::TypeMismatch,
                "a scalar where a message was expected",
            ),
            (_, SrcValue::Message(_)) => self.err(
                EncodeKind::TypeMismatch,
                "a message where a scalar was expected",
            ),
            (kind, SrcValue::Scalar(s)) => self.scalar(kind, s),
        }
    }

    fn scalar<E>(&mut self, kind: Kind, s: Scalar<'_>) -> Res<(), E> {
        match kind {
            Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => match int(s) {
                Some(v) => self.w.int(v),
                None => return self.mismatch(kind, s),
            },
            Kind::Uint32 | Kind::Fixed32 => match uint(s) {
                Some(v) => self.w.int(v as i64),
                None => return self.mismatch(kind, s),
            },
            Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => match int(s) {
                Some(v) => self.w.int_str(v.into()),
                None => return self.mismatch(kind, s),
            },
            Kind::Uint64 | Kind::Fixed64 => match uint(s) {
                Some(v) => self.w.int_str(v.into()),
                None => return self.mismatch(kind, s),
            },
            Kind::Bool => match s {
                Scalar::Bool(b) => self.w.bool(b),
                _ => return self.mismatch(kind, s),
            },
            Kind::Double | Kind::Float => {
                let v = match (kind, s) {
                    (Kind::Float, Scalar::F32(v)) => v as f64,
                    (Kind::Float, Scalar::F64(v)) => v as f32 as f64,
                    (_, Scalar::F64(v)) => v,
                    (_, Scalar::F32(v)) => v as f64,
                    _ => return self.mismatch(kind, s),
                };
                self.float(v, kind == Kind::Float);
            }
            Kind::String => match s {
                Scalar::Str(b) | Scalar::Bytes(b) => match crate::bytes::utf8::str(b) {
                    Ok(s) => self.w.str(s),
                    Err(_) => {
                        return self.err(
                            EncodeKind::InvalidValue,
                            "a string field holds invalid UTF-8",
                        )
                    }
                },
                _ => return self.mismatch(kind, s),
            },
            Kind::Bytes => match s {
                Scalar::Str(b) | Scalar::Bytes(b) => {
                    let mut buf = std::mem::take(&mut self.scratch);
                    buf.clear();
                    b64::encode(&mut buf, b);
                    // Base64 is ASCII.
                    self.w
                        .str(crate::bytes::utf8::str(&buf).unwrap_or_default());
                    self.scratch = buf;
                }
                _ => return self.mismatch(kind, s),
            },
            Kind::Enum(e) => {
                let Some(n) = int(s) else {
                    return self.mismatch(kind, s);
                };
                let n = n as i32;
                if self.o.use_integers_for_enums {
                    self.w.int(n as i64);
                    return Ok(());
                }
                let info = &self.t.enums[e as usize];
                if info.full_name == NULL_VALUE {
                    self.w.null();
                } else if let Some((name, _)) = info.names.iter().find(|v| v.1 == n) {
                    self.w.str(name);
                } else if info.closed {
                    return self.err(EncodeKind::OutOfRange, format!(
                        "enum field contains the number {n}, which is not a value of closed enum {}",
                        info.full_name
                    ));
                } else {
                    self.w.int(n as i64);
                }
            }
            Kind::Message(_) => return self.mismatch(kind, s),
        }
        Ok(())
    }

    fn float(&mut self, v: f64, single: bool) {
        if v.is_nan() {
            self.w.str("NaN");
        } else if v.is_infinite() {
            self.w.str(if v > 0.0 { "Infinity" } else { "-Infinity" });
        } else if single {
            self.w.float(num::shortest_f32(v as f32));
        } else {
            self.w.float(v);
        }
    }

    #[cold]
    fn mismatch<E>(&self, kind: Kind, s: Scalar<'_>) -> Res<(), E> {
        self.err(
            EncodeKind::TypeMismatch,
            format!("{s:?} does not fit a {kind:?} field"),
        )
    }

    /// Field `num` of message `m` (type `ty`): its value, or `None` when
    /// unset.
    fn get<'m, S: MessageSource<'m>>(
        &self,
        src: &S,
        ty: u32,
        m: S::Msg,
        num: u32,
    ) -> Res<Option<SrcValue<'m, S::Msg>>, S::Err> {
        let t = self.t;
        let Some(f) = t.message(ty).field(num) else {
            return self.err(
                EncodeKind::Unsupported,
                format!("{} has no field {num}", t.message(ty).full_name),
            );
        };
        src.singular(m, f).map_err(src_err)
    }

    /// A scalar field `num` of a well-known type; `None` when unset.
    fn get_scalar<'m, S: MessageSource<'m>>(
        &self,
        src: &S,
        ty: u32,
        m: S::Msg,
        num: u32,
    ) -> Res<Option<Scalar<'m>>, S::Err> {
        match self.get(src, ty, m, num)? {
            Some(SrcValue::Scalar(s)) => Ok(Some(s)),
            Some(SrcValue::Message(_)) => self.err(
                EncodeKind::TypeMismatch,
                "a message where a scalar was expected",
            ),
            None => Ok(None),
        }
    }

    fn wkt<'m, S: MessageSource<'m>>(
        &mut self,
        src: &S,
        w: Wkt,
        ty: u32,
        m: S::Msg,
        depth: usize,
    ) -> Res<(), S::Err> {
        let t = self.t;
        match w {
            Wkt::Wrapper => {
                let Some(f) = t.message(ty).field(1) else {
                    return self.err(EncodeKind::Unsupported, "a wrapper without its value field");
                };
                let v = match self.get(src, ty, m, 1)? {
                    Some(SrcValue::Scalar(s)) => s,
                    Some(_) => return self.err(EncodeKind::TypeMismatch, "a message in a wrapper"),
                    None => default_scalar(f),
                };
                self.scalar(f.kind, v)
            }
            Wkt::Timestamp | Wkt::Duration => {
                let seconds = self.get_scalar(src, ty, m, 1)?.and_then(int).unwrap_or(0);
                let nanos = self.get_scalar(src, ty, m, 2)?.and_then(int).unwrap_or(0);
                let text = if w == Wkt::Timestamp {
                    wkt::timestamp_to_string(seconds, nanos)
                } else {
                    wkt::duration_to_string(seconds, nanos)
                };
                match text {
                    Ok(s) => self.w.str(&s),
                    Err(e) => return self.err(EncodeKind::OutOfRange, e),
                }
                Ok(())
            }
            Wkt::FieldMask => {
                let Some(f) = t.message(ty).field(1) else {
                    return self.err(EncodeKind::Unsupported, "a FieldMask without paths");
                };
                let n = src.count(m, f).map_err(src_err)?;
                let mut s = String::new();
                for i in 0..n {
                    if i > 0 {
                        s.push(',');
                    }
                    let p = match src.get(m, f, i).map_err(src_err)? {
                        SrcValue::Scalar(Scalar::Str(b)) => std::str::from_utf8(b).ok(),
                        _ => None,
                    };
                    let Some(p) = p else {
                        return self.err(
                            EncodeKind::TypeMismatch,
                            "a FieldMask path that is not a string",
                        );
                    };
                    if let Err(e) = wkt::path_to_camel(p, &mut s) {
                        return self.err(EncodeKind::InvalidValue, e);
                    }
                }
                self.w.str(&s);
                Ok(())
            }
            Wkt::Struct => self.only_field(src, ty, m, depth, false),
            Wkt::ListValue => self.only_field(src, ty, m, depth, true),
            Wkt::Value => {
                let info = t.message(ty);
                for f in &info.fields {
                    if src.count(m, f).map_err(src_err)? == 0 {
                        continue;
                    }
                    let v = src.get(m, f, 0).map_err(src_err)?;
                    self.path.push(PathSeg {
                        name: &f.name,
                        index: None,
                    });
                    match (f.number, v) {
                        (1, _) => self.w.null(),
                        (2, SrcValue::Scalar(s)) => {
                            let x = match s {
                                Scalar::F64(x) => x,
                                Scalar::F32(x) => x as f64,
                                _ => return self.mismatch(f.kind, s),
                            };
                            if !x.is_finite() {
                                return self.err(EncodeKind::OutOfRange, format!(
                                    "Fail to serialize {} for Value.number_value, which would parse as string_value",
                                    if x.is_nan() { "NaN" } else { "Infinity" }
                                ));
                            }
                            self.w.float(x);
                        }
                        (_, v) => self.value(src, f.kind, v, depth)?,
                    }
                    self.path.pop();
                    return Ok(());
                }
                self.w.null();
                Ok(())
            }
            Wkt::Any => self.any(src, ty, m, depth),
        }
    }

    fn any<'m, S: MessageSource<'m>>(
        &mut self,
        src: &S,
        ty: u32,
        m: S::Msg,
        depth: usize,
    ) -> Res<(), S::Err> {
        let url: &[u8] = match self.get_scalar(src, ty, m, 1)? {
            Some(Scalar::Str(b)) => b,
            None => b"",
            _ => return self.err(EncodeKind::TypeMismatch, "Any.type_url is not a string"),
        };
        let value: &[u8] = match self.get_scalar(src, ty, m, 2)? {
            Some(Scalar::Bytes(b) | Scalar::Str(b)) => b,
            None => b"",
            _ => return self.err(EncodeKind::TypeMismatch, "Any.value is not bytes"),
        };
        if url.is_empty() && value.is_empty() {
            self.w.begin_object();
            self.w.end_object();
            return Ok(());
        }
        let Ok(url) = std::str::from_utf8(url) else {
            return self.err(EncodeKind::InvalidValue, "Any.type_url holds invalid UTF-8");
        };
        let name = url.rsplit('/').next().unwrap_or(url);
        let t = self.t;
        let Some(sub_ty) = t.message_index(name) else {
            return self.err(
                EncodeKind::InvalidValue,
                format!("Can not find message descriptor by type_url: {url}"),
            );
        };
        let dm = match decode_dyn(t, sub_ty, value) {
            Ok(dm) => dm,
            Err(e) => {
                return self.err(
                    EncodeKind::InvalidValue,
                    format!("Any.value is not a valid {name}: {e}"),
                )
            }
        };
        self.w.begin_object();
        self.w.key("@type");
        self.w.str(url);
        let inner = if wkt::wkt_of(&t.message(sub_ty).full_name).is_some() {
            self.w.key("value");
            self.path.push(PathSeg {
                name: "value",
                index: None,
            });
            let r = self.message(&DynSource, sub_ty, &dm, depth + 1);
            self.path.pop();
            r
        } else {
            self.fields(&DynSource, sub_ty, &dm, depth + 1)
        };
        inner.map_err(|e| match e {
            PrintFailure::Print(p) => PrintFailure::Print(p),
            PrintFailure::Source(e) => PrintFailure::Print(Box::new(e)),
        })?;
        self.w.end_object();
        Ok(())
    }
}

/// A singular field's default as a scalar.
pub(crate) fn default_scalar(f: &FieldInfo) -> Scalar<'_> {
    match (&f.default, f.kind) {
        (DefaultValue::Int(v), Kind::Int64 | Kind::Sint64 | Kind::Sfixed64) => Scalar::I64(*v),
        (DefaultValue::Int(v), _) => Scalar::I32(*v as i32),
        (DefaultValue::Uint(v), Kind::Uint64 | Kind::Fixed64) => Scalar::U64(*v),
        (DefaultValue::Uint(v), _) => Scalar::U32(*v as u32),
        (DefaultValue::Float(v), Kind::Float) => Scalar::F32(*v as f32),
        (DefaultValue::Float(v), _) => Scalar::F64(*v),
        (DefaultValue::Bool(v), _) => Scalar::Bool(*v),
        (DefaultValue::Str(v), _) => Scalar::Str(v.as_bytes()),
        (DefaultValue::Bytes(v), Kind::String) => Scalar::Str(v),
        (DefaultValue::Bytes(v), _) => Scalar::Bytes(v),
        (DefaultValue::Enum(v), _) => Scalar::Enum(*v),
        (DefaultValue::None, _) => Scalar::I32(0),
    }
}

fn int(s: Scalar<'_>) -> Option<i64> {
    Some(match s {
        Scalar::I32(v) | Scalar::Enum(v) => v as i64,
        Scalar::I64(v) => v,
        Scalar::U32(v) => v as i64,
        Scalar::U64(v) => i64::try_from(v).ok()?,
        Scalar::Bool(v) => v as i64,
        _ => return None,
    })
}

fn uint(s: Scalar<'_>) -> Option<u64> {
    Some(match s {
        Scalar::U32(v) => v as u64,
        Scalar::U64(v) => v,
        Scalar::I32(v) | Scalar::Enum(v) => u64::try_from(v).ok()?,
        Scalar::I64(v) => u64::try_from(v).ok()?,
        Scalar::Bool(v) => v as u64,
        _ => return None,
    })
}
