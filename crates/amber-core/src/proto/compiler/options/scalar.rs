//! Scalar option values: integers of every width and encoding, floats,
//! bools, strings and bytes, enum values by name.

use super::{oerr, FieldInfo, Interp};
use crate::bytes::varint;
use crate::proto::compiler::ast::{Lit, Scalar};
use crate::proto::compiler::symbols::enum_at;
use crate::proto::descriptor::*;
use crate::proto::error::ProtoError;
use crate::proto::wire;

impl Interp<'_> {
    /// Encode one scalar value of field `fi` (no tag when `packed`).
    pub(super) fn scalar(
        &self,
        fi: &FieldInfo<'_>,
        s: &Scalar,
        packed: bool,
        text: bool,
        out: &mut Vec<u8>,
    ) -> Result<(), ProtoError> {
        use field_type::*;
        let f = fi.f;
        let name = f.name.as_deref().unwrap_or("");
        let num = f.number.unwrap_or(0) as u32;
        let t = f.r#type.unwrap_or(0);
        let int = |min: i128, max: i128, tname: &str| -> Result<i128, ProtoError> {
            match s.lit {
                Lit::Int(v) => {
                    let v = if s.neg { -(v as i128) } else { v as i128 };
                    if v < min || v > max {
                        return Err(oerr(
                            format!("Value out of range for {tname} option \"{name}\"."),
                            s.pos,
                        ));
                    }
                    Ok(v)
                }
                _ => Err(oerr(
                    format!("Value must be integer for {tname} option \"{name}\"."),
                    s.pos,
                )),
            }
        };
        let tag = |out: &mut Vec<u8>, wt: u8| {
            if !packed {
                wire::put_tag(out, num, wt);
            }
        };
        match t {
            INT32 | INT64 | UINT32 | UINT64 | SINT32 | SINT64 | BOOL | ENUM => {
                let v: u64 = match t {
                    INT32 => int(i32::MIN as i128, i32::MAX as i128, "int32")? as i64 as u64,
                    INT64 => int(i64::MIN as i128, i64::MAX as i128, "int64")? as i64 as u64,
                    UINT32 => int(0, u32::MAX as i128, "uint32")? as u64,
                    UINT64 => int(0, u64::MAX as i128, "uint64")? as u64,
                    SINT32 => varint::zigzag(int(i32::MIN as i128, i32::MAX as i128, "sint32")? as i64),
                    SINT64 => varint::zigzag(int(i64::MIN as i128, i64::MAX as i128, "sint64")? as i64),
                    BOOL => match (&s.lit, s.neg) {
                        // Text format also takes True, t, 1 (and the falses);
                        // an option statement only the identifiers.
                        (Lit::Ident(b), false) if b == "true" => 1,
                        (Lit::Ident(b), false) if b == "false" => 0,
                        (Lit::Ident(b), false) if text && (b == "True" || b == "t") => 1,
                        (Lit::Ident(b), false) if text && (b == "False" || b == "f") => 0,
                        (Lit::Int(v @ (0 | 1)), false) if text => *v,
                        _ => return Err(oerr(format!("Value must be \"true\" or \"false\" for boolean option \"{name}\"."), s.pos)),
                    },
                    _ => self.enum_value(f, s, text)? as i64 as u64,
                };
                tag(out, wire::VARINT);
                varint::write(out, v);
            }
            FIXED32 | SFIXED32 | FLOAT => {
                let b = match t {
                    FIXED32 => (int(0, u32::MAX as i128, "fixed32")? as u32).to_le_bytes(),
                    SFIXED32 => {
                        (int(i32::MIN as i128, i32::MAX as i128, "sfixed32")? as i32).to_le_bytes()
                    }
                    _ => (self.float(s, name)? as f32).to_le_bytes(),
                };
                tag(out, wire::FIXED32);
                out.extend_from_slice(&b);
            }
            FIXED64 | SFIXED64 | DOUBLE => {
                let b = match t {
                    FIXED64 => (int(0, u64::MAX as i128, "fixed64")? as u64).to_le_bytes(),
                    SFIXED64 => {
                        (int(i64::MIN as i128, i64::MAX as i128, "sfixed64")? as i64).to_le_bytes()
                    }
                    _ => self.float(s, name)?.to_le_bytes(),
                };
                tag(out, wire::FIXED64);
                out.extend_from_slice(&b);
            }
            STRING | BYTES => match &s.lit {
                Lit::Str(b) => {
                    if t == STRING && std::str::from_utf8(b).is_err() {
                        return Err(oerr(
                            format!("Value for string option \"{name}\" is not valid UTF-8."),
                            s.pos,
                        ));
                    }
                    wire::put_len(out, num, b);
                }
                _ => {
                    return Err(oerr(
                        format!("Value must be quoted string for string option \"{name}\"."),
                        s.pos,
                    ))
                }
            },
            _ => {
                return Err(oerr(
                    format!("Option \"{name}\" is a message; give it a {{ ... }} value."),
                    s.pos,
                ))
            }
        }
        Ok(())
    }

    pub(super) fn float(&self, s: &Scalar, name: &str) -> Result<f64, ProtoError> {
        let v = match &s.lit {
            Lit::Int(v) => *v as f64,
            Lit::Float(v) => *v,
            Lit::Ident(i) if i == "inf" || i == "infinity" => f64::INFINITY,
            // `nan` and `-nan` alike: protoc writes the canonical quiet NaN.
            Lit::Ident(i) if i == "nan" => return Ok(f64::NAN),
            _ => {
                return Err(oerr(
                    format!("Value must be number for float option \"{name}\"."),
                    s.pos,
                ))
            }
        };
        Ok(if s.neg { -v } else { v })
    }

    pub(super) fn enum_value(
        &self,
        f: &FieldDescriptorProto,
        s: &Scalar,
        text: bool,
    ) -> Result<i32, ProtoError> {
        let tn = f.type_name.as_deref().unwrap_or("").trim_start_matches('.');
        let e = self
            .pool
            .symbols
            .get(tn)
            .and_then(|sym| enum_at(&self.pool.files[sym.file].file, &sym.path));
        let Some(e) = e else {
            return Err(oerr(format!("Enum type \"{tn}\" not found."), s.pos));
        };
        match (&s.lit, s.neg) {
            (Lit::Ident(n), false) => e
                .value
                .iter()
                .find(|v| v.name.as_deref() == Some(n.as_str()))
                .and_then(|v| v.number)
                .ok_or_else(|| {
                    oerr(
                        format!(
                            "Enum type \"{tn}\" has no value named \"{n}\" for option \"{}\".",
                            f.name.as_deref().unwrap_or("")
                        ),
                        s.pos,
                    )
                }),
            // Numbers name enum values in text format only.
            (Lit::Int(v), neg) if text => {
                let v = if neg { -(*v as i128) } else { *v as i128 };
                i32::try_from(v).map_err(|_| oerr("Enum value out of range.", s.pos))
            }
            _ => Err(oerr(
                format!(
                    "Value must be identifier for enum-valued option \"{}\".",
                    f.name.as_deref().unwrap_or("")
                ),
                s.pos,
            )),
        }
    }
}
