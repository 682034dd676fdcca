//! The descriptor messages of `google/protobuf/descriptor.proto`, as plain
//! structs with hand-written wire encoding (see [`wire`](super::wire)).
//!
//! Field names and numbers follow descriptor.proto. Every struct keeps the
//! fields it does not know as raw encoded bytes in `unknown`: custom options
//! land there, as they do in protoc's own output. `SourceCodeInfo` is not
//! modelled: a decoded set keeps it as unknown bytes, written back after the
//! known fields (so after `syntax` and `edition`, where protoc puts it before
//! them; the decoded value is the same).

use crate::proto::wire::message;

/// `FieldDescriptorProto.Type` values.
pub mod field_type {
    /// `TYPE_DOUBLE`.
    pub const DOUBLE: i32 = 1;
    /// `TYPE_FLOAT`.
    pub const FLOAT: i32 = 2;
    /// `TYPE_INT64`.
    pub const INT64: i32 = 3;
    /// `TYPE_UINT64`.
    pub const UINT64: i32 = 4;
    /// `TYPE_INT32`.
    pub const INT32: i32 = 5;
    /// `TYPE_FIXED64`.
    pub const FIXED64: i32 = 6;
    /// `TYPE_FIXED32`.
    pub const FIXED32: i32 = 7;
    /// `TYPE_BOOL`.
    pub const BOOL: i32 = 8;
    /// `TYPE_STRING`.
    pub const STRING: i32 = 9;
    /// `TYPE_GROUP`.
    pub const GROUP: i32 = 10;
    /// `TYPE_MESSAGE`.
    pub const MESSAGE: i32 = 11;
    /// `TYPE_BYTES`.
    pub const BYTES: i32 = 12;
    /// `TYPE_UINT32`.
    pub const UINT32: i32 = 13;
    /// `TYPE_ENUM`.
    pub const ENUM: i32 = 14;
    /// `TYPE_SFIXED32`.
    pub const SFIXED32: i32 = 15;
    /// `TYPE_SFIXED64`.
    pub const SFIXED64: i32 = 16;
    /// `TYPE_SINT32`.
    pub const SINT32: i32 = 17;
    /// `TYPE_SINT64`.
    pub const SINT64: i32 = 18;

    /// The type for a scalar keyword of the `.proto` language.
    pub fn from_keyword(k: &str) -> Option<i32> {
        Some(match k {
            "double" => DOUBLE,
            "float" => FLOAT,
            "int64" => INT64,
            "uint64" => UINT64,
            "int32" => INT32,
            "fixed64" => FIXED64,
            "fixed32" => FIXED32,
            "bool" => BOOL,
            "string" => STRING,
            "bytes" => BYTES,
            "uint32" => UINT32,
            "sfixed32" => SFIXED32,
            "sfixed64" => SFIXED64,
            "sint32" => SINT32,
            "sint64" => SINT64,
            _ => return None,
        })
    }
}

/// `FieldDescriptorProto.Label` values.
pub mod label {
    /// `LABEL_OPTIONAL`.
    pub const OPTIONAL: i32 = 1;
    /// `LABEL_REQUIRED`.
    pub const REQUIRED: i32 = 2;
    /// `LABEL_REPEATED`.
    pub const REPEATED: i32 = 3;
}

/// `Edition` values used by the parser.
pub mod edition {
    /// `EDITION_PROTO2`.
    pub const PROTO2: i32 = 998;
    /// `EDITION_PROTO3`.
    pub const PROTO3: i32 = 999;
    /// `EDITION_2023`.
    pub const E2023: i32 = 1000;
    /// `EDITION_2024`.
    pub const E2024: i32 = 1001;
}

message! {
    /// A set of files, as `protoc --descriptor_set_out` writes it.
    FileDescriptorSet {
        /// The files, each after the files it imports.
        1 file: Vec<FileDescriptorProto>,
    }
}

