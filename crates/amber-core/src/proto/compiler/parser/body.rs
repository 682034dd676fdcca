//! Message bodies: nested types, fields (plain, map, group), oneofs,
//! `extend` blocks, extension ranges and reserved statements.

use super::*;
use crate::proto::names::map_entry_name;

impl Parser {
    // ---- messages ----

    pub(super) fn message_def(
        &mut self,
        m: &mut DescriptorProto,
        path: &[i32],
        scope: &str,
        depth: usize,
    ) -> R<()> {
        let (name, pos) = self.ident("a message name")?;
        if depth >= MAX_NESTING {
            return Err(ProtoError::new(
                ProtoErrorKind::TooDeep,
                format!("Messages nested more than {MAX_NESTING} levels deep."),
                pos,
            ));
        }
        self.out.locs.insert(path.to_vec(), pos);
        let full = join(scope, &name);
        m.name = Some(name);
        let open = self.pos();
        self.expect_sym(b'{')?;
        self.message_body(m, path, &full, depth, open)?;
        self.finish_message(m, path);
        Ok(())
    }

    pub(super) fn message_body(
        &mut self,
        m: &mut DescriptorProto,
        path: &[i32],
        full: &str,
        depth: usize,
        open: Pos,
    ) -> R<()> {
        loop {
            if self.eat_sym(b'}') {
                return Ok(());
            }
            if self.eat_sym(b';') {
                continue;
            }
            if self.peek().tok == Tok::Eof {
                return Err(syntax(
                    format!(
                    "Reached end of input in message definition (missing '}}' opened at {}:{}).", open.line, open.col
                    ),
                    self.pos(),
                ));
            }
            if self.is_word("message")
                || ((self.is_word("export") || self.is_word("local"))
                    && matches!(self.peek_at(1), Tok::Ident(s) if s == "message" || s == "enum"))
            {
                let (kw, _) = self.ident("")?;
                let vis = self.visibility(&kw)?;
                let is_enum = vis.is_some() && self.is_word("enum");
                if vis.is_some() {
                    self.advance();
                }
                if is_enum {
                    let idx = m.enum_type.len() as i32;
                    let mut e = self.enum_def(&pp(path, &[4, idx]), full)?;
                    e.visibility = vis;
                    m.enum_type.push(e);
                } else {
                    let idx = m.nested_type.len() as i32;
                    let mut n = DescriptorProto::default();
                    self.message_def(&mut n, &pp(path, &[3, idx]), full, depth + 1)?;
                    n.visibility = vis;
                    m.nested_type.push(n);
                }
            } else if self.eat_word("enum") {
                let idx = m.enum_type.len() as i32;
                let e = self.enum_def(&pp(path, &[4, idx]), full)?;
                m.enum_type.push(e);
            } else if self.is_word("option") {
                self.advance();
                self.option_statement(path, OptKind::Message, full)?;
            } else if self.is_word("extensions") {
                self.advance();
                self.extensions(m, path, full)?;
            } else if self.is_word("reserved") {
                self.advance();
                self.reserved_message(m, path)?;
            } else if self.is_word("extend") {
                self.advance();
                let r = {
                    let mut exts = std::mem::take(&mut m.extension);
                    let mut nested = std::mem::take(&mut m.nested_type);
                    let r = self.extend_block(
                        &mut exts,
                        &pp(path, &[6]),
                        &mut nested,
                        &pp(path, &[3]),
                        full,
                        depth,
                    );
                    m.extension = exts;
                    m.nested_type = nested;
                    r
                };
                r?;
            } else if self.is_word("oneof") {
                self.advance();
                self.oneof(m, path, full, depth)?;
            } else {
                let idx = m.field.len() as i32;
                let mut nested = std::mem::take(&mut m.nested_type);
                let r = self.field(
                    &pp(path, &[2, idx]),
                    &mut nested,
                    &pp(path, &[3]),
                    full,
                    FieldCtx::Message,
                    depth,
                );
                m.nested_type = nested;
                m.field.push(r?);
            }
        }
    }

