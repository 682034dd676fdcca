//! The `.proto` part of amber: descriptor.proto's messages as plain structs
//! and their hand-written wire encoding and decoding.
//!
//! - [`descriptor`], [`wire`]: descriptor.proto's messages and their wire
//!   form;
//! - [`error`]: [`ProtoError`] (`file:line:col: message`) and
//!   [`WireError`] (byte offset).

pub mod descriptor;
pub mod error;
pub mod wire;

pub use descriptor::FileDescriptorSet;
pub use error::{Pos, ProtoError, ProtoErrorKind, WireError};
pub use wire::Message;
