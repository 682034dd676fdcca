//! Option statements and `[...]` options: names (with extensions),
//! scalar values, aggregate text-format values, and field defaults.

use super::*;

impl Parser {
    /// `option name = value;`
    pub(super) fn option_statement(&mut self, target: &[i32], kind: OptKind, scope: &str) -> R<()> {
        let o = self.option_body(target, kind, scope, 0)?;
        self.push_option(o);
        self.end_statement()
    }

    /// Record an option statement (and the two facts needed before options
    /// are interpreted).
    pub(super) fn push_option(&mut self, o: PendingOption) {
        let ident = match &o.value {
            OptValue::Scalar(Scalar {
                lit: Lit::Ident(v), ..
            }) => v.as_str(),
            _ => "",
        };
        if o.name.len() == 1 && !o.name[0].is_ext {
            match (o.kind, o.name[0].name.as_str(), ident) {
                (OptKind::Message, "message_set_wire_format", "true") => {
                    self.out.message_set.insert(o.target.clone());
                }
                (OptKind::Field, "retention", "RETENTION_SOURCE") => {
                    self.out.source_retained.insert(o.target.clone());
                }
                _ => {}
            }
        }
        self.out.options.push(o);
    }

    pub(super) fn option_name(&mut self) -> R<Vec<NamePart>> {
        let mut parts = Vec::new();
        loop {
            let pos = self.pos();
            if self.eat_sym(b'(') {
                let (n, _) = self.dotted("an extension name")?;
                self.expect_sym(b')')?;
                parts.push(NamePart {
                    name: n,
                    is_ext: true,
                    pos,
                });
            } else {
                let (n, _) = self.ident("an option name")?;
                parts.push(NamePart {
                    name: n,
                    is_ext: false,
                    pos,
                });
            }
            if !self.eat_sym(b'.') {
                return Ok(parts);
            }
        }
    }

    pub(super) fn option_body(
        &mut self,
        target: &[i32],
        kind: OptKind,
        scope: &str,
        depth: usize,
    ) -> R<PendingOption> {
        let name = self.option_name()?;
        self.expect_sym(b'=')?;
        let value = if self.is_sym(b'{') {
            let pos = self.pos();
            self.advance();
            OptValue::Aggregate(self.text_message(b'}', depth + 1, pos)?)
        } else {
            OptValue::Scalar(self.scalar()?)
        };
        Ok(PendingOption {
            target: target.to_vec(),
            kind,
            scope: scope.to_string(),
            name,
            value,
        })
    }

