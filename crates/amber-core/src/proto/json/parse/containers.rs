//! Maps and repeated fields: JSON objects and arrays into entries and
//! elements, with the key and element rules of `json_format`.

use super::*;

impl<'t, 'a, I: Input<'a>> Parser<'t, 'a, I> {
    pub(super) fn map<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        m: &mut B::Msg,
        f: &'t FieldInfo,
        depth: usize,
    ) -> Res<(), B::Err> {
        let t = self.t;
        let Kind::Message(entry) = f.kind else {
            let at = self.here();
            return self.err(
                DecodeKind::Malformed,
                at,
                "a map field without an entry type",
            );
        };
        let einfo = t.message(entry);
        let (Some(kf), Some(vf)) = (einfo.field(1), einfo.field(2)) else {
            let at = self.here();
            return self.err(
                DecodeKind::Malformed,
                at,
                "map entry type without key and value",
            );
        };
        if !self.open_object(|| format!("an object for map field {}", f.name))? {
            return Ok(());
        }
        let mut seen: Vec<(Cow<'a, str>, usize)> = Vec::new();
        let mut i = 0u32;
        loop {
            if let Some(last) = self.path.last_mut() {
                last.index = Some(i);
            }
            let (k, at) = self.key()?;
            let mut kbuf = Vec::new();
            let ktok = Tok::Str(k);
            let key = match self.convert(kf.kind, &ktok, &mut kbuf, true) {
                Ok(s) => s,
                Err(Bad::Msg(kind, e)) => {
                    return self.err(kind, at, format!("invalid map key: {e}"))
                }
                Err(Bad::UnknownEnum(e)) => {
                    return self.err(
                        DecodeKind::UnknownField,
                        at,
                        format!("invalid map key: {e}"),
                    )
                }
            };
            let vat = self.here();
            match vf.kind {
                Kind::Message(vty) => {
                    let mut sub = b.start(vty).map_err(ParseFailure::Build)?;
                    if self.inp.peek() == Peek::Null && self.is_wkt(vty, Wkt::Value) {
                        self.literal()?;
                        self.set_null(b, vty, &mut sub)?;
                    } else if self.inp.peek() == Peek::Null {
                        return self.err(
                            DecodeKind::TypeMismatch,
                            vat,
                            "null is not allowed as a map value",
                        );
                    } else {
                        self.message(b, vty, &mut sub, depth + 1)?;
                    }
                    b.map_entry(m, f, key, MapValue::Message(sub))
                        .map_err(ParseFailure::Build)?;
                }
                kind => {
                    let tok = self.token()?;
                    if let Tok::Null = tok {
                        return self.err(
                            DecodeKind::TypeMismatch,
                            vat,
                            "null is not allowed as a map value",
                        );
                    }
                    let mut buf = Vec::new();
                    match self.convert(kind, &tok, &mut buf, false) {
                        Ok(s) => b
                            .map_entry(m, f, key, MapValue::Scalar(s))
                            .map_err(ParseFailure::Build)?,
                        Err(Bad::UnknownEnum(_)) if self.o.ignore_unknown_fields => {}
                        Err(bad) => return self.bad(vat, bad),
                    }
                }
            }
            let Tok::Str(k) = ktok else { unreachable!() };
            seen.push((k, at));
            i += 1;
            if !self.next_member()? {
                break;
            }
        }
        if seen.len() > 1 {
            seen.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
            if let Some(w) = seen.windows(2).find(|w| w[0].0 == w[1].0) {
                let (k, at) = (&w[1].0, w[1].1);
                if let Some(last) = self.path.last_mut() {
                    last.index = None;
                }
                return self.err(DecodeKind::Duplicate, at, format!("duplicate key {k:?}"));
            }
        }
        Ok(())
    }

    pub(super) fn repeated<B: MessageBuilder>(
        &mut self,
        b: &mut B,
        m: &mut B::Msg,
        f: &'t FieldInfo,
        depth: usize,
    ) -> Res<(), B::Err> {
        if !self.open_array(|| format!("an array for repeated field {}", f.name))? {
            return Ok(());
        }
        let mut i = 0u32;
        loop {
            if let Some(last) = self.path.last_mut() {
                last.index = Some(i);
            }
            let at = self.here();
            match f.kind {
                Kind::Message(ety) => {
                    let null = self.inp.peek() == Peek::Null;
                    if null && !self.is_wkt(ety, Wkt::Value) {
                        return self.err(
                            DecodeKind::TypeMismatch,
                            at,
                            "null is not allowed to be used as an element in a repeated field",
                        );
                    }
                    let mut sub = b.begin(m, f, ety).map_err(ParseFailure::Build)?;
                    if null {
                        self.literal()?;
                        self.set_null(b, ety, &mut sub)?;
                    } else {
                        self.message(b, ety, &mut sub, depth + 1)?;
                    }
                    b.end(m, f, sub).map_err(ParseFailure::Build)?;
                }
                kind => {
                    let tok = self.token()?;
                    if let Tok::Null = tok {
                        return self.err(
                            DecodeKind::TypeMismatch,
                            at,
                            "null is not allowed to be used as an element in a repeated field",
                        );
                    }
                    let mut buf = Vec::new();
                    match self.convert(kind, &tok, &mut buf, false) {
                        Ok(s) => b.push(m, f, s).map_err(ParseFailure::Build)?,
                        Err(Bad::UnknownEnum(_)) if self.o.ignore_unknown_fields => {}
                        Err(bad) => return self.bad(at, bad),
                    }
                }
            }
            i += 1;
            if !self.next_item()? {
                return Ok(());
            }
        }
    }
}
