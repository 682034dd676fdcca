//! A file's top level: `syntax`/`edition`, `package`, imports, `option`
//! statements and the definitions they hold.

use super::*;

impl Parser {
    pub(super) fn file(&mut self) -> R<()> {
        if self.is_word("syntax") || self.is_word("edition") {
            let is_edition = self.is_word("edition");
            // Where protoc reports file-wide editions errors.
            self.out.locs.insert(vec![14], self.pos());
            self.advance();
            self.expect_sym(b'=')?;
            let (v, pos) = self.utf8_string("a string with the syntax or edition")?;
            self.end_statement()?;
            let f = &mut self.out.file;
            match (is_edition, v.as_str()) {
                (false, "proto2") => {}
                (false, "proto3") => {
                    f.syntax = Some("proto3".into());
                    self.out.proto3 = true;
                }
                (true, "2023") | (true, "2024") => {
                    f.syntax = Some("editions".into());
                    f.edition = Some(if v == "2023" {
                        edition::E2023
                    } else {
                        edition::E2024
                    });
                    self.out.editions = true;
                }
                (false, _) => {
                    return Err(syntax(
                        format!("Unrecognized syntax identifier \"{v}\". This parser only recognizes \"proto2\" and \"proto3\"."),
                        pos,
                    ))
                }
                (true, _) => {
                    return Err(syntax(
                        format!("Unknown edition \"{v}\": this parser knows \"2023\" and \"2024\"."),
                        pos,
                    ))
                }
            }
        }
        let mut have_package = false;
        loop {
            if self.peek().tok == Tok::Eof {
                return Ok(());
            }
            if self.eat_sym(b';') {
                continue;
            }
            let pos = self.pos();
            let (kw, _) = self.ident("a top-level statement")?;
            match kw.as_str() {
                "package" => {
                    if have_package {
                        return Err(syntax("Multiple package definitions.", pos));
                    }
                    have_package = true;
                    let (p, ppos) = self.dotted("a package name")?;
                    if p.starts_with('.') {
                        return Err(syntax("Expected identifier.", ppos));
                    }
                    self.end_statement()?;
                    self.out.locs.insert(vec![2], pos);
                    self.package = p.clone();
                    self.out.file.package = Some(p);
                }
                "import" => self.import(pos)?,
                "option" => {
                    let scope = format!("{}.dummy", self.package);
                    self.option_statement(&[], OptKind::File, &scope)?;
                }
                "message" | "export" | "local" | "enum" => {
                    let vis = self.visibility(&kw)?;
                    let is_enum = if vis.is_some() {
                        self.eat_word("enum") || {
                            self.expect_word("message")?;
                            false
                        }
                    } else {
                        kw == "enum"
                    };
                    let scope = self.package.clone();
                    if is_enum {
                        let idx = self.out.file.enum_type.len() as i32;
                        let mut e = self.enum_def(&[5, idx], &scope)?;
                        e.visibility = vis;
                        self.out.file.enum_type.push(e);
                    } else {
                        let idx = self.out.file.message_type.len() as i32;
                        let mut m = DescriptorProto::default();
                        self.message_def(&mut m, &[4, idx], &scope, 0)?;
                        m.visibility = vis;
                        self.out.file.message_type.push(m);
                    }
                }
                "service" => self.service()?,
                "extend" => {
                    let scope = self.package.clone();
                    let mut groups = std::mem::take(&mut self.out.file.message_type);
                    let mut exts = std::mem::take(&mut self.out.file.extension);
                    let r = self.extend_block(&mut exts, &[7], &mut groups, &[4], &scope, 0);
                    self.out.file.message_type = groups;
                    self.out.file.extension = exts;
                    r?;
                }
                "syntax" | "edition" => {
                    return Err(syntax(
                        format!("\"{kw}\" must be the first statement of the file."),
                        pos,
                    ))
                }
                _ => {
                    return Err(syntax(
                        format!("Expected top-level statement (e.g. \"message\"), found \"{kw}\"."),
                        pos,
                    ))
                }
            }
        }
    }

    pub(super) fn visibility(&mut self, kw: &str) -> R<Option<i32>> {
        match kw {
            "export" | "local" => {
                if self.out.file.edition != Some(edition::E2024) {
                    return Err(syntax(
                        format!("\"{kw}\" is only allowed in edition 2024 and later."),
                        self.pos(),
                    ));
                }
                Ok(Some(if kw == "local" { 1 } else { 2 }))
            }
            _ => Ok(None),
        }
    }

    pub(super) fn import(&mut self, pos: Pos) -> R<()> {
        let f = &mut self.out.file;
        let idx = f.dependency.len() as i32;
        let mut option_import = false;
        if self.eat_word("public") {
            self.out.file.public_dependency.push(idx);
        } else if self.is_word("weak") {
            if self.out.file.edition == Some(edition::E2024) {
                return Err(syntax(
                    "weak import is not supported in edition 2024 and above. Consider using option import instead.",
                    self.pos(),
                ));
            }
            self.advance();
            self.out.file.weak_dependency.push(idx);
        } else if self.is_word("option") {
            if self.out.file.edition != Some(edition::E2024) {
                return Err(syntax(
                    "\"import option\" is only allowed in edition 2024 and later.",
                    self.pos(),
                ));
            }
            self.advance();
            option_import = true;
        }
        let (name, npos) = self.utf8_string("a string naming the file to import")?;
        if !option_import && !self.out.file.option_dependency.is_empty() {
            return Err(syntax(
                "imports should precede any option imports to ensure proto files can roundtrip.",
                npos,
            ));
        }
        self.end_statement()?;
        if option_import {
            self.out.file.option_dependency.push(name);
            self.out.option_import_pos.push(pos);
        } else {
            self.out.file.dependency.push(name);
            self.out.import_pos.push(pos);
        }
        Ok(())
    }
}
