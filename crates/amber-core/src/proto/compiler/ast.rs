//! What the parser hands the resolver besides the descriptor itself: option
//! statements not yet interpreted, and where each element was written.
//!
//! Elements are named by paths like `SourceCodeInfo`'s: field numbers of
//! descriptor.proto and indexes, e.g. `[4, 0, 2, 1]` is the second field of
//! the first message. [`Locs`] maps such a path to the position of the
//! element's name; a path with one more number (the descriptor field
//! number, e.g. 6 for `type_name`) to the position of that part.

use std::collections::{HashMap, HashSet};

use crate::proto::descriptor::{ExtensionRangeOptions, FileDescriptorProto};
use crate::proto::error::Pos;

/// Positions of elements and of their parts, by path.
pub type Locs = HashMap<Vec<i32>, Pos>;

/// A literal in an option value or a text-format aggregate.
#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    /// An identifier (`true`, `inf`, an enum value name ...).
    Ident(String),
    /// An integer.
    Int(u64),
    /// A float literal.
    Float(f64),
    /// A string (adjacent literals joined).
    Str(Vec<u8>),
}

/// A scalar value: a literal with an optional leading minus sign.
#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    /// Written with a leading `-`.
    pub neg: bool,
    /// The literal.
    pub lit: Lit,
    /// Where it starts.
    pub pos: Pos,
}

/// The value of an option.
#[derive(Debug, Clone, PartialEq)]
pub enum OptValue {
    /// A scalar.
    Scalar(Scalar),
    /// A `{ ... }` text-format message.
    Aggregate(Vec<TextField>),
}

/// The name of a field in a text-format message.
#[derive(Debug, Clone, PartialEq)]
pub enum TextName {
    /// A plain field name.
    Field(String),
    /// `[pkg.ext]`: an extension.
    Ext(String),
    /// `[type.googleapis.com/pkg.Msg]`: an expanded `Any`.
    Any(String, String),
}

/// One `name: value` of a text-format message.
#[derive(Debug, Clone, PartialEq)]
pub struct TextField {
    /// The field.
    pub name: TextName,
    /// Where the name starts.
    pub pos: Pos,
    /// The value.
    pub value: TextValue,
}

/// A value in a text-format message.
#[derive(Debug, Clone, PartialEq)]
pub enum TextValue {
    /// A scalar.
    Scalar(Scalar),
    /// A nested message.
    Message(Vec<TextField>),
    /// `[a, b, ...]`: several values of a repeated field.
    List(Vec<TextValue>),
}

/// One part of an option name: `foo` or `(foo.bar)`.
#[derive(Debug, Clone, PartialEq)]
pub struct NamePart {
    /// The name (for an extension, as written, maybe with a leading dot).
    pub name: String,
    /// Written in parentheses: an extension.
    pub is_ext: bool,
    /// Where it starts.
    pub pos: Pos,
}

/// Which options message an option statement sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OptKind {
    /// `FileOptions`.
    File,
    /// `MessageOptions`.
    Message,
    /// `FieldOptions`.
    Field,
    /// `OneofOptions`.
    Oneof,
    /// `EnumOptions`.
    Enum,
    /// `EnumValueOptions`.
    EnumValue,
    /// `ServiceOptions`.
    Service,
    /// `MethodOptions`.
    Method,
    /// `ExtensionRangeOptions`.
    ExtensionRange,
}

impl OptKind {
    /// The `FieldOptions.OptionTargetType` of this kind of element.
    pub fn target_type(self) -> i32 {
        match self {
            OptKind::File => 1,
            OptKind::ExtensionRange => 2,
            OptKind::Message => 3,
            OptKind::Field => 4,
            OptKind::Oneof => 5,
            OptKind::Enum => 6,
            OptKind::EnumValue => 7,
            OptKind::Service => 8,
            OptKind::Method => 9,
        }
    }

    /// The element's kind in words, as protoc names it in errors.
    pub fn entity_name(self) -> &'static str {
        match self {
            OptKind::File => "file",
            OptKind::ExtensionRange => "extension range",
            OptKind::Message => "message",
            OptKind::Field => "field",
            OptKind::Oneof => "oneof",
            OptKind::Enum => "enum",
            OptKind::EnumValue => "enum entry",
            OptKind::Service => "service",
            OptKind::Method => "method",
        }
    }

    /// The options message's full name.
    pub fn message_name(self) -> &'static str {
        match self {
            OptKind::File => "google.protobuf.FileOptions",
            OptKind::Message => "google.protobuf.MessageOptions",
            OptKind::Field => "google.protobuf.FieldOptions",
            OptKind::Oneof => "google.protobuf.OneofOptions",
            OptKind::Enum => "google.protobuf.EnumOptions",
            OptKind::EnumValue => "google.protobuf.EnumValueOptions",
            OptKind::Service => "google.protobuf.ServiceOptions",
            OptKind::Method => "google.protobuf.MethodOptions",
            OptKind::ExtensionRange => "google.protobuf.ExtensionRangeOptions",
        }
    }
}

/// An option statement, to be interpreted once names resolve.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingOption {
    /// Path of the element it applies to (empty for the file).
    pub target: Vec<i32>,
    /// Which options message.
    pub kind: OptKind,
    /// Full name of the element, the scope extension names resolve from.
    pub scope: String,
    /// The option name, part by part.
    pub name: Vec<NamePart>,
    /// The value.
    pub value: OptValue,
}

/// A default value as written, checked once the field's type is known.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingDefault {
    /// Path of the field.
    pub target: Vec<i32>,
    /// The value.
    pub value: Scalar,
}

/// One parsed file: the descriptor (names not yet resolved, options not yet
/// interpreted) and what the resolver needs besides.
#[derive(Debug, Clone, Default)]
pub struct ParsedFile {
    /// The descriptor; type names are as written.
    pub file: FileDescriptorProto,
    /// Where things are.
    pub locs: Locs,
    /// Option statements, in source order.
    pub options: Vec<PendingOption>,
    /// Default values of fields.
    pub defaults: Vec<PendingDefault>,
    /// Position of each `import`, by index into `dependency`.
    pub import_pos: Vec<Pos>,
    /// Position of each `import option`, by index into `option_dependency`.
    pub option_import_pos: Vec<Pos>,
    /// `true` for proto3, in which some rules differ.
    pub proto3: bool,
    /// `true` for editions files.
    pub editions: bool,
    /// Paths of messages with `option message_set_wire_format = true;`
    /// (needed before options are interpreted).
    pub message_set: HashSet<Vec<i32>>,
    /// Paths of fields with `[retention = RETENTION_SOURCE]` (needed while
    /// the file's own options are interpreted).
    pub source_retained: HashSet<Vec<i32>>,
    /// Extension declarations and verification of each extension range, by
    /// the range's path (source retention: kept here, out of the
    /// descriptor, for the extensions that use the range).
    pub ext_decls: HashMap<Vec<i32>, ExtensionRangeOptions>,
}

/// The full name of `name` declared in `scope` (`scope.name`, or `name`
/// at the top level).
pub(crate) fn join(scope: &str, name: &str) -> String {
    if scope.is_empty() {
        name.to_string()
    } else {
        format!("{scope}.{name}")
    }
}

/// The descriptor path `path` followed by `more`.
pub(crate) fn pp(path: &[i32], more: &[i32]) -> Vec<i32> {
    let mut p = path.to_vec();
    p.extend_from_slice(more);
    p
}
