//! The fast check of a sub-message a parse keeps as bytes.
//!
//! A parse that keeps a sub-message as bytes (built when first read) must
//! still refuse, at the parse, every input the build would refuse:
//! [`Decoder::check`] walks the bytes with the decoder's own loop over a
//! builder that keeps nothing, which gives the error the build would give.
//! That walk pays for the generality of the loop on every field. The scan
//! here answers the one question the common input asks, "does this decode
//! without error?", for the fields a message type's fast table reads (see
//! [`MessageInfo`]'s `fast`): numbers, strings and bytes, packed runs and
//! sub-messages, the sub-messages walked with a stack of their own instead
//! of recursion. Whatever else it meets (an unknown field, a group, a map
//! entry, a field the table sends to the general path, the depth limit, an
//! error) makes it say "not sure", and the decoder's walk decides, so every
//! error still comes from one place with its kind, offset and path.
//!
//! The scan says "yes" only where the decoder's walk would read every
//! field through `fast_field` and fail nowhere: each op below fails where,
//! and only where, `fast_field` fails for that op.
//!
//! [`MessageInfo`]: crate::proto::runtime::schema::MessageInfo

use crate::proto::runtime::bits::read_run;
use crate::proto::runtime::builder::MessageBuilder;
use crate::proto::runtime::schema::{FastOp, Kind};
use crate::proto::wire::WireReader;

use super::decoder::{number_bits, Decoder};

impl<B: MessageBuilder> Decoder<'_, '_, B> {
    /// Whether message `ty`, the bytes `r` reads, at nesting `depth`,
    /// certainly decodes without error (see the module's text); `false`
    /// means "not sure", not "invalid".
    pub(super) fn scan(&mut self, mut r: WireReader<'_>, mut ty: u32, mut depth: usize) -> bool {
        let t = self.t;
        let max_depth = self.opts.max_depth;
        // The enclosing messages: each one's end and type (the reader
        // resumes there at the end of the sub-message, which is where the
        // sub-message's length said it ends).
        let frames = &mut self.frames;
        frames.clear();
        let mut info = &t.messages[ty as usize];
        loop {
            if r.at_end() {
                let Some((end, parent)) = frames.pop() else {
                    return true;
                };
                r = r.sub(r.pos(), end);
                ty = parent;
                info = &t.messages[ty as usize];
                depth -= 1;
                continue;
            }
            let Some(fe) = r.varint().ok().and_then(|tag| info.fast_entry(tag)) else {
                return false;
            };
            let ok = match fe.op {
                // The decoder's own reading of numbers: it fails exactly
                // where the decoder's does.
                op if op.reads_number() => number_bits(op, &mut r).is_ok(),
                FastOp::Text | FastOp::PushText => r.len_prefixed().is_ok(),
                FastOp::StrChecked | FastOp::PushStrChecked => match r.len_prefixed() {
                    Ok((s, e)) => crate::bytes::utf8::str(r.slice(s, e)).is_ok(),
                    Err(_) => false,
                },
                FastOp::Packed => match r.len_prefixed() {
                    // The decoder's own reader of runs: it fails exactly
                    // where the decoder's does.
                    Ok((s, e)) => {
                        let kind = info.fields[fe.pos as usize].kind;
                        let run = &mut self.run;
                        run.clear();
                        read_run(&mut r.sub(s, e), kind, run).is_ok()
                    }
                    Err(_) => false,
                },
                FastOp::Message => {
                    let Kind::Message(sub) = info.fields[fe.pos as usize].kind else {
                        return false;
                    };
                    if depth + 1 > max_depth {
                        return false;
                    }
                    let Ok((s, e)) = r.len_prefixed() else {
                        return false;
                    };
                    frames.push((r.end(), ty));
                    r = r.sub(s, e);
                    ty = sub;
                    info = &t.messages[ty as usize];
                    depth += 1;
                    true
                }
                _ => false,
            };
            if !ok {
                return false;
            }
        }
    }
}
