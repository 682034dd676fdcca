//! Building the schema [`Tables`] from a [`FileDescriptorSet`]: every type
//! numbered, then each message's fields with their features resolved and
//! defaults parsed, then extensions added to the types they extend.
//!
//! Feature resolution follows protobuf's editions rules: the edition's
//! defaults (proto2 and proto3 are their fixed feature sets), then the
//! file's `features`, then each enclosing message's, then the oneof's (for
//! its members), then the field's. Enums resolve file -> enclosing messages
//! -> enum. A map's entry fields inherit the map field's resolved features.

use std::collections::HashMap;

use crate::proto::descriptor::{
    edition, field_type as ft, label, DescriptorProto, EnumDescriptorProto, FeatureSet,
    FieldDescriptorProto, FileDescriptorSet,
};
use crate::proto::runtime::schema::{
    Cardinality, DefaultValue, EnumInfo, Fast, FastOp, FieldInfo, Kind, MessageInfo, Names, Tables,
    DENSE_LIMIT,
};

impl Kind {
    fn from_type(t: i32, type_name: Option<&str>, names: &Names) -> Result<Kind, String> {
        Ok(match t {
            ft::DOUBLE => Kind::Double,
            ft::FLOAT => Kind::Float,
            ft::INT64 => Kind::Int64,
            ft::UINT64 => Kind::Uint64,
            ft::INT32 => Kind::Int32,
            ft::FIXED64 => Kind::Fixed64,
            ft::FIXED32 => Kind::Fixed32,
            ft::BOOL => Kind::Bool,
            ft::STRING => Kind::String,
            ft::BYTES => Kind::Bytes,
            ft::UINT32 => Kind::Uint32,
            ft::SFIXED32 => Kind::Sfixed32,
            ft::SFIXED64 => Kind::Sfixed64,
            ft::SINT32 => Kind::Sint32,
            ft::SINT64 => Kind::Sint64,
            ft::ENUM => {
                let n = type_name.unwrap_or("");
                Kind::Enum(*names.enums.get(n).ok_or(format!("unknown enum {n}"))?)
            }
            ft::MESSAGE | ft::GROUP => {
                let n = type_name.unwrap_or("");
                Kind::Message(
                    *names
                        .messages
                        .get(n)
                        .ok_or(format!("unknown message {n}"))?,
                )
            }
            _ => return Err(format!("unknown field type {t}")),
        })
    }
}

impl MessageInfo {
    /// Sort `fields` by number again after fields were added, and rebuild
    /// the lookups (`dense`, `decl_order`) to match.
    fn index_fields(&mut self) -> Result<(), String> {
        let declared: Vec<u32> = self
            .decl_order
            .iter()
            .map(|&i| self.fields[i as usize].number)
            .collect();
        self.fields.sort_by_key(|f| f.number);
        if self.fields.len() > u16::MAX as usize - 1 {
            return Err(format!("{} has too many fields", self.full_name));
        }
        for (i, f) in self.fields.iter_mut().enumerate() {
            f.pos = i as u32;
        }
        self.decl_order = declared
            .iter()
            .filter_map(|n| self.fields.binary_search_by_key(n, |f| f.number).ok())
            .map(|i| i as u32)
            .collect();
        let max_dense = self
            .fields
            .iter()
            .map(|f| f.number)
            .filter(|&n| n < DENSE_LIMIT)
            .max()
            .map_or(0, |n| n as usize + 1);
        self.dense = vec![0u16; max_dense];
        self.fast = vec![Fast::SLOW; max_dense];
        // A field alone in its oneof (a proto3 `optional` field's synthetic
        // oneof) clears no other when set: it is read as one outside oneofs.
        let mut members = vec![0u32; self.oneofs.len()];
        for o in self.fields.iter().filter_map(|f| f.oneof) {
            if let Some(n) = members.get_mut(o as usize) {
                *n += 1;
            }
        }
        let alone = |f: &FieldInfo| f.oneof.is_none_or(|o| members.get(o as usize) == Some(&1));
        for (i, f) in self.fields.iter().enumerate() {
            if f.number < DENSE_LIMIT {
                self.dense[f.number as usize] = (i + 1) as u16;
                self.fast[f.number as usize] = Fast::of(f, i as u16, alone(f));
            }
        }
        self.plain = self.fields.iter().all(|f| {
            let op = self
                .fast
                .get(f.number as usize)
                .map_or(FastOp::Slow, |e| e.op);
            crate::proto::runtime::decode::reads_plain(f, op, alone(f))
        });
        Ok(())
    }
}

