//! Protocol Buffers' text format, as Google's Python `text_format` writes
//! and reads it: [`print::print_text`] over any
//! [`MessageSource`](crate::proto::runtime::MessageSource), [`parse::parse_text`]
//! into any [`MessageBuilder`](crate::proto::runtime::MessageBuilder).

pub mod error;
mod lex;
pub mod parse;
pub mod print;

pub use error::{TextError, TextFailure};
pub use parse::{parse_text, ParseOptions};
pub use print::{print_text, PrintFailure, TextOptions};