message! {
    /// One `.proto` file.
    FileDescriptorProto {
        /// Path as imported, e.g. `google/protobuf/any.proto`.
        1 name: Option<String>,
        /// The package, e.g. `foo.bar`.
        2 package: Option<String>,
        /// Imported files, in source order.
        3 dependency: Vec<String>,
        /// Top-level messages.
        4 message_type: Vec<DescriptorProto>,
        /// Top-level enums.
        5 enum_type: Vec<EnumDescriptorProto>,
        /// Services.
        6 service: Vec<ServiceDescriptorProto>,
        /// Top-level extensions.
        7 extension: Vec<FieldDescriptorProto>,
        /// File options.
        8 options: Option<FileOptions>,
        /// Indexes into `dependency` of the `import public` files.
        10 public_dependency: Vec<i32>,
        /// Indexes into `dependency` of the `import weak` files.
        11 weak_dependency: Vec<i32>,
        /// `"proto3"` or `"editions"`; unset for proto2.
        12 syntax: Option<String>,
        /// The edition, for `syntax = "editions"`.
        14 edition: Option<i32>,
        /// `import option` files (edition 2024).
        15 option_dependency: Vec<String>,
    }
}

message! {
    /// A message type.
    DescriptorProto {
        /// Short name.
        1 name: Option<String>,
        /// Fields, in source order.
        2 field: Vec<FieldDescriptorProto>,
        /// Nested messages (map entries and groups among them).
        3 nested_type: Vec<DescriptorProto>,
        /// Nested enums.
        4 enum_type: Vec<EnumDescriptorProto>,
        /// `extensions` ranges.
        5 extension_range: Vec<ExtensionRange>,
        /// Extensions declared in this message's scope.
        6 extension: Vec<FieldDescriptorProto>,
        /// Message options.
        7 options: Option<MessageOptions>,
        /// Oneofs (synthetic ones for proto3 `optional` last).
        8 oneof_decl: Vec<OneofDescriptorProto>,
        /// Reserved number ranges (end exclusive).
        9 reserved_range: Vec<ReservedRange>,
        /// Reserved field names.
        10 reserved_name: Vec<String>,
        /// `export` / `local` (edition 2024).
        11 visibility: Option<i32>,
    }
}

message! {
    /// `DescriptorProto.ExtensionRange`: `start` inclusive, `end` exclusive.
    ExtensionRange {
        /// First number.
        1 start: Option<i32>,
        /// One past the last number.
        2 end: Option<i32>,
        /// Range options.
        3 options: Option<ExtensionRangeOptions>,
    }
}

message! {
    /// `DescriptorProto.ReservedRange`: `start` inclusive, `end` exclusive.
    ReservedRange {
        /// First number.
        1 start: Option<i32>,
        /// One past the last number.
        2 end: Option<i32>,
    }
}

message! {
    /// A field or an extension.
    FieldDescriptorProto {
        /// Short name.
        1 name: Option<String>,
        /// For extensions: the extended message, fully qualified.
        2 extendee: Option<String>,
        /// Field number.
        3 number: Option<i32>,
        /// See [`label`].
        4 label: Option<i32>,
        /// See [`field_type`].
        5 r#type: Option<i32>,
        /// For messages, enums and groups: the type, fully qualified.
        6 type_name: Option<String>,
        /// The default, as text (bytes C-escaped; a string's as its bytes,
        /// which protoc does not require to be UTF-8).
        7 default_value: Option<Vec<u8>>,
        /// Field options.
        8 options: Option<FieldOptions>,
        /// Index of the containing oneof.
        9 oneof_index: Option<i32>,
        /// The JSON name.
        10 json_name: Option<String>,
        /// A proto3 `optional` field (in a synthetic oneof).
        17 proto3_optional: Option<bool>,
    }
}

message! {
    /// A oneof.
    OneofDescriptorProto {
        /// Name.
        1 name: Option<String>,
        /// Oneof options.
        2 options: Option<OneofOptions>,
    }
}

message! {
    /// An enum type.
    EnumDescriptorProto {
        /// Short name.
        1 name: Option<String>,
        /// Values, in source order.
        2 value: Vec<EnumValueDescriptorProto>,
        /// Enum options.
        3 options: Option<EnumOptions>,
        /// Reserved number ranges (both ends inclusive).
        4 reserved_range: Vec<EnumReservedRange>,
        /// Reserved value names.
        5 reserved_name: Vec<String>,
        /// `export` / `local` (edition 2024).
        6 visibility: Option<i32>,
    }
}