impl Tables {
    /// Compile a descriptor set (as `compile` or `protoc` makes them, with
    /// every imported file present).
    pub fn from_set(set: &FileDescriptorSet) -> Result<Tables, String> {
        let mut t = Tables::default();
        // Pass 1: number every type and resolve enum features.
        for file in &set.file {
            let fx = Features::for_file(file);
            let prefix = match &file.package {
                Some(p) if !p.is_empty() => format!(".{p}"),
                _ => String::new(),
            };
            for e in &file.enum_type {
                t.add_enum(e, &prefix, fx);
            }
            for m in &file.message_type {
                t.number_message(m, &prefix, fx);
            }
        }
        // Pass 2: fields.
        let mut idx = 0usize;
        for file in &set.file {
            let fx = Features::for_file(file);
            let proto2 = fx.edition == edition::PROTO2;
            let proto3 = fx.edition == edition::PROTO3;
            for m in &file.message_type {
                t.fill_message(m, fx, &mut idx, (proto2, proto3), None)?;
            }
        }
        // Pass 3: extensions join the fields of the types they extend.
        let mut extensions = Vec::new();
        for file in &set.file {
            let fx = Features::for_file(file);
            let syntax = (fx.edition == edition::PROTO2, fx.edition == edition::PROTO3);
            let prefix = match &file.package {
                Some(p) if !p.is_empty() => format!(".{p}"),
                _ => String::new(),
            };
            let top = DescriptorProto::default();
            for f in &file.extension {
                extensions.push(t.extension(&top, f, fx, syntax, &prefix)?);
            }
            for m in &file.message_type {
                t.nested_extensions(m, fx, syntax, &prefix, &mut extensions)?;
            }
        }
        let mut extended: Vec<u32> = extensions.iter().map(|(ty, _)| *ty).collect();
        for (ty, mut info) in extensions {
            let target = &mut t.messages[ty as usize];
            info.set_item = target.message_set
                && matches!(info.kind, Kind::Message(_))
                && matches!(info.card, Cardinality::Singular { .. });
            target.fields.push(info);
        }
        extended.sort_unstable();
        extended.dedup();
        for ty in extended {
            let target = &mut t.messages[ty as usize];
            target.index_fields()?;
            if let Some(w) = target
                .fields
                .windows(2)
                .find(|w| w[0].number == w[1].number)
            {
                return Err(format!(
                    "{} and {} both use field number {} of {}",
                    w[0].name, w[1].name, w[0].number, target.full_name
                ));
            }
        }
        Ok(t)
    }

    /// The extensions declared inside `m` and the types nested in it.
    fn nested_extensions(
        &self,
        m: &DescriptorProto,
        parent: Features,
        syntax: (bool, bool),
        prefix: &str,
        out: &mut Vec<(u32, FieldInfo)>,
    ) -> Result<(), String> {
        let scope = format!("{prefix}.{}", m.name.as_deref().unwrap_or(""));
        let fx = parent.merge(m.options.as_ref().and_then(|o| o.features.as_ref()));
        for f in &m.extension {
            out.push(self.extension(m, f, fx, syntax, &scope)?);
        }
        for n in &m.nested_type {
            self.nested_extensions(n, fx, syntax, &scope, out)?;
        }
        Ok(())
    }

    /// Extension `f`, declared in `scope` (a package or a message type):
    /// the index of the type it extends, and its field there.
    fn extension(
        &self,
        m: &DescriptorProto,
        f: &FieldDescriptorProto,
        fx: Features,
        syntax: (bool, bool),
        scope: &str,
    ) -> Result<(u32, FieldInfo), String> {
        let mut info = self.field_info(m, f, fx, syntax)?;
        let full = format!("{scope}.{}", info.name);
        let extendee = f.extendee.as_deref().unwrap_or("");
        let ty = self
            .message_index(extendee)
            .ok_or_else(|| format!("extension {} extends unknown type {extendee}", &full[1..]))?;
        info.name = format!("[{}]", &full[1..]);
        info.json_name = info.name.clone();
        info.extension = true;
        Ok((ty, info))
    }

    fn add_enum(&mut self, e: &EnumDescriptorProto, prefix: &str, parent: Features) {
        let name = format!("{prefix}.{}", e.name.as_deref().unwrap_or(""));
        let fx = parent.merge(e.options.as_ref().and_then(|o| o.features.as_ref()));
        let names: Vec<(String, i32)> = e
            .value
            .iter()
            .map(|v| (v.name.clone().unwrap_or_default(), v.number.unwrap_or(0)))
            .collect();
        let mut values: Vec<i32> = names.iter().map(|v| v.1).collect();
        values.sort_unstable();
        values.dedup();
        self.names
            .enums
            .insert(name.clone(), self.enums.len() as u32);
        self.enums.push(EnumInfo {
            full_name: name[1..].to_string(),
            closed: fx.enum_type == CLOSED,
            values,
            names,
        });
    }

