//! JSON text exactly as Python's `json.dumps` writes it: compact with
//! `", "` and `": "` separators, or with `indent` (newlines, `","` between
//! items, `"{}"`/`"[]"` when empty); strings escaped as its encoder does
//! (`ensure_ascii`: `\uXXXX` in lowercase hex, surrogate pairs above the
//! BMP); `sort_keys` orders every object's members by key.

/// Where the printer's output goes: JSON text ([`Writer`]), or (at the
/// Python edge) dicts and lists. Values come in document order; an
/// object's members as `key` then the value; an array's items after
/// `item`.
pub trait Sink {
    /// Open an object.
    fn begin_object(&mut self);
    /// Open an object that will have at most about `n` members (a hint a
    /// sink may size its object by).
    fn begin_object_sized(&mut self, n: usize) {
        let _ = n;
        self.begin_object()
    }
    /// The next member's key.
    fn key(&mut self, k: &str);
    /// The next member's key, a field name: the same `&str` (from the
    /// tables) each time that field is written, so a sink may cache what
    /// it makes of it by address.
    fn field_key(&mut self, k: &str) {
        self.key(k)
    }
    /// Close an object.
    fn end_object(&mut self);
    /// Open an array.
    fn begin_array(&mut self);
    /// Before each item of an array.
    fn item(&mut self);
    /// Close an array.
    fn end_array(&mut self);
    /// `null`.
    fn null(&mut self);
    /// `true` or `false`.
    fn bool(&mut self, v: bool);
    /// A string.
    fn str(&mut self, s: &str);
    /// An integer (32-bit fields and enum numbers).
    fn int(&mut self, v: i64);
    /// A 64-bit integer, which ProtoJSON writes as a string of its
    /// decimal digits (a sink may keep the strings of small numbers).
    fn int_str(&mut self, v: i128) {
        let mut b = [0u8; 24];
        self.str(crate::proto::json::num::fmt_i64_or_u64(&mut b, v))
    }
    /// A finite float (written as Python's `repr`).
    fn float(&mut self, v: f64);
}

impl<W: Sink + ?Sized> Sink for &mut W {
    fn begin_object(&mut self) {
        (**self).begin_object()
    }
    fn begin_object_sized(&mut self, n: usize) {
        (**self).begin_object_sized(n)
    }
    fn key(&mut self, k: &str) {
        (**self).key(k)
    }
    fn field_key(&mut self, k: &str) {
        (**self).field_key(k)
    }
    fn end_object(&mut self) {
        (**self).end_object()
    }
    fn begin_array(&mut self) {
        (**self).begin_array()
    }
    fn item(&mut self) {
        (**self).item()
    }
    fn end_array(&mut self) {
        (**self).end_array()
    }
    fn null(&mut self) {
        (**self).null()
    }
    fn int_str(&mut self, v: i128) {
        (**self).int_str(v)
    }
    fn bool(&mut self, v: bool) {
        (**self).bool(v)
    }
    fn str(&mut self, s: &str) {
        (**self).str(s)
    }
    fn int(&mut self, v: i64) {
        (**self).int(v)
    }
    fn float(&mut self, v: f64) {
        (**self).float(v)
    }
}

impl Sink for Writer {
    fn begin_object(&mut self) {
        Writer::begin_object(self)
    }
    fn key(&mut self, k: &str) {
        Writer::key(self, k)
    }
    fn end_object(&mut self) {
        Writer::end_object(self)
    }
    fn begin_array(&mut self) {
        Writer::begin_array(self)
    }
    fn item(&mut self) {
        Writer::item(self)
    }
    fn end_array(&mut self) {
        Writer::end_array(self)
    }
    fn null(&mut self) {
        Writer::null(self)
    }
    fn bool(&mut self, v: bool) {
        Writer::bool(self, v)
    }
    fn str(&mut self, s: &str) {
        self.string(s)
    }
    fn int(&mut self, v: i64) {
        crate::proto::json::num::push_i64(&mut self.out, v)
    }
    fn float(&mut self, v: f64) {
        crate::proto::json::num::push_f64(&mut self.out, v)
    }
}

/// One open object or array.
struct Frame {
    /// No member or item written yet.
    first: bool,
    /// Where the first member's separator would go (right after `{`).
    body: usize,
    /// With `sort_keys`, an object's members: key and the byte range of
    /// the member (key through value, without separator or indentation).
    members: Vec<(String, usize, usize)>,
}

/// The output being written.
pub struct Writer {
    /// The text so far (valid UTF-8: only whole strings are written).
    pub out: Vec<u8>,
    indent: Option<usize>,
    sort_keys: bool,
    ensure_ascii: bool,
    frames: Vec<Frame>,
    /// Spare member lists, reused.
    spare: Vec<Vec<(String, usize, usize)>>,
}

const HEX: &[u8; 16] = b"0123456789abcdef";

impl Writer {
    /// A writer with `json.dumps`'s settings.
    pub fn new(indent: Option<usize>, sort_keys: bool, ensure_ascii: bool) -> Writer {
        Writer {
            out: Vec::with_capacity(256),
            indent,
            sort_keys,
            ensure_ascii,
            frames: Vec::new(),
            spare: Vec::new(),
        }
    }

    fn newline(&mut self, level: usize) {
        if let Some(n) = self.indent {
            self.out.push(b'\n');
            self.out.resize(self.out.len() + n * level, b' ');
        }
    }

    /// The separator before an item or member.
    fn separate(&mut self) {
        let level = self.frames.len();
        let Some(f) = self.frames.last_mut() else {
            return;
        };
        if f.first {
            f.first = false;
        } else if self.indent.is_some() {
            self.out.push(b',');
        } else {
            self.out.extend_from_slice(b", ");
        }
        self.newline(level);
    }