    /// What protoc does after a message's closing brace: synthetic oneofs
    /// for proto3 `optional` fields, and `max` in ranges made concrete.
    pub(super) fn finish_message(&mut self, m: &mut DescriptorProto, path: &[i32]) {
        let mut names: std::collections::HashSet<String> = m
            .field
            .iter()
            .filter_map(|f| f.name.clone())
            .chain(m.oneof_decl.iter().filter_map(|o| o.name.clone()))
            .collect();
        for f in m.field.iter_mut() {
            if f.proto3_optional == Some(true) {
                let base = f.name.clone().unwrap_or_default();
                let mut name = if base.starts_with('_') {
                    base
                } else {
                    format!("_{base}")
                };
                while names.contains(&name) {
                    name.insert(0, 'X');
                }
                names.insert(name.clone());
                f.oneof_index = Some(m.oneof_decl.len() as i32);
                m.oneof_decl.push(OneofDescriptorProto {
                    name: Some(name),
                    ..Default::default()
                });
            }
        }
        let message_set = self.out.message_set.contains(path);
        let max_end = if message_set {
            i32::MAX
        } else {
            MAX_FIELD_NUMBER + 1
        };
        for r in m.extension_range.iter_mut() {
            if r.end == Some(-1) {
                r.end = Some(max_end);
            }
        }
        for r in m.reserved_range.iter_mut() {
            if r.end == Some(-1) {
                r.end = Some(MAX_FIELD_NUMBER + 1);
            }
        }
    }

    /// `a`, `a to b` or `a to max`; `max` comes back as `None`.
    pub(super) fn range(&mut self, min: i64) -> R<(i64, Option<i64>, Pos)> {
        let (start, pos) = self.int("a field number", min, i32::MAX as i64)?;
        if self.eat_word("to") {
            if self.eat_word("max") {
                return Ok((start, None, pos));
            }
            let (end, _) = self.int("a field number", min, i32::MAX as i64)?;
            return Ok((start, Some(end), pos));
        }
        Ok((start, Some(start), pos))
    }

    pub(super) fn extensions(
        &mut self,
        m: &mut DescriptorProto,
        path: &[i32],
        full: &str,
    ) -> R<()> {
        let first = m.extension_range.len();
        loop {
            let (start, end, pos) = self.range(i32::MIN as i64)?;
            let idx = m.extension_range.len() as i32;
            self.out.locs.insert(pp(path, &[5, idx]), pos);
            m.extension_range.push(ExtensionRange {
                start: Some(start as i32),
                end: Some(end.map_or(-1, |e| (e as i32).saturating_add(1))),
                options: None,
                unknown: Vec::new(),
            });
            if !self.eat_sym(b',') {
                break;
            }
        }
        if self.is_sym(b'[') {
            // The options apply to every range of the statement.
            let before = self.out.options.len();
            self.bracket_options(
                &pp(path, &[5, first as i32]),
                OptKind::ExtensionRange,
                full,
                None,
            )?;
            let opts: Vec<PendingOption> = self.out.options[before..].to_vec();
            for idx in first + 1..m.extension_range.len() {
                for o in &opts {
                    let mut o = o.clone();
                    o.target = pp(path, &[5, idx as i32]);
                    self.push_option(o);
                }
            }
        }
        self.end_statement()
    }

    /// Reserved names.
    pub(super) fn reserved_names(&mut self, names: &mut Vec<String>) -> R<()> {
        loop {
            if matches!(self.peek().tok, Tok::Str(_)) {
                if self.out.editions {
                    return Err(syntax(
                        "Reserved names must be identifiers in editions, not string literals.",
                        self.pos(),
                    ));
                }
                names.push(self.utf8_string("a name")?.0);
            } else {
                if !self.out.editions {
                    return Err(self.expected("a string with a reserved name"));
                }
                names.push(self.ident("a reserved name")?.0);
            }
            if !self.eat_sym(b',') {
                return self.end_statement();
            }
        }
    }

    pub(super) fn reserved_message(&mut self, m: &mut DescriptorProto, path: &[i32]) -> R<()> {
        if matches!(self.peek().tok, Tok::Str(_) | Tok::Ident(_)) {
            return self.reserved_names(&mut m.reserved_name);
        }
        loop {
            let (start, end, rpos) = self.range(i32::MIN as i64)?;
            let idx = m.reserved_range.len() as i32;
            self.out.locs.insert(pp(path, &[9, idx]), rpos);
            m.reserved_range.push(ReservedRange {
                start: Some(start as i32),
                end: Some(end.map_or(-1, |e| (e as i32).saturating_add(1))),
                unknown: Vec::new(),
            });
            if !self.eat_sym(b',') {
                return self.end_statement();
            }
        }
    }