    fn number_message(&mut self, m: &DescriptorProto, prefix: &str, parent: Features) {
        let name = format!("{prefix}.{}", m.name.as_deref().unwrap_or(""));
        let fx = parent.merge(m.options.as_ref().and_then(|o| o.features.as_ref()));
        self.names
            .messages
            .insert(name.clone(), self.messages.len() as u32);
        self.messages.push(MessageInfo {
            full_name: name[1..].to_string(),
            fields: Vec::new(),
            oneofs: m
                .oneof_decl
                .iter()
                .map(|o| o.name.clone().unwrap_or_default())
                .collect(),
            map_entry: m.options.as_ref().and_then(|o| o.map_entry) == Some(true),
            message_set: m.options.as_ref().and_then(|o| o.message_set_wire_format) == Some(true),
            decl_order: Vec::new(),
            dense: Vec::new(),
            fast: Vec::new(),
            plain: false,
        });
        for e in &m.enum_type {
            self.add_enum(e, &name, fx);
        }
        for n in &m.nested_type {
            self.number_message(n, &name, fx);
        }
    }

    /// Fill fields in the same pre-order as `number_message`. `inherit`:
    /// for a map entry, the map field's features.
    fn fill_message(
        &mut self,
        m: &DescriptorProto,
        parent: Features,
        idx: &mut usize,
        syntax: (bool, bool),
        inherit: Option<Features>,
    ) -> Result<(), String> {
        let me = *idx;
        *idx += 1;
        let fx = inherit
            .unwrap_or(parent)
            .merge(m.options.as_ref().and_then(|o| o.features.as_ref()));
        let mut fields = Vec::with_capacity(m.field.len());
        let mut map_fx: HashMap<String, Features> = HashMap::new();
        for f in &m.field {
            let info = self.field_info(m, f, fx, syntax)?;
            if info.card == Cardinality::Map {
                if let Some(tn) = &f.type_name {
                    map_fx.insert(tn.clone(), field_features(m, f, fx));
                }
            }
            fields.push(info);
        }
        let full = format!(".{}", self.messages[me].full_name);
        // In declaration order; `index_fields` sorts them by number.
        let target = &mut self.messages[me];
        target.decl_order = (0..fields.len() as u32).collect();
        target.fields = fields;
        target.index_fields()?;
        for n in &m.nested_type {
            let nname = format!("{full}.{}", n.name.as_deref().unwrap_or(""));
            let inh = map_fx.get(&nname).copied();
            self.fill_message(n, fx, idx, syntax, inh)?;
        }
        Ok(())
    }

    fn field_info(
        &self,
        m: &DescriptorProto,
        f: &FieldDescriptorProto,
        msg_fx: Features,
        (proto2, proto3): (bool, bool),
    ) -> Result<FieldInfo, String> {
        let fx = field_features(m, f, msg_fx);
        let t = f.r#type.unwrap_or(0);
        let kind = Kind::from_type(t, f.type_name.as_deref(), &self.names)?;
        let opts = f.options.as_ref();
        let repeated = f.label == Some(label::REPEATED);
        let is_map =
            repeated && matches!(kind, Kind::Message(i) if self.messages[i as usize].map_entry);
        let card = if is_map {
            Cardinality::Map
        } else if repeated {
            let packed = kind.packable()
                && if proto2 {
                    opts.and_then(|o| o.packed) == Some(true)
                } else if proto3 {
                    opts.and_then(|o| o.packed) != Some(false)
                } else {
                    fx.repeated == PACKED
                };
            Cardinality::Repeated { packed }
        } else {
            let presence = matches!(kind, Kind::Message(_))
                || f.oneof_index.is_some()
                || f.proto3_optional == Some(true)
                || if proto2 {
                    true
                } else if proto3 {
                    false
                } else {
                    fx.presence != IMPLICIT
                };
            Cardinality::Singular { presence }
        };
        // A map entry's value is always length-prefixed.
        let in_entry = m.options.as_ref().and_then(|o| o.map_entry) == Some(true);
        let delimited = matches!(kind, Kind::Message(_))
            && !is_map
            && !in_entry
            && (t == ft::GROUP || (!proto2 && !proto3 && fx.msg_enc == DELIMITED));
        let closed_enum = matches!(kind, Kind::Enum(i) if self.enums[i as usize].closed);
        let default = parse_default(kind, f.default_value.as_deref(), self);
        let name = f.name.clone().unwrap_or_default();
        Ok(FieldInfo {
            number: f.number.unwrap_or(0) as u32,
            json_name: f.json_name.clone().unwrap_or_else(|| name.clone()),
            name,
            kind,
            card,
            oneof: f.oneof_index.map(|i| i as u32),
            delimited,
            utf8_verify: kind == Kind::String && !proto2 && fx.utf8 == VERIFY,
            closed_enum,
            default,
            required: f.label == Some(label::REQUIRED) || fx.presence == LEGACY_REQUIRED,
            extension: false,
            set_item: false,
            pos: 0,
        })
    }
}

