//! The forms ProtoJSON gives the well-known types: `Timestamp`, `Duration`,
//! `FieldMask`, the wrappers, `Struct`, `Value`, `ListValue` and `Any` (a
//! second `impl` block of the [`Parser`](super::Parser)).

use std::borrow::Cow;

use super::values::num_f64;
use super::{ParseFailure, Parser, Res, Tok};
use crate::proto::json::input::{Input, Peek};
use crate::proto::json::wkt::{self, Wkt};
use crate::proto::runtime::builder::MessageBuilder;
use crate::proto::runtime::dynamic::{dedup_maps, encode_dyn, DynBuilder, DynMessage};
use crate::proto::runtime::error::DecodeKind;
use crate::proto::runtime::error::PathSeg;
use crate::proto::runtime::scalar::{is_zero, Scalar};
use crate::proto::runtime::schema::{Kind, MessageInfo};

impl<'t, 'a, I: Input<'a>> Parser<'t, 'a, I> {
    pub(super) fn wkt<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        w: Wkt,
        ty: u32,
        m: &mut B::Msg,
        depth: usize,
    ) -> Res<(), B::Err> {
        let t = self.t;
        let info = t.message(ty);
        let at = self.here();
        let Some(f1) = info.field(1) else {
            return self.err(
                DecodeKind::Malformed,
                at,
                format!("{} has no field 1", info.full_name),
            );
        };
        match w {
            Wkt::Wrapper => {
                let tok = self.token()?;
                if let Tok::Null = tok {
                    return self.err(
                        DecodeKind::TypeMismatch,
                        at,
                        format!("null is not a {}", info.full_name),
                    );
                }
                let mut buf = Vec::new();
                match self.convert(f1.kind, &tok, &mut buf, false) {
                    Ok(s) if is_zero(s) => Ok(()),
                    Ok(s) => b.set(m, f1, s).map_err(ParseFailure::Build),
                    Err(bad) => self.bad(at, bad),
                }
            }
            Wkt::Timestamp | Wkt::Duration | Wkt::FieldMask => {
                let Tok::Str(s) = self.token()? else {
                    return self.err(
                        DecodeKind::TypeMismatch,
                        at,
                        format!("{} JSON value is not a string", info.full_name),
                    );
                };
                if w == Wkt::FieldMask {
                    if s.is_empty() {
                        return Ok(());
                    }
                    for p in s.split(',') {
                        let snake = match wkt::path_to_snake(p) {
                            Ok(p) => p,
                            Err(e) => return self.err(DecodeKind::Malformed, at, e),
                        };
                        b.push(m, f1, Scalar::Str(snake.as_bytes()))
                            .map_err(ParseFailure::Build)?;
                    }
                    return Ok(());
                }
                let parsed = if w == Wkt::Timestamp {
                    wkt::timestamp_from_str(&s)
                } else {
                    wkt::duration_from_str(&s)
                };
                let (secs, nanos) = match parsed {
                    Ok(v) => v,
                    Err((kind, e)) => return self.err(kind, at, e),
                };
                if secs != 0 {
                    b.set(m, f1, Scalar::I64(secs))
                        .map_err(ParseFailure::Build)?;
                }
                if nanos != 0 {
                    if let Some(f2) = info.field(2) {
                        b.set(m, f2, Scalar::I32(nanos as i32))
                            .map_err(ParseFailure::Build)?;
                    }
                }
                Ok(())
            }
            Wkt::Struct => {
                self.path.push(PathSeg {
                    name: &f1.name,
                    index: None,
                });
                self.map(b, m, f1, depth)?;
                self.path.pop();
                Ok(())
            }
            Wkt::ListValue => {
                self.path.push(PathSeg {
                    name: &f1.name,
                    index: None,
                });
                self.repeated(b, m, f1, depth)?;
                self.path.pop();
                Ok(())
            }
            Wkt::Value => self.value(b, info, m, depth),
            Wkt::Any => self.any(b, ty, m, depth),
        }
    }

    /// A `google.protobuf.Value`: any JSON value.
    fn value<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        info: &'t MessageInfo,
        m: &mut B::Msg,
        depth: usize,
    ) -> Res<(), B::Err> {
        let at = self.here();
        let num = match self.inp.peek() {
            Peek::Null => 1,
            Peek::String => 3,
            Peek::True | Peek::False => 4,
            Peek::Object => 5,
            Peek::Array => 6,
            _ => 2,
        };
        let Some(f) = info.field(num) else {
            return self.err(
                DecodeKind::Malformed,
                at,
                "google.protobuf.Value without its fields",
            );
        };
        self.path.push(PathSeg {
            name: &f.name,
            index: None,
        });
        match f.kind {
            Kind::Message(sty) => {
                let mut sub = b.begin(m, f, sty).map_err(ParseFailure::Build)?;
                self.message(b, sty, &mut sub, depth + 1)?;
                b.end(m, f, sub).map_err(ParseFailure::Build)?;
            }
            _ => {
                let tok = self.token()?;
                let s = match &tok {
                    Tok::Null => Scalar::Enum(0),
                    Tok::Str(s) => Scalar::Str(s.as_bytes()),
                    Tok::Bool(v) => Scalar::Bool(*v),
                    // Overflow makes an infinity, as Python's json does.
                    Tok::Num(n) => Scalar::F64(num_f64(*n)),
                };
                b.set(m, f, s).map_err(ParseFailure::Build)?;
            }
        }
        self.path.pop();
        Ok(())
    }

    /// A `google.protobuf.Any`: `{"@type": url, ...fields}`, or
    /// `{"@type": url, "value": ...}` for a well-known type. `@type` may
    /// come anywhere: the object is read once to find it, then again.
    fn any<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        ty: u32,
        m: &mut B::Msg,
        depth: usize,
    ) -> Res<(), B::Err> {
        let t = self.t;
        let info = t.message(ty);
        let start = self.here();
        let mark = self.inp.mark();
        let mut url: Option<Cow<'a, str>> = None;
        let mut has_value = false;
        if !self.open_object(|| "an object for google.protobuf.Any".into())? {
            return Ok(());
        }
        loop {
            let (k, at) = self.key()?;
            if k == "@type" {
                if url.is_some() {
                    return self.err(DecodeKind::Duplicate, at, "duplicate key \"@type\"");
                }
                let vat = self.here();
                match self.token()? {
                    Tok::Str(s) => url = Some(s),
                    _ => return self.err(DecodeKind::TypeMismatch, vat, "@type is not a string"),
                }
            } else {
                has_value |= k == "value";
                self.skip()?;
            }
            if !self.next_member()? {
                break;
            }
        }
        let Some(url) = url else {
            return self.err(
                DecodeKind::Malformed,
                start,
                "@type is missing when parsing any message",
            );
        };
        let name = url.rsplit('/').next().unwrap_or(&url);
        let Some(sub_ty) = t.message_index(name) else {
            return self.err(
                DecodeKind::UnknownField,
                start,
                format!("Can not find message descriptor by type_url: {url}"),
            );
        };
        // Again, into a tree, which becomes the Any's bytes.
        self.inp.reset(mark);
        let mut db = DynBuilder { tables: t };
        let mut dm = DynMessage::new(sub_ty);
        let r = if wkt::wkt_of(&t.message(sub_ty).full_name).is_some() {
            if !has_value {
                return self.err(
                    DecodeKind::Malformed,
                    start,
                    "an Any of a well-known type needs a \"value\" member",
                );
            }
            self.any_value(&mut db, sub_ty, &mut dm, depth)
        } else {
            self.object(&mut db, sub_ty, &mut dm, depth, true)
        };
        r.map_err(|e| match e {
            ParseFailure::Json(e) => ParseFailure::Json(e),
            ParseFailure::Build(never) => match never {},
        })?;
        dedup_maps(&mut dm);
        let bytes = match encode_dyn(t, &dm, true) {
            Ok(v) => v,
            Err(e) => return self.err(DecodeKind::Malformed, start, e.to_string()),
        };
        let (Some(f1), Some(f2)) = (info.field(1), info.field(2)) else {
            return self.err(
                DecodeKind::Malformed,
                start,
                "google.protobuf.Any without its fields",
            );
        };
        b.set(m, f1, Scalar::Str(url.as_bytes()))
            .map_err(ParseFailure::Build)?;
        if !bytes.is_empty() {
            b.set(m, f2, Scalar::Bytes(&bytes))
                .map_err(ParseFailure::Build)?;
        }
        Ok(())
    }

    /// The `"value"` member of an Any of a well-known type (other members
    /// but `@type` are ignored, as json_format does).
    fn any_value(
        &mut self,
        db: &mut DynBuilder<'t>,
        sub_ty: u32,
        dm: &mut DynMessage,
        depth: usize,
    ) -> Res<(), std::convert::Infallible> {
        self.open_object(|| "an object".into())?;
        let mut seen = false;
        loop {
            let (k, at) = self.key()?;
            if k == "value" {
                if seen {
                    return self.err(DecodeKind::Duplicate, at, "duplicate key \"value\"");
                }
                seen = true;
                self.path.push(PathSeg {
                    name: "value",
                    index: None,
                });
                self.message(db, sub_ty, dm, depth + 1)?;
                self.path.pop();
            } else {
                self.skip()?;
            }
            if !self.next_member()? {
                return Ok(());
            }
        }
    }
}