    pub(super) fn oneof(
        &mut self,
        m: &mut DescriptorProto,
        path: &[i32],
        full: &str,
        depth: usize,
    ) -> R<()> {
        let (name, pos) = self.ident("a oneof name")?;
        let idx = m.oneof_decl.len() as i32;
        let opath = pp(path, &[8, idx]);
        self.out.locs.insert(opath.clone(), pos);
        m.oneof_decl.push(OneofDescriptorProto {
            name: Some(name.clone()),
            ..Default::default()
        });
        let open = self.pos();
        self.expect_sym(b'{')?;
        // protoc reads a oneof's body as "do { item } while not `}`": a
        // oneof needs at least one field or option.
        let mut empty = true;
        loop {
            if self.is_sym(b'}') && empty {
                return Err(syntax("Expected type name.", self.pos()));
            }
            if self.eat_sym(b'}') {
                return Ok(());
            }
            if self.eat_sym(b';') {
                continue;
            }
            empty = false;
            if self.peek().tok == Tok::Eof {
                return Err(syntax(
                    format!(
                        "Reached end of input in oneof definition (missing '}}' opened at {}:{}).",
                        open.line, open.col
                    ),
                    self.pos(),
                ));
            }
            if self.is_word("option") {
                self.advance();
                self.option_statement(&opath, OptKind::Oneof, &join(full, &name))?;
                continue;
            }
            let fidx = m.field.len() as i32;
            let mut nested = std::mem::take(&mut m.nested_type);
            let r = self.field(
                &pp(path, &[2, fidx]),
                &mut nested,
                &pp(path, &[3]),
                full,
                FieldCtx::Oneof,
                depth,
            );
            m.nested_type = nested;
            let mut f = r?;
            f.oneof_index = Some(idx);
            m.field.push(f);
        }
    }

    pub(super) fn extend_block(
        &mut self,
        exts: &mut Vec<FieldDescriptorProto>,
        ext_path: &[i32],
        nested: &mut Vec<DescriptorProto>,
        nested_path: &[i32],
        scope: &str,
        depth: usize,
    ) -> R<()> {
        let (extendee, epos) = self.dotted("a message type to extend")?;
        let open = self.pos();
        self.expect_sym(b'{')?;
        let first = exts.len();
        loop {
            // As in protoc, an extend block declares at least one field.
            if exts.len() > first && self.eat_sym(b'}') {
                return Ok(());
            }
            if self.peek().tok == Tok::Eof {
                return Err(syntax(
                    format!(
                        "Reached end of input in extend definition (missing '}}' opened at {}:{}).",
                        open.line, open.col
                    ),
                    self.pos(),
                ));
            }
            let idx = exts.len() as i32;
            let fpath = pp(ext_path, &[idx]);
            self.out.locs.insert(pp(&fpath, &[2]), epos);
            let f = self.field(&fpath, nested, nested_path, scope, FieldCtx::Extend, depth)?;
            let mut f = f;
            f.extendee = Some(extendee.clone());
            exts.push(f);
        }
    }

