//! The encoding protoc gives an options message: its option statements are
//! set on one message and serialized, so fields come out in number order, the
//! statements that set parts of one singular message field are merged into
//! one entry, and packed repeated fields are joined. [`Interp::canonical`]
//! rewrites the concatenated bytes of the statements into that form.

use super::{FieldInfo, Interp};
use crate::proto::descriptor::{field_type, label};
use crate::proto::error::WireError;
use crate::proto::wire::{self, WireReader};

/// One field occurrence: number, wire type, the whole entry, and the payload
/// (for length-delimited fields and groups).
struct Entry<'b> {
    num: u32,
    wt: u8,
    raw: &'b [u8],
    payload: &'b [u8],
}

fn entries(bytes: &[u8]) -> Result<Vec<Entry<'_>>, WireError> {
    let mut r = WireReader::new(bytes);
    let mut out = Vec::new();
    while !r.at_end() {
        let start = r.pos();
        let (num, wt) = r.tag()?;
        let body = r.pos();
        r.skip(num, wt, 0)?;
        let end = r.pos();
        let payload = match wt {
            wire::LEN => {
                let mut p = r.sub(body, end);
                let (s, e) = p.len_prefixed()?;
                &bytes[s..e]
            }
            wire::SGROUP => {
                // Everything up to the end-group tag.
                let mut t = Vec::new();
                wire::put_tag(&mut t, num, wire::EGROUP);
                &bytes[body..end - t.len()]
            }
            _ => &bytes[body..end],
        };
        out.push(Entry {
            num,
            wt,
            raw: &bytes[start..end],
            payload,
        });
    }
    Ok(out)
}

fn wrap(f: &FieldInfo<'_>, inner: &[u8], out: &mut Vec<u8>) {
    let num = f.f.number.unwrap_or(0) as u32;
    if f.f.r#type == Some(field_type::GROUP) {
        wire::put_tag(out, num, wire::SGROUP);
        out.extend_from_slice(inner);
        wire::put_tag(out, num, wire::EGROUP);
    } else {
        wire::put_len(out, num, inner);
    }
}

impl Interp<'_> {
    /// The field of message `msg` (or extension of it) with number `num`.
    fn field_by_number(&self, msg: &str, num: u32) -> Option<FieldInfo<'_>> {
        if let Some(f) = self.field_where(msg, |f| f.number == Some(num as i32)) {
            return Some(f);
        }
        self.extension_by_number(msg, num as i32)
    }

    /// Rewrite `bytes`, fields of message type `msg`, as a serializer of one
    /// message holding them would write them.
    pub(crate) fn canonical(
        &self,
        msg: &str,
        bytes: &[u8],
        depth: usize,
    ) -> Result<Vec<u8>, WireError> {
        if depth > wire::MAX_DEPTH {
            return Err(WireError::new(0, "option value nested too deeply"));
        }
        let all = entries(bytes)?;
        let mut nums: Vec<u32> = all.iter().map(|e| e.num).collect();
        nums.sort_unstable();
        nums.dedup();
        let mut out = Vec::new();
        for num in nums {
            let group: Vec<&Entry<'_>> = all.iter().filter(|e| e.num == num).collect();
            let Some(fi) = self.field_by_number(msg, num) else {
                for e in group {
                    out.extend_from_slice(e.raw);
                }
                continue;
            };
            let t = fi.f.r#type.unwrap_or(0);
            let repeated = fi.f.label == Some(label::REPEATED);
            let sub = fi.f.type_name.clone().unwrap_or_default();
            if t == field_type::MESSAGE || t == field_type::GROUP {
                if repeated {
                    for e in group {
                        let inner = self.canonical(&sub, e.payload, depth + 1)?;
                        wrap(&fi, &inner, &mut out);
                    }
                } else {
                    let joined: Vec<u8> = group
                        .iter()
                        .flat_map(|e| e.payload.iter().copied())
                        .collect();
                    let inner = self.canonical(&sub, &joined, depth + 1)?;
                    wrap(&fi, &inner, &mut out);
                }
            } else if repeated && self.is_packed(&fi) {
                let mut payload = Vec::new();
                for e in group {
                    payload.extend_from_slice(e.payload);
                }
                wire::put_len(&mut out, num, &payload);
            } else if repeated {
                for e in group {
                    out.extend_from_slice(e.raw);
                }
            } else if let Some(e) = group.last() {
                let _ = e.wt;
                out.extend_from_slice(e.raw);
            }
        }
        Ok(out)
    }
}