    /// Open an object.
    pub fn begin_object(&mut self) {
        self.out.push(b'{');
        let members = self.spare.pop().unwrap_or_default();
        self.frames.push(Frame {
            first: true,
            body: self.out.len(),
            members,
        });
    }

    /// Open an array.
    pub fn begin_array(&mut self) {
        self.out.push(b'[');
        self.frames.push(Frame {
            first: true,
            body: self.out.len(),
            members: Vec::new(),
        });
    }

    /// Start an array item.
    pub fn item(&mut self) {
        self.separate();
    }

    /// Start an object member: its key (then write the value).
    pub fn key(&mut self, k: &str) {
        self.end_member();
        self.separate();
        if self.sort_keys {
            let start = self.out.len();
            if let Some(f) = self.frames.last_mut() {
                f.members.push((k.to_string(), start, usize::MAX));
            }
        }
        self.string(k);
        self.out.extend_from_slice(b": ");
    }

    /// Close the member being written (`sort_keys`).
    fn end_member(&mut self) {
        if !self.sort_keys {
            return;
        }
        let end = self.out.len();
        if let Some(f) = self.frames.last_mut() {
            if let Some(last) = f.members.last_mut() {
                if last.2 == usize::MAX {
                    last.2 = end;
                }
            }
        }
    }

    /// Close an object.
    pub fn end_object(&mut self) {
        self.end_member();
        let Some(mut f) = self.frames.pop() else {
            return;
        };
        if self.sort_keys && f.members.len() > 1 {
            let body = self.out[f.body..].to_vec();
            self.out.truncate(f.body);
            f.members.sort_by(|a, b| a.0.cmp(&b.0));
            self.frames.push(Frame {
                first: true,
                body: f.body,
                members: Vec::new(),
            });
            for (_, s, e) in &f.members {
                self.separate();
                self.out.extend_from_slice(&body[s - f.body..e - f.body]);
            }
            self.frames.pop();
        }
        self.close(f.first, b'}');
        f.members.clear();
        self.spare.push(f.members);
    }

    /// Close an array.
    pub fn end_array(&mut self) {
        if let Some(f) = self.frames.pop() {
            self.close(f.first, b']');
        }
    }

    fn close(&mut self, empty: bool, c: u8) {
        if !empty {
            self.newline(self.frames.len());
        }
        self.out.push(c);
    }

    /// `null`.
    pub fn null(&mut self) {
        self.out.extend_from_slice(b"null");
    }

    /// `true` or `false`.
    pub fn bool(&mut self, v: bool) {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
    }

    /// A string, escaped as `json.dumps` does.
    pub fn string(&mut self, s: &str) {
        let out = &mut self.out;
        out.push(b'"');
        let b = s.as_bytes();
        let mut run = 0;
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            let plain = if self.ensure_ascii {
                (0x20..0x7f).contains(&c) && c != b'"' && c != b'\\'
            } else {
                c >= 0x20 && c != b'"' && c != b'\\'
            };
            if plain {
                i += 1;
                continue;
            }
            out.extend_from_slice(&b[run..i]);
            match c {
                b'"' => out.extend_from_slice(b"\\\""),
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                0x08 => out.extend_from_slice(b"\\b"),
                0x0c => out.extend_from_slice(b"\\f"),
                c if c < 0x80 => push_u(out, c as u32),
                _ => {
                    // A multi-byte character (ensure_ascii): decode it.
                    let len = match c {
                        0xC0..=0xDF => 2,
                        0xE0..=0xEF => 3,
                        _ => 4,
                    };
                    let ch = s[i..].chars().next().map_or(0xFFFD, |ch| ch as u32);
                    if ch >= 0x10000 {
                        let v = ch - 0x10000;
                        push_u(out, 0xD800 | (v >> 10));
                        push_u(out, 0xDC00 | (v & 0x3FF));
                    } else {
                        push_u(out, ch);
                    }
                    i += len;
                    run = i;
                    continue;
                }
            }
            i += 1;
            run = i;
        }
        out.extend_from_slice(&b[run..]);
        out.push(b'"');
    }

    /// Raw text (a number).
    pub fn raw(&mut self, s: &[u8]) {
        self.out.extend_from_slice(s);
    }
}

fn push_u(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&[
        b'\\',
        b'u',
        HEX[(v >> 12) as usize & 15],
        HEX[(v >> 8) as usize & 15],
        HEX[(v >> 4) as usize & 15],
        HEX[v as usize & 15],
    ]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(w: &mut Writer) {
        w.begin_object();
        w.key("b");
        w.begin_array();
        w.item();
        w.raw(b"1");
        w.item();
        w.begin_object();
        w.end_object();
        w.end_array();
        w.key("a");
        w.string("x\u{e9}\u{1F600}\"\n\u{7f}");
        w.key("c");
        w.begin_array();
        w.end_array();
        w.end_object();
    }

    #[test]
    fn layouts_match_json_dumps() {
        let mut w = Writer::new(None, false, true);
        doc(&mut w);
        assert_eq!(
            String::from_utf8(w.out).unwrap(),
            r#"{"b": [1, {}], "a": "x\u00e9\ud83d\ude00\"\n\u007f", "c": []}"#
        );
        let mut w = Writer::new(Some(2), true, false);
        doc(&mut w);
        assert_eq!(
            String::from_utf8(w.out).unwrap(),
            "{\n  \"a\": \"x\u{e9}\u{1F600}\\\"\\n\u{7f}\",\n  \"b\": [\n    1,\n    {}\n  ],\n  \"c\": []\n}"
        );
    }
}