message! {
    /// `EnumDescriptorProto.EnumReservedRange`: both ends inclusive.
    EnumReservedRange {
        /// First number.
        1 start: Option<i32>,
        /// Last number.
        2 end: Option<i32>,
    }
}

message! {
    /// An enum value.
    EnumValueDescriptorProto {
        /// Name.
        1 name: Option<String>,
        /// Number.
        2 number: Option<i32>,
        /// Value options.
        3 options: Option<EnumValueOptions>,
    }
}

message! {
    /// A service.
    ServiceDescriptorProto {
        /// Name.
        1 name: Option<String>,
        /// Methods.
        2 method: Vec<MethodDescriptorProto>,
        /// Service options.
        3 options: Option<ServiceOptions>,
    }
}

message! {
    /// An rpc method.
    MethodDescriptorProto {
        /// Name.
        1 name: Option<String>,
        /// Request type, fully qualified.
        2 input_type: Option<String>,
        /// Response type, fully qualified.
        3 output_type: Option<String>,
        /// Method options.
        4 options: Option<MethodOptions>,
        /// `stream` request.
        5 client_streaming: Option<bool>,
        /// `stream` response.
        6 server_streaming: Option<bool>,
    }
}

message! {
    /// File options.
    FileOptions {
        /// `java_package`.
        1 java_package: Option<String>,
        /// `java_outer_classname`.
        8 java_outer_classname: Option<String>,
        /// `optimize_for` (SPEED = 1, CODE_SIZE = 2, LITE_RUNTIME = 3).
        9 optimize_for: Option<i32>,
        /// `java_multiple_files`.
        10 java_multiple_files: Option<bool>,
        /// `go_package`.
        11 go_package: Option<String>,
        /// `cc_generic_services`.
        16 cc_generic_services: Option<bool>,
        /// `java_generic_services`.
        17 java_generic_services: Option<bool>,
        /// `py_generic_services`.
        18 py_generic_services: Option<bool>,
        /// `java_generate_equals_and_hash`.
        20 java_generate_equals_and_hash: Option<bool>,
        /// `deprecated`.
        23 deprecated: Option<bool>,
        /// `java_string_check_utf8`.
        27 java_string_check_utf8: Option<bool>,
        /// `cc_enable_arenas`.
        31 cc_enable_arenas: Option<bool>,
        /// `objc_class_prefix`.
        36 objc_class_prefix: Option<String>,
        /// `csharp_namespace`.
        37 csharp_namespace: Option<String>,
        /// `swift_prefix`.
        39 swift_prefix: Option<String>,
        /// `php_class_prefix`.
        40 php_class_prefix: Option<String>,
        /// `php_namespace`.
        41 php_namespace: Option<String>,
        /// `php_metadata_namespace`.
        44 php_metadata_namespace: Option<String>,
        /// `ruby_package`.
        45 ruby_package: Option<String>,
        /// Editions features.
        50 features: Option<FeatureSet>,
    }
}

message! {
    /// Message options.
    MessageOptions {
        /// `message_set_wire_format`.
        1 message_set_wire_format: Option<bool>,
        /// `no_standard_descriptor_accessor`.
        2 no_standard_descriptor_accessor: Option<bool>,
        /// `deprecated`.
        3 deprecated: Option<bool>,
        /// Set on synthesized map entry types.
        7 map_entry: Option<bool>,
        /// `deprecated_legacy_json_field_conflicts`.
        11 deprecated_legacy_json_field_conflicts: Option<bool>,
        /// Editions features.
        12 features: Option<FeatureSet>,
    }
}

message! {
    /// Field options.
    FieldOptions {
        /// `ctype` (STRING = 0, CORD = 1, STRING_PIECE = 2).
        1 ctype: Option<i32>,
        /// `packed`.
        2 packed: Option<bool>,
        /// `deprecated`.
        3 deprecated: Option<bool>,
        /// `lazy`.
        5 lazy: Option<bool>,
        /// `jstype` (JS_NORMAL = 0, JS_STRING = 1, JS_NUMBER = 2).
        6 jstype: Option<i32>,
        /// `weak`.
        10 weak: Option<bool>,
        /// `unverified_lazy`.
        15 unverified_lazy: Option<bool>,
        /// `debug_redact`.
        16 debug_redact: Option<bool>,
        /// `retention`.
        17 retention: Option<i32>,
        /// `targets`.
        19 targets: Vec<i32>,
        /// `edition_defaults`.
        20 edition_defaults: Vec<EditionDefault>,
        /// Editions features.
        21 features: Option<FeatureSet>,
        /// `feature_support`.
        22 feature_support: Option<FeatureSupport>,
    }
}

