//! The checks protoc makes on an option's field: removed in this edition,
//! features used where and when they are allowed, with protoc's words.

use super::*;

impl<'a> Interp<'a> {
    /// A standard option removed in the file's edition
    /// (`feature_support.edition_removed`, as `java_multiple_files` in 2024)
    /// is refused; protoc reports a file's at its `package` statement.
    pub(super) fn check_removed(
        &self,
        o: &PendingOption,
        leaf: &FieldInfo<'_>,
    ) -> Result<(), ProtoError> {
        let edition = self.pool.files[self.file].file.edition.unwrap_or(0);
        let support = leaf
            .f
            .options
            .as_ref()
            .and_then(|x| x.feature_support.as_ref());
        let Some(removed) = support.and_then(|s| s.edition_removed) else {
            return Ok(());
        };
        if !self.editions || removed > edition {
            return Ok(());
        }
        let name = format!(
            "{}.{}",
            o.kind.message_name(),
            leaf.f.name.as_deref().unwrap_or("")
        );
        let pf = &self.pool.files[self.file];
        let pos = if o.kind == OptKind::File {
            pf.locs.get(&vec![2]).copied().unwrap_or_default()
        } else {
            crate::proto::compiler::symbols::pos_of(pf, &o.target)
        };
        Err(oerr(removed_text(&name, removed, support), pos))
    }

    /// A feature must exist in the file's edition and be set to a known
    /// value.
    pub(super) fn check_feature(
        &self,
        o: &PendingOption,
        chain: &[FieldInfo<'_>],
        msg: &str,
        pos: Pos,
    ) -> Result<(), ProtoError> {
        let Some(leaf) = chain.last() else {
            return Ok(());
        };
        let name = format!("{msg}.{}", leaf.f.name.as_deref().unwrap_or(""));
        let edition = self.pool.files[self.file].file.edition.unwrap_or(0);
        let support = leaf
            .f
            .options
            .as_ref()
            .and_then(|x| x.feature_support.as_ref());
        if let Some(intro) = support.and_then(|s| s.edition_introduced) {
            if intro > edition {
                return Err(oerr(
                    format!(
                        "{name} wasn't introduced until edition {} and can't be used in edition {}",
                        edition_name(intro),
                        edition_name(edition)
                    ),
                    pos,
                ));
            }
        }
        if let Some(removed) = support.and_then(|s| s.edition_removed) {
            if removed <= edition {
                return Err(oerr(removed_text(&name, removed, support), pos));
            }
        }
        if leaf.f.r#type == Some(field_type::ENUM) {
            if let OptValue::Scalar(s) = &o.value {
                if let Ok(0) = self.enum_value(leaf.f, s, false) {
                    let shown = match &s.lit {
                        Lit::Ident(i) => i.clone(),
                        _ => "0".into(),
                    };
                    return Err(oerr(
                        format!(
                            "Feature field `{}` must resolve to a known value, found {shown}",
                            leaf.f.name.as_deref().unwrap_or("")
                        ),
                        self.file_pos(o).unwrap_or(pos),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// protoc's words for an option or feature used after its edition_removed.
pub(super) fn removed_text(name: &str, removed: i32, support: Option<&FeatureSupport>) -> String {
    let why = support
        .and_then(|s| s.removal_error.as_deref())
        .map(|e| format!(": {e}"))
        .unwrap_or_default();
    format!(
        "{name} has been removed in edition {}{why}",
        edition_name(removed)
    )
}

/// `2023` for EDITION_2023 and so on; the number for unknown editions.
pub(super) fn edition_name(e: i32) -> String {
    match e {
        edition::PROTO2 => "PROTO2".into(),
        edition::PROTO3 => "PROTO3".into(),
        edition::E2023 => "2023".into(),
        edition::E2024 => "2024".into(),
        1002 => "2026".into(),
        n => n.to_string(),
    }
}
