//! Protocol Buffers' text format, as Google's Python `text_format` writes
//! it: [`print::print_text`] over any [`MessageSource`](crate::proto::runtime::MessageSource).

pub mod print;

pub use print::{print_text, PrintFailure, TextOptions};
