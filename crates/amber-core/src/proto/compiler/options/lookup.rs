//! Finding what an option names: messages, fields by name or number,
//! extensions visible from the file, and where a statement stands.

use super::*;

impl<'a> Interp<'a> {
    pub(super) fn message(&self, full: &str) -> Option<(&'a DescriptorProto, usize)> {
        self.message_path(full).map(|(m, f, _)| (m, f))
    }

    pub(super) fn message_path(
        &self,
        full: &str,
    ) -> Option<(&'a DescriptorProto, usize, &'a [i32])> {
        let sym = self.pool.symbols.get(full.trim_start_matches('.'))?;
        if sym.kind != SymKind::Message {
            return None;
        }
        let m = message_at(&self.pool.files[sym.file].file, &sym.path)?;
        Some((m, sym.file, &sym.path))
    }

    /// Whether message `msg` uses the MessageSet wire format.
    pub(super) fn is_message_set(&self, msg: &str) -> bool {
        let Some((m, file, path)) = self.message_path(msg) else {
            return false;
        };
        if let Some(v) = m.options.as_ref().and_then(|o| o.message_set_wire_format) {
            return v;
        }
        self.pool.files[file].message_set.contains(path)
    }

    /// Where protoc reports what is wrong with a file-wide feature: at the
    /// `syntax` or `edition` statement.
    pub(super) fn file_pos(&self, o: &PendingOption) -> Option<Pos> {
        if o.kind != OptKind::File {
            return None;
        }
        self.pool.files[self.file].locs.get(&vec![14]).copied()
    }

    pub(crate) fn extension_by_number(&self, msg: &str, num: i32) -> Option<FieldInfo<'a>> {
        let (file, path) = self
            .exts
            .get(&(msg.trim_start_matches('.').to_string(), num))?;
        let f = field_at(&self.pool.files[*file].file, path)?;
        Some(FieldInfo {
            f,
            file: *file,
            path: path.clone(),
        })
    }

    pub(crate) fn field_where(
        &self,
        msg: &str,
        pred: impl Fn(&FieldDescriptorProto) -> bool,
    ) -> Option<FieldInfo<'a>> {
        let (m, file, path) = self.message_path(msg)?;
        let i = m.field.iter().position(pred)?;
        let mut path = path.to_vec();
        path.extend_from_slice(&[2, i as i32]);
        Some(FieldInfo {
            f: &m.field[i],
            file,
            path,
        })
    }

    pub(super) fn field_by_name(&self, msg: &str, name: &str) -> Option<FieldInfo<'a>> {
        self.field_where(msg, |f| f.name.as_deref() == Some(name))
    }

    /// Whether protoc leaves this option out of descriptor sets: its field
    /// has `retention = RETENTION_SOURCE` (looked up in the statements when
    /// the field's own options are not interpreted yet).
    pub(super) fn is_source_retained(&self, fi: &FieldInfo<'_>) -> bool {
        if fi.f.options.as_ref().and_then(|o| o.retention) == Some(2) {
            return true;
        }
        self.pool.files[fi.file].source_retained.contains(&fi.path)
    }

    /// A text-format field name: the field name, or a group's type name.
    pub(super) fn text_field(&self, msg: &str, name: &str) -> Option<FieldInfo<'a>> {
        if let Some(f) = self.field_by_name(msg, name) {
            return Some(f);
        }
        self.field_where(msg, |f| {
            f.r#type == Some(field_type::GROUP)
                && f.type_name.as_deref().and_then(|t| t.rsplit('.').next()) == Some(name)
        })
    }

    pub(super) fn extension(
        &self,
        msg: &str,
        name: &str,
        scope: &str,
        pos: Pos,
    ) -> Result<FieldInfo<'a>, ProtoError> {
        let (full, sym) = self
            .pool
            .symbols
            .lookup(name, scope, &self.visible, false)
            .map_err(|_| oerr(format!("Option \"({name})\" unknown. Ensure that your proto definition file imports the proto which defines the option."), pos))?;
        let f = if sym.kind == SymKind::Extension {
            field_at(&self.pool.files[sym.file].file, &sym.path)
        } else {
            None
        };
        let Some(f) = f else {
            return Err(oerr(
                format!("Option \"({full})\" is not a field or extension."),
                pos,
            ));
        };
        if f.extendee.as_deref().map(|e| e.trim_start_matches('.')) != Some(msg) {
            return Err(oerr(
                format!(
                    "Option \"({full})\" is an extension of \"{}\", not of \"{msg}\".",
                    f.extendee.as_deref().unwrap_or("").trim_start_matches('.')
                ),
                pos,
            ));
        }
        Ok(FieldInfo {
            f,
            file: sym.file,
            path: sym.path.clone(),
        })
    }
}