fn field_features(m: &DescriptorProto, f: &FieldDescriptorProto, msg_fx: Features) -> Features {
    let mut fx = msg_fx;
    if let Some(o) = f.oneof_index.and_then(|i| m.oneof_decl.get(i as usize)) {
        fx = fx.merge(o.options.as_ref().and_then(|o| o.features.as_ref()));
    }
    fx.merge(f.options.as_ref().and_then(|o| o.features.as_ref()))
}

const IMPLICIT: i32 = 2;
const LEGACY_REQUIRED: i32 = 3;
const CLOSED: i32 = 2;
const PACKED: i32 = 1;
const VERIFY: i32 = 2;
const DELIMITED: i32 = 2;

/// The features the runtime needs, resolved.
#[derive(Debug, Clone, Copy)]
struct Features {
    edition: i32,
    presence: i32,
    enum_type: i32,
    repeated: i32,
    utf8: i32,
    msg_enc: i32,
}

impl Features {
    fn for_file(file: &crate::proto::descriptor::FileDescriptorProto) -> Features {
        let ed = match file.syntax.as_deref() {
            Some("proto3") => edition::PROTO3,
            Some("editions") => file.edition.unwrap_or(edition::E2023),
            _ => edition::PROTO2,
        };
        let base = match ed {
            edition::PROTO2 => Features {
                edition: ed,
                presence: 1,
                enum_type: CLOSED,
                repeated: 2,
                utf8: 3,
                msg_enc: 1,
            },
            edition::PROTO3 => Features {
                edition: ed,
                presence: IMPLICIT,
                enum_type: 1,
                repeated: PACKED,
                utf8: VERIFY,
                msg_enc: 1,
            },
            _ => Features {
                edition: ed,
                presence: 1,
                enum_type: 1,
                repeated: PACKED,
                utf8: VERIFY,
                msg_enc: 1,
            },
        };
        base.merge(file.options.as_ref().and_then(|o| o.features.as_ref()))
    }

    fn merge(mut self, fs: Option<&FeatureSet>) -> Features {
        if let Some(fs) = fs {
            let set = |v: &mut i32, o: Option<i32>| {
                if let Some(o) = o.filter(|&o| o != 0) {
                    *v = o;
                }
            };
            set(&mut self.presence, fs.field_presence);
            set(&mut self.enum_type, fs.enum_type);
            set(&mut self.repeated, fs.repeated_field_encoding);
            set(&mut self.utf8, fs.utf8_validation);
            set(&mut self.msg_enc, fs.message_encoding);
        }
        self
    }
}

fn parse_default(kind: Kind, text: Option<&[u8]>, t: &Tables) -> DefaultValue {
    let raw = text.unwrap_or(b"");
    // Every default but a string's or bytes' is ASCII text.
    let s = std::str::from_utf8(raw).unwrap_or("");
    let float = |s: &str| match s {
        "inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        "nan" | "-nan" => f64::NAN,
        _ => s.parse().unwrap_or(0.0),
    };
    match kind {
        Kind::Double | Kind::Float => DefaultValue::Float(float(s)),
        Kind::Int64
        | Kind::Int32
        | Kind::Sfixed32
        | Kind::Sfixed64
        | Kind::Sint32
        | Kind::Sint64 => DefaultValue::Int(s.parse().unwrap_or(0)),
        Kind::Uint64 | Kind::Uint32 | Kind::Fixed32 | Kind::Fixed64 => {
            DefaultValue::Uint(s.parse().unwrap_or(0))
        }
        Kind::Bool => DefaultValue::Bool(s == "true"),
        // A string default that is not UTF-8 (protoc keeps "\xff" and lone
        // surrogates' bytes) is kept as its bytes.
        Kind::String => match std::str::from_utf8(raw) {
            Ok(s) => DefaultValue::Str(s.to_string()),
            Err(_) => DefaultValue::Bytes(raw.to_vec()),
        },
        Kind::Bytes => DefaultValue::Bytes(unescape(raw)),
        Kind::Enum(e) => {
            let info = &t.enums[e as usize];
            let first = info.names.first().map_or(0, |v| v.1);
            DefaultValue::Enum(info.names.iter().find(|v| v.0 == s).map_or(first, |v| v.1))
        }
        Kind::Message(_) => DefaultValue::None,
    }
}

/// Undo protoc's C escaping of a `bytes` default (kept as written if it
/// is not valid escaping).
fn unescape(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    match crate::proto::escape::unescape_body(s, &mut out) {
        Ok(()) => out,
        Err(_) => s.to_vec(),
    }
}