message! {
    /// `FieldOptions.EditionDefault`.
    EditionDefault {
        /// The default as text-format.
        2 value: Option<String>,
        /// From this edition on.
        3 edition: Option<i32>,
    }
}

message! {
    /// `FieldOptions.FeatureSupport`.
    FeatureSupport {
        /// `edition_introduced`.
        1 edition_introduced: Option<i32>,
        /// `edition_deprecated`.
        2 edition_deprecated: Option<i32>,
        /// `deprecation_warning`.
        3 deprecation_warning: Option<String>,
        /// `edition_removed`.
        4 edition_removed: Option<i32>,
        /// `removal_error`.
        5 removal_error: Option<String>,
    }
}

message! {
    /// Oneof options.
    OneofOptions {
        /// Editions features.
        1 features: Option<FeatureSet>,
    }
}

message! {
    /// Enum options.
    EnumOptions {
        /// `allow_alias`.
        2 allow_alias: Option<bool>,
        /// `deprecated`.
        3 deprecated: Option<bool>,
        /// `deprecated_legacy_json_field_conflicts`.
        6 deprecated_legacy_json_field_conflicts: Option<bool>,
        /// Editions features.
        7 features: Option<FeatureSet>,
    }
}

message! {
    /// Enum value options.
    EnumValueOptions {
        /// `deprecated`.
        1 deprecated: Option<bool>,
        /// Editions features.
        2 features: Option<FeatureSet>,
        /// `debug_redact`.
        3 debug_redact: Option<bool>,
        /// `feature_support`.
        4 feature_support: Option<FeatureSupport>,
    }
}

message! {
    /// Service options.
    ServiceOptions {
        /// `deprecated`.
        33 deprecated: Option<bool>,
        /// Editions features.
        34 features: Option<FeatureSet>,
    }
}

message! {
    /// Method options.
    MethodOptions {
        /// `deprecated`.
        33 deprecated: Option<bool>,
        /// `idempotency_level`.
        34 idempotency_level: Option<i32>,
        /// Editions features.
        35 features: Option<FeatureSet>,
    }
}

message! {
    /// Extension range options.
    ExtensionRangeOptions {
        /// `declaration`.
        2 declaration: Vec<Declaration>,
        /// `verification`.
        3 verification: Option<i32>,
        /// Editions features.
        50 features: Option<FeatureSet>,
    }
}

message! {
    /// `ExtensionRangeOptions.Declaration`.
    Declaration {
        /// `number`.
        1 number: Option<i32>,
        /// `full_name`.
        2 full_name: Option<String>,
        /// `type`.
        3 r#type: Option<String>,
        /// `reserved`.
        5 reserved: Option<bool>,
        /// `repeated`.
        6 repeated: Option<bool>,
    }
}

message! {
    /// Editions features (`features.*` options). Language-specific features
    /// (`features.(pb.cpp).*`) are extensions and stay in `unknown`.
    FeatureSet {
        /// `field_presence` (EXPLICIT = 1, IMPLICIT = 2, LEGACY_REQUIRED = 3).
        1 field_presence: Option<i32>,
        /// `enum_type` (OPEN = 1, CLOSED = 2).
        2 enum_type: Option<i32>,
        /// `repeated_field_encoding` (PACKED = 1, EXPANDED = 2).
        3 repeated_field_encoding: Option<i32>,
        /// `utf8_validation` (VERIFY = 2, NONE = 3).
        4 utf8_validation: Option<i32>,
        /// `message_encoding` (LENGTH_PREFIXED = 1, DELIMITED = 2).
        5 message_encoding: Option<i32>,
        /// `json_format` (ALLOW = 1, LEGACY_BEST_EFFORT = 2).
        6 json_format: Option<i32>,
        /// `enforce_naming_style`.
        7 enforce_naming_style: Option<i32>,
        /// `default_symbol_visibility`.
        8 default_symbol_visibility: Option<i32>,
    }
}