    /// One field (or map field, or group) up to its `;` or group body.
    pub(super) fn field(
        &mut self,
        path: &[i32],
        nested: &mut Vec<DescriptorProto>,
        nested_path: &[i32],
        scope: &str,
        ctx: FieldCtx,
        depth: usize,
    ) -> R<FieldDescriptorProto> {
        let mut f = FieldDescriptorProto::default();
        if ctx == FieldCtx::Extend {
            // Mark as an extension now: json_name is refused on extensions.
            f.extendee = Some(String::new());
        }
        let lpos = self.pos();
        let label =
            if self.is_word("optional") || self.is_word("required") || self.is_word("repeated") {
                let (l, _) = self.ident("")?;
                Some(l)
            } else {
                None
            };
        if ctx == FieldCtx::Oneof && label.is_some() {
            return Err(syntax(
                "Fields in oneofs must not have labels (required / optional / repeated).",
                lpos,
            ));
        }
        let is_map = self.is_word("map") && *self.peek_at(1) == Tok::Sym(b'<');
        // protoc reports what a map field may not be at its `<`.
        let lt = self.toks[(self.i + 1).min(self.toks.len() - 1)].pos;
        if is_map && ctx == FieldCtx::Oneof {
            return Err(syntax("Map fields are not allowed in oneofs.", lt));
        }
        if is_map && ctx == FieldCtx::Extend && label.is_none() {
            return Err(syntax("Map fields are not allowed to be extensions.", lt));
        }
        let ed = self.out.editions;
        match label.as_deref() {
            Some("required") if self.out.proto3 => {
                // At the type, as protoc reports it.
                return Err(ProtoError::new(ProtoErrorKind::Invalid, "Required fields are not allowed in proto3.", self.pos()))
            }
            Some(l @ ("required" | "optional")) if ed => {
                return Err(ProtoError::new(
                    ProtoErrorKind::Invalid,
                    format!("Label \"{l}\" is not supported in editions. Use the field_presence feature instead."),
                    lpos,
                ))
            }
            Some(_) if is_map => {
                return Err(syntax("Field labels (required/optional/repeated) are not allowed on map fields.", lt))
            }
            None if !is_map && ctx != FieldCtx::Oneof && !self.out.proto3 && !ed => {
                return Err(self.expected("\"required\", \"optional\", or \"repeated\""));
            }
            _ => {}
        }
        f.label = Some(match label.as_deref() {
            Some("required") => label::REQUIRED,
            Some("repeated") => label::REPEATED,
            _ if is_map => label::REPEATED,
            _ => label::OPTIONAL,
        });
        if label.as_deref() == Some("optional") && self.out.proto3 {
            f.proto3_optional = Some(true);
        }
        let tpos = self.pos();
        let mut map_types = None;
        let is_group = self.is_word("group") && matches!(self.peek_at(1), Tok::Ident(_));
        if is_map {
            self.advance();
            self.advance();
            let k = self.type_ref()?;
            self.expect_sym(b',')?;
            let v = self.type_ref()?;
            self.expect_sym(b'>')?;
            map_types = Some((k, v));
        } else if is_group {
            if self.out.proto3 || ed {
                return Err(syntax("Group syntax is no longer supported in this syntax; use a nested message instead.", tpos));
            }
            self.advance();
            f.r#type = Some(field_type::GROUP);
        } else {
            let (t, tn) = self.type_ref()?;
            f.r#type = t;
            f.type_name = tn;
        }
        let (name, npos) = self.ident("a field name")?;
        self.out.locs.insert(path.to_vec(), npos);
        self.out.locs.insert(pp(path, &[6]), tpos);
        self.expect_sym(b'=')?;
        let (num, numpos) = self.int("a field number", i32::MIN as i64, i32::MAX as i64)?;
        self.out.locs.insert(pp(path, &[3]), numpos);
        f.number = Some(num as i32);
        if is_group {
            if !name.starts_with(|c: char| c.is_ascii_uppercase()) {
                return Err(syntax(
                    "Group names must start with a capital letter.",
                    npos,
                ));
            }
            f.name = Some(name.to_ascii_lowercase());
            f.type_name = Some(name.clone());
        } else {
            f.name = Some(name.clone());
        }
        let full = join(scope, f.name.as_deref().unwrap_or(""));
        if let Some(((kt, kn), (vt, vn))) = map_types {
            let entry_name = map_entry_name(&name);
            let mut entry = DescriptorProto {
                name: Some(entry_name.clone()),
                options: Some(MessageOptions {
                    map_entry: Some(true),
                    ..Default::default()
                }),
                ..Default::default()
            };
            for (n, num, t, tn) in [("key", 1, kt, kn), ("value", 2, vt, vn)] {
                entry.field.push(FieldDescriptorProto {
                    name: Some(n.into()),
                    number: Some(num),
                    label: Some(label::OPTIONAL),
                    r#type: t,
                    type_name: tn,
                    ..Default::default()
                });
            }
            let eidx = nested.len() as i32;
            let epath = pp(nested_path, &[eidx]);
            self.out.locs.insert(epath.clone(), npos);
            self.out.locs.insert(pp(&epath, &[2, 0, 6]), tpos);
            self.out.locs.insert(pp(&epath, &[2, 1, 6]), tpos);
            self.out.locs.insert(pp(&epath, &[2, 0]), npos);
            self.out.locs.insert(pp(&epath, &[2, 1]), npos);
            nested.push(entry);
            f.type_name = Some(entry_name);
        }
        self.bracket_options(path, OptKind::Field, &full, Some(&mut f))?;
        if ctx == FieldCtx::Extend {
            f.extendee = None;
        }
        if is_group {
            let gidx = nested.len() as i32;
            let gpath = pp(nested_path, &[gidx]);
            self.out.locs.insert(gpath.clone(), npos);
            let mut g = DescriptorProto {
                name: Some(name.clone()),
                ..Default::default()
            };
            if depth + 1 >= MAX_NESTING {
                return Err(ProtoError::new(
                    ProtoErrorKind::TooDeep,
                    format!("Messages nested more than {MAX_NESTING} levels deep."),
                    npos,
                ));
            }
            let open = self.pos();
            self.expect_sym(b'{')?;
            self.message_body(&mut g, &gpath, &join(scope, &name), depth + 1, open)?;
            self.finish_message(&mut g, &gpath);
            nested.push(g);
        } else {
            self.end_statement()?;
        }
        Ok(f)
    }

    /// A field type: a scalar keyword (type set) or a name (type_name set).
    pub(super) fn type_ref(&mut self) -> R<(Option<i32>, Option<String>)> {
        if let Tok::Ident(s) = &self.peek().tok {
            if let Some(t) = field_type::from_keyword(s) {
                self.advance();
                return Ok((Some(t), None));
            }
        }
        let (n, _) = self.dotted("a type name")?;
        Ok((None, Some(n)))
    }
}
