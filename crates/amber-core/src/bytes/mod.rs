//! The byte layer every part stands on: a bounds-checked reader with its own
//! small error type, varints (strict canonical form for amber, lenient form
//! and zigzag for protobuf), recursion on a bounded stack, and `$.path`
//! rendering, and UTF-8 checks with an ASCII fast path.

pub mod path;
pub mod reader;
pub mod stack;
pub mod utf8;
pub mod varint;
