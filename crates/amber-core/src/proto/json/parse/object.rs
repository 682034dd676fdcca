//! A message's JSON object: its members matched to fields by JSON or
//! `.proto` name, oneofs, nulls and well-known types.

use super::keys::{KeySet, Seen};
use super::*;

impl<'t, 'a, I: Input<'a>> Parser<'t, 'a, I> {
    pub(super) fn message<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        ty: u32,
        m: &mut B::Msg,
        depth: usize,
    ) -> Res<(), B::Err> {
        let at = self.here();
        if depth > self.o.max_depth {
            return self.err(
                DecodeKind::Limit,
                at,
                format!("messages nested deeper than {}", self.o.max_depth),
            );
        }
        let t = self.t;
        let info = t.message(ty);
        crate::bytes::stack::descend(
            depth,
            || match wkt::wkt_of(&info.full_name) {
                None => self.object(b, ty, m, depth, false),
                Some(w) => self.wkt(b, w, ty, m, depth),
            },
            || ParseFailure::Json(Box::new(p_err(at, "out of stack"))),
        )
    }

    /// A regular message's object. `skip_type`: an Any's members, where
    /// `@type` is not a field.
    pub(super) fn object<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        ty: u32,
        m: &mut B::Msg,
        depth: usize,
        skip_type: bool,
    ) -> Res<(), B::Err> {
        let t = self.t;
        let info = t.message(ty);
        if !self.open_object(|| format!("an object for message {}", info.full_name))? {
            return Ok(());
        }
        let mut oneofs = Seen::default();
        let mut keys = Seen::default();
        // Unknown keys seen (ignore_unknown_fields), for the duplicate
        // check: hashed, so many keys cost linear time; made on the first.
        let mut unknown: Option<KeySet<'a>> = None;
        // Keys usually come in field order (as printed): try the field
        // after the last one first.
        let mut hint = 0;
        loop {
            let (k, at) = self.key()?;
            if skip_type && k == "@type" {
                self.skip()?;
            } else if let Some((i, by_json)) = find_field(info, &k, hint) {
                hint = i + 1;
                // The same key twice (json_format's duplicate check); a
                // field's JSON name and its proto name are two keys.
                if keys.insert(i * 2 + by_json as usize) {
                    return self.err(DecodeKind::Duplicate, at, format!("duplicate key {k:?}"));
                }
                let f = &info.fields[i];
                self.path.push(PathSeg {
                    name: &f.name,
                    index: None,
                });
                self.field(b, info, m, f, depth, &mut oneofs)?;
                self.path.pop();
            } else if self.o.ignore_unknown_fields {
                if let Err(k) = unknown.get_or_insert_with(KeySet::default).insert(k) {
                    return self.err(DecodeKind::Duplicate, at, format!("duplicate key {k:?}"));
                }
                self.skip()?;
            } else {
                return self.err(
                    DecodeKind::UnknownField,
                    at,
                    format!(
                        "Message type \"{}\" has no field named \"{k}\"",
                        info.full_name
                    ),
                );
            }
            if !self.next_member()? {
                return Ok(());
            }
        }
    }

    /// One member's value: field `f` of message `m`.
    pub(super) fn field<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        info: &MessageInfo,
        m: &mut B::Msg,
        f: &'t FieldInfo,
        depth: usize,
        oneofs: &mut Seen,
    ) -> Res<(), B::Err> {
        let at = self.here();
        if self.inp.peek() == Peek::Null {
            self.literal()?;
            // null: not set, except where null is a value.
            if let Cardinality::Singular { .. } = f.card {
                match f.kind {
                    Kind::Message(vty) if self.is_wkt(vty, Wkt::Value) => {
                        let mut sub = b.begin(m, f, vty).map_err(ParseFailure::Build)?;
                        self.set_null(b, vty, &mut sub)?;
                        b.end(m, f, sub).map_err(ParseFailure::Build)?;
                    }
                    Kind::Enum(e) if self.t.enums[e as usize].full_name == NULL_VALUE => {
                        b.set(m, f, Scalar::Enum(0)).map_err(ParseFailure::Build)?;
                    }
                    _ => {}
                }
            }
            return Ok(());
        }
        if let Some(o) = f.oneof {
            if oneofs.insert(o as usize) {
                return self.err(
                    DecodeKind::Duplicate,
                    at,
                    format!(
                        "Message type \"{}\" should not have multiple \"{}\" oneof fields",
                        info.full_name,
                        info.oneofs.get(o as usize).map_or("", |s| s.as_str())
                    ),
                );
            }
        }
        match (f.card, f.kind) {
            (Cardinality::Map, _) => self.map(b, m, f, depth),
            (Cardinality::Repeated { .. }, _) => self.repeated(b, m, f, depth),
            (_, Kind::Message(sty)) => {
                let mut sub = b.begin(m, f, sty).map_err(ParseFailure::Build)?;
                self.message(b, sty, &mut sub, depth + 1)?;
                b.end(m, f, sub).map_err(ParseFailure::Build)
            }
            (_, kind) => {
                let tok = self.token()?;
                let mut buf = Vec::new();
                match self.convert(kind, &tok, &mut buf, false) {
                    Ok(s) => b.set(m, f, s).map_err(ParseFailure::Build),
                    Err(Bad::UnknownEnum(_)) if self.o.ignore_unknown_fields => Ok(()),
                    Err(bad) => self.bad(at, bad),
                }
            }
        }
    }

    pub(super) fn is_wkt(&self, ty: u32, w: Wkt) -> bool {
        wkt::wkt_of(&self.t.message(ty).full_name) == Some(w)
    }

    /// Set a `google.protobuf.Value` to `null_value`.
    pub(super) fn set_null<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        vty: u32,
        v: &mut B::Msg,
    ) -> Res<(), B::Err> {
        match self.t.message(vty).field(1) {
            Some(nf) => b.set(v, nf, Scalar::Enum(0)).map_err(ParseFailure::Build),
            None => {
                let at = self.here();
                self.err(
                    DecodeKind::Malformed,
                    at,
                    "google.protobuf.Value without null_value",
                )
            }
        }
    }
}

/// The field a key names: by JSON name first, then by `.proto` name; with
/// whether it was the JSON name (distinct from the other when they differ).
/// `hint`: the index to try first.
#[inline]
pub(super) fn find_field(info: &MessageInfo, key: &str, hint: usize) -> Option<(usize, bool)> {
    if let Some(f) = info.fields.get(hint) {
        // JSON names are unique in a message (protoc checks): a match
        // here is the answer.
        if f.json_name == key {
            return Some((hint, true));
        }
    }
    if let Some(i) = info.fields.iter().position(|f| f.json_name == key) {
        return Some((i, true));
    }
    let i = info.fields.iter().position(|f| f.name == key)?;
    Some((i, info.fields[i].json_name == key))
}
