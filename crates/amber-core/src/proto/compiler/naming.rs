//! Edition 2024's naming style (`features.enforce_naming_style = STYLE2024`,
//! the default from 2024 on): TitleCase messages, enums, services and
//! methods; lower_snake_case fields, oneofs and packages; UPPER_SNAKE_CASE
//! enum values. The rules and messages follow protoc's behaviour (observed on
//! protoc 35.1).

use crate::proto::compiler::ast::{pp, Lit, OptValue, ParsedFile, Scalar};
use crate::proto::compiler::symbols::pos_of;
use crate::proto::descriptor::*;
use crate::proto::error::{ProtoError, ProtoErrorKind};

const OPT_OUT: &str =
    " (features.enforce_naming_style = STYLE_LEGACY can be used to opt out of this check)";

fn title_case(name: &str) -> Option<&'static str> {
    if name.contains('_') {
        Some("should be TitleCase")
    } else if !name.starts_with(|c: char| c.is_ascii_uppercase()) {
        Some("should begin with a capital letter")
    } else {
        None
    }
}

/// lower_snake_case (`lower`) or UPPER_SNAKE_CASE: the case rule, the first
/// letter, then every `_` followed by a letter of the case.
fn snake_case(name: &str, lower: bool) -> Option<&'static str> {
    let wrong_case = |c: char| {
        if lower {
            c.is_ascii_uppercase()
        } else {
            c.is_ascii_lowercase()
        }
    };
    let right_letter = |c: char| {
        if lower {
            c.is_ascii_lowercase()
        } else {
            c.is_ascii_uppercase()
        }
    };
    if name.chars().any(wrong_case) {
        return Some(if lower {
            "should be lower_snake_case"
        } else {
            "should be UPPER_SNAKE_CASE"
        });
    }
    if !name.starts_with(right_letter) {
        return Some(if lower {
            "should begin with a lower case letter"
        } else {
            "should begin with an upper case letter"
        });
    }
    let b: Vec<char> = name.chars().collect();
    for (i, &c) in b.iter().enumerate() {
        if c == '_' && !b.get(i + 1).is_some_and(|&n| right_letter(n)) {
            return Some("contains style violating underscores");
        }
    }
    None
}

/// Whether the 2024 style applies at `path`: the nearest statement setting
/// `features.enforce_naming_style` on the element or an enclosing one wins.
/// (The feature has source retention, so it is read from the statements.)
fn enforced(pf: &ParsedFile, path: &[i32]) -> bool {
    let mut best: Option<(usize, bool)> = None;
    for o in &pf.options {
        let names: Vec<&str> = o.name.iter().map(|p| p.name.as_str()).collect();
        if names != ["features", "enforce_naming_style"] || o.name.iter().any(|p| p.is_ext) {
            continue;
        }
        if !path.starts_with(&o.target) || o.target.len() % 2 != 0 {
            continue;
        }
        let on = matches!(&o.value, OptValue::Scalar(Scalar { lit: Lit::Ident(v), .. }) if v == "STYLE2024");
        if best.is_none_or(|(len, _)| o.target.len() >= len) {
            best = Some((o.target.len(), on));
        }
    }
    best.is_none_or(|(_, on)| on)
}

struct Check<'a> {
    pf: &'a ParsedFile,
}

impl Check<'_> {
    fn one(
        &self,
        what: &str,
        name: &str,
        path: &[i32],
        rule: Option<&str>,
    ) -> Result<(), ProtoError> {
        match rule {
            Some(r) if enforced(self.pf, path) => Err(ProtoError::new(
                ProtoErrorKind::Invalid,
                format!("{what} name {name} {r}{OPT_OUT}"),
                pos_of(self.pf, path),
            )),
            _ => Ok(()),
        }
    }

    fn field(&self, f: &FieldDescriptorProto, path: &[i32]) -> Result<(), ProtoError> {
        let n = f.name.as_deref().unwrap_or("");
        self.one("Field", n, path, snake_case(n, true))
    }

    fn enum_type(&self, e: &EnumDescriptorProto, path: &[i32]) -> Result<(), ProtoError> {
        let n = e.name.as_deref().unwrap_or("");
        self.one("Enum", n, path, title_case(n))?;
        for (i, v) in e.value.iter().enumerate() {
            let vn = v.name.as_deref().unwrap_or("");
            self.one(
                "Enum value",
                vn,
                &pp(path, &[2, i as i32]),
                snake_case(vn, false),
            )?;
        }
        Ok(())
    }

    fn message(&self, m: &DescriptorProto, path: &[i32]) -> Result<(), ProtoError> {
        let n = m.name.as_deref().unwrap_or("");
        self.one("Message", n, path, title_case(n))?;
        for (i, f) in m.field.iter().enumerate() {
            self.field(f, &pp(path, &[2, i as i32]))?;
        }
        for (i, o) in m.oneof_decl.iter().enumerate() {
            let on = o.name.as_deref().unwrap_or("");
            self.one("Oneof", on, &pp(path, &[8, i as i32]), snake_case(on, true))?;
        }
        for (i, f) in m.extension.iter().enumerate() {
            self.field(f, &pp(path, &[6, i as i32]))?;
        }
        for (i, n) in m.nested_type.iter().enumerate() {
            self.message(n, &pp(path, &[3, i as i32]))?;
        }
        for (i, e) in m.enum_type.iter().enumerate() {
            self.enum_type(e, &pp(path, &[4, i as i32]))?;
        }
        Ok(())
    }
}

/// Check the names of an edition 2024 file.
pub fn check(pf: &ParsedFile) -> Result<(), ProtoError> {
    if pf.file.edition != Some(edition::E2024) {
        return Ok(());
    }
    let c = Check { pf };
    let f = &pf.file;
    if let Some(p) = f.package.as_deref() {
        c.one("Package", p, &[2], snake_case(p, true))?;
    }
    for (i, m) in f.message_type.iter().enumerate() {
        c.message(m, &[4, i as i32])?;
    }
    for (i, e) in f.enum_type.iter().enumerate() {
        c.enum_type(e, &[5, i as i32])?;
    }
    for (i, x) in f.extension.iter().enumerate() {
        c.field(x, &[7, i as i32])?;
    }
    for (i, s) in f.service.iter().enumerate() {
        let n = s.name.as_deref().unwrap_or("");
        c.one("Service", n, &[6, i as i32], title_case(n))?;
        for (j, m) in s.method.iter().enumerate() {
            let mn = m.name.as_deref().unwrap_or("");
            c.one("Method", mn, &[6, i as i32, 2, j as i32], title_case(mn))?;
        }
    }
    Ok(())
}
