//! Enums (values, options, reserved) and services (rpc methods).

use super::*;

impl Parser {
    // ---- enums ----

    /// protoc's parser checks `allow_alias` once an enum is read, and
    /// reports at the token after the enum's `}`: `false` does nothing, and
    /// `true` needs two values that share a number.
    fn check_alias(&self, path: &[i32], e: &EnumDescriptorProto) -> R<()> {
        let alias = self.out.options.iter().find(|o| {
            o.kind == OptKind::Enum
                && o.target == path
                && o.name.len() == 1
                && !o.name[0].is_ext
                && o.name[0].name == "allow_alias"
        });
        let Some(o) = alias else { return Ok(()) };
        let name = e.name.as_deref().unwrap_or("");
        let is_true = matches!(&o.value, OptValue::Scalar(Scalar { lit: Lit::Ident(v), neg: false, .. }) if v == "true");
        if !is_true {
            return Err(ProtoError::new(
                ProtoErrorKind::Invalid,
                format!("\"{name}\" declares 'option allow_alias = false;' which has no effect. Please remove the declaration."),
                self.pos(),
            ));
        }
        let mut seen = std::collections::HashSet::new();
        if e.value.iter().all(|v| seen.insert(v.number.unwrap_or(0))) {
            return Err(ProtoError::new(
                ProtoErrorKind::Invalid,
                format!("\"{name}\" declares support for enum aliases but no enum values share field numbers. Please remove the unnecessary 'option allow_alias = true;' declaration."),
                self.pos(),
            ));
        }
        Ok(())
    }

    pub(super) fn enum_def(&mut self, path: &[i32], scope: &str) -> R<EnumDescriptorProto> {
        let (name, pos) = self.ident("an enum name")?;
        self.out.locs.insert(path.to_vec(), pos);
        let full = join(scope, &name);
        let mut e = EnumDescriptorProto {
            name: Some(name),
            ..Default::default()
        };
        let open = self.pos();
        self.expect_sym(b'{')?;
        loop {
            if self.eat_sym(b'}') {
                self.check_alias(path, &e)?;
                return Ok(e);
            }
            if self.eat_sym(b';') {
                continue;
            }
            if self.peek().tok == Tok::Eof {
                return Err(syntax(
                    format!(
                        "Reached end of input in enum definition (missing '}}' opened at {}:{}).",
                        open.line, open.col
                    ),
                    self.pos(),
                ));
            }
            if self.is_word("option") {
                self.advance();
                self.option_statement(path, OptKind::Enum, &full)?;
            } else if self.is_word("reserved") {
                self.advance();
                if matches!(self.peek().tok, Tok::Str(_) | Tok::Ident(_)) {
                    self.reserved_names(&mut e.reserved_name)?;
                    continue;
                }
                loop {
                    let (start, end, rpos) = self.range(i32::MIN as i64)?;
                    let idx = e.reserved_range.len() as i32;
                    self.out.locs.insert(pp(path, &[4, idx]), rpos);
                    e.reserved_range.push(EnumReservedRange {
                        start: Some(start as i32),
                        end: Some(end.map_or(i32::MAX, |v| v as i32)),
                        unknown: Vec::new(),
                    });
                    if !self.eat_sym(b',') {
                        break;
                    }
                }
                self.end_statement()?;
            } else {
                let (vname, vpos) = self.ident("an enum value name")?;
                let idx = e.value.len() as i32;
                let vpath = pp(path, &[2, idx]);
                self.out.locs.insert(vpath.clone(), vpos);
                self.expect_sym(b'=')?;
                let (num, npos) =
                    self.int("an enum value number", i32::MIN as i64, i32::MAX as i64)?;
                self.out.locs.insert(pp(&vpath, &[2]), npos);
                // Enum values are siblings of their enum, C++-style.
                self.bracket_options(&vpath, OptKind::EnumValue, &join(scope, &vname), None)?;
                self.end_statement()?;
                e.value.push(EnumValueDescriptorProto {
                    name: Some(vname),
                    number: Some(num as i32),
                    ..Default::default()
                });
            }
        }
    }

    // ---- services ----

    pub(super) fn service(&mut self) -> R<()> {
        let (name, pos) = self.ident("a service name")?;
        let sidx = self.out.file.service.len() as i32;
        let path = vec![6, sidx];
        self.out.locs.insert(path.clone(), pos);
        let full = join(&self.package, &name);
        let mut s = ServiceDescriptorProto {
            name: Some(name),
            ..Default::default()
        };
        let open = self.pos();
        self.expect_sym(b'{')?;
        loop {
            if self.eat_sym(b'}') {
                break;
            }
            if self.eat_sym(b';') {
                continue;
            }
            if self.peek().tok == Tok::Eof {
                return Err(syntax(
                    format!(
                    "Reached end of input in service definition (missing '}}' opened at {}:{}).", open.line, open.col
                    ),
                    self.pos(),
                ));
            }
            if self.eat_word("option") {
                self.option_statement(&path, OptKind::Service, &full)?;
                continue;
            }
            self.expect_word("rpc")?;
            let (mname, mpos) = self.ident("a method name")?;
            let midx = s.method.len() as i32;
            let mpath = pp(&path, &[2, midx]);
            self.out.locs.insert(mpath.clone(), mpos);
            let mut m = MethodDescriptorProto {
                name: Some(mname.clone()),
                ..Default::default()
            };
            for (num, which) in [(2, "input"), (3, "output")] {
                if which == "output" {
                    self.expect_word("returns")?;
                }
                self.expect_sym(b'(')?;
                // As in protoc, `stream` here is always the keyword.
                let stream = self.is_word("stream");
                if stream {
                    self.advance();
                }
                let (t, tpos) = self.dotted("a message type")?;
                self.out.locs.insert(pp(&mpath, &[num]), tpos);
                self.expect_sym(b')')?;
                if which == "input" {
                    m.input_type = Some(t);
                    if stream {
                        m.client_streaming = Some(true);
                    }
                } else {
                    m.output_type = Some(t);
                    if stream {
                        m.server_streaming = Some(true);
                    }
                }
            }
            let mfull = join(&full, &mname);
            if self.eat_sym(b'{') {
                // protoc creates the options message for any method body.
                m.options = Some(MethodOptions::default());
                loop {
                    if self.eat_sym(b'}') {
                        break;
                    }
                    if self.eat_sym(b';') {
                        continue;
                    }
                    self.expect_word("option")?;
                    self.option_statement(&mpath, OptKind::Method, &mfull)?;
                }
                self.eat_sym(b';');
            } else {
                self.end_statement()?;
            }
            s.method.push(m);
        }
        self.out.file.service.push(s);
        Ok(())
    }
}