    /// A field's default: a scalar, where a `float` or `double` default
    /// also takes a decimal integer past 64 bits (as a double, as protoc
    /// reads it).
    pub(super) fn default_value(&mut self, f: &FieldDescriptorProto) -> R<Scalar> {
        let floating = matches!(f.r#type, Some(field_type::FLOAT | field_type::DOUBLE));
        let k = usize::from(*self.peek_at(0) == Tok::Sym(b'-'));
        if let (true, Tok::BigInt(v)) = (floating, self.peek_at(k).clone()) {
            let pos = self.pos();
            let neg = self.eat_sym(b'-');
            self.advance();
            return Ok(Scalar {
                neg,
                lit: Lit::Float(v),
                pos,
            });
        }
        self.scalar()
    }

    pub(super) fn scalar(&mut self) -> R<Scalar> {
        let pos = self.pos();
        let neg = self.eat_sym(b'-');
        let lit = match &self.peek().tok {
            Tok::Ident(s) => Lit::Ident(s.clone()),
            Tok::Int(Some(v)) => Lit::Int(*v),
            Tok::Int(None) | Tok::BigInt(_) => {
                return Err(syntax("Integer out of range.", self.pos()))
            }
            Tok::Float(v) => Lit::Float(*v),
            Tok::Str(_) => {
                let (b, _) = self.strings("a string")?;
                return if neg {
                    Err(syntax("A string cannot be negative.", pos))
                } else {
                    Ok(Scalar {
                        neg,
                        lit: Lit::Str(b),
                        pos,
                    })
                };
            }
            _ => return Err(self.expected("a value")),
        };
        self.advance();
        Ok(Scalar { neg, lit, pos })
    }

    /// The fields of a text-format message up to `close`.
    pub(super) fn text_message(&mut self, close: u8, depth: usize, open: Pos) -> R<Vec<TextField>> {
        if depth > MAX_NESTING {
            return Err(ProtoError::new(
                ProtoErrorKind::TooDeep,
                format!("Option value nested more than {MAX_NESTING} levels deep."),
                open,
            ));
        }
        let mut fields = Vec::new();
        loop {
            if self.eat_sym(close) {
                return Ok(fields);
            }
            if self.peek().tok == Tok::Eof {
                return Err(self.expected(&format!("\"{}\"", close as char)));
            }
            let pos = self.pos();
            let name = if self.eat_sym(b'[') {
                let (n, _) = self.dotted("an extension or type URL")?;
                let name = if self.eat_sym(b'/') {
                    let (t, _) = self.dotted("a type name")?;
                    TextName::Any(n, t)
                } else {
                    TextName::Ext(n)
                };
                self.expect_sym(b']')?;
                name
            } else {
                TextName::Field(self.ident("a field name")?.0)
            };
            let colon = self.eat_sym(b':');
            let value = if self.is_sym(b'[') {
                if !colon {
                    return Err(self.expected("\":\""));
                }
                self.advance();
                let mut items = Vec::new();
                if !self.eat_sym(b']') {
                    loop {
                        items.push(self.text_value(depth)?);
                        if self.eat_sym(b']') {
                            break;
                        }
                        self.expect_sym(b',')?;
                    }
                }
                TextValue::List(items)
            } else if !(colon || self.is_sym(b'{') || self.is_sym(b'<')) {
                return Err(self.expected("\":\""));
            } else {
                self.text_value(depth)?
            };
            fields.push(TextField { name, pos, value });
            if !self.eat_sym(b',') {
                self.eat_sym(b';');
            }
        }
    }

    pub(super) fn text_value(&mut self, depth: usize) -> R<TextValue> {
        let pos = self.pos();
        if self.eat_sym(b'{') {
            Ok(TextValue::Message(self.text_message(
                b'}',
                depth + 1,
                pos,
            )?))
        } else if self.eat_sym(b'<') {
            Ok(TextValue::Message(self.text_message(
                b'>',
                depth + 1,
                pos,
            )?))
        } else {
            Ok(TextValue::Scalar(self.scalar()?))
        }
    }

    /// `[a = 1, (b) = 2]` after a field, enum value or extension range.
    /// Returns the `default` and `json_name` pseudo-options when `field`.
    pub(super) fn bracket_options(
        &mut self,
        target: &[i32],
        kind: OptKind,
        scope: &str,
        field: Option<&mut FieldDescriptorProto>,
    ) -> R<()> {
        if !self.eat_sym(b'[') {
            return Ok(());
        }
        let mut field = field;
        loop {
            let pos = self.pos();
            if let Some(f) = field.as_deref_mut() {
                if self.is_word("default") && *self.peek_at(1) == Tok::Sym(b'=') {
                    self.advance();
                    self.advance();
                    // (A field's pseudo-options are all in this list.)
                    if self.out.defaults.last().is_some_and(|d| d.target == target) {
                        return Err(syntax("Already set option \"default\".", pos));
                    }
                    let value = self.default_value(f)?;
                    self.out.defaults.push(PendingDefault {
                        target: target.to_vec(),
                        value,
                    });
                    self.out.locs.insert(pp(target, &[7]), pos);
                } else if self.is_word("json_name") && *self.peek_at(1) == Tok::Sym(b'=') {
                    self.advance();
                    self.advance();
                    if f.json_name.is_some() {
                        return Err(syntax("Already set option \"json_name\".", pos));
                    }
                    if f.extendee.is_some() {
                        return Err(ProtoError::new(
                            ProtoErrorKind::Invalid,
                            "option json_name is not allowed on extension fields.",
                            pos,
                        ));
                    }
                    let (s, _) = self.utf8_string("a string for json_name")?;
                    f.json_name = Some(s);
                } else {
                    let o = self.option_body(target, kind, scope, 0)?;
                    self.push_option(o);
                }
            } else {
                let o = self.option_body(target, kind, scope, 0)?;
                self.push_option(o);
            }
            if self.eat_sym(b']') {
                return Ok(());
            }
            self.expect_sym(b',')?;
        }
    }
}
