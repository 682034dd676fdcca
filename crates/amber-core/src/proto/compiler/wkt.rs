//! The `.proto` files protoc's include directory ships (protobuf v35.1):
//! Google's well-known types, the language feature files
//! (`cpp_features`, `java_features`, `go_features`) and
//! `compiler/plugin.proto`, bundled with their license headers so that
//! `import "google/protobuf/timestamp.proto";` resolves without any
//! include path.

/// Import path and text of each bundled file.
pub const FILES: &[(&str, &str)] = &[
    (
        "google/protobuf/compiler/plugin.proto",
        include_str!("wkt/google/protobuf/compiler/plugin.proto"),
    ),
    (
        "google/protobuf/cpp_features.proto",
        include_str!("wkt/google/protobuf/cpp_features.proto"),
    ),
    (
        "google/protobuf/go_features.proto",
        include_str!("wkt/google/protobuf/go_features.proto"),
    ),
    (
        "google/protobuf/java_features.proto",
        include_str!("wkt/google/protobuf/java_features.proto"),
    ),
    (
        "google/protobuf/any.proto",
        include_str!("wkt/google/protobuf/any.proto"),
    ),
    (
        "google/protobuf/api.proto",
        include_str!("wkt/google/protobuf/api.proto"),
    ),
    (
        "google/protobuf/descriptor.proto",
        include_str!("wkt/google/protobuf/descriptor.proto"),
    ),
    (
        "google/protobuf/duration.proto",
        include_str!("wkt/google/protobuf/duration.proto"),
    ),
    (
        "google/protobuf/empty.proto",
        include_str!("wkt/google/protobuf/empty.proto"),
    ),
    (
        "google/protobuf/field_mask.proto",
        include_str!("wkt/google/protobuf/field_mask.proto"),
    ),
    (
        "google/protobuf/source_context.proto",
        include_str!("wkt/google/protobuf/source_context.proto"),
    ),
    (
        "google/protobuf/struct.proto",
        include_str!("wkt/google/protobuf/struct.proto"),
    ),
    (
        "google/protobuf/timestamp.proto",
        include_str!("wkt/google/protobuf/timestamp.proto"),
    ),
    (
        "google/protobuf/type.proto",
        include_str!("wkt/google/protobuf/type.proto"),
    ),
    (
        "google/protobuf/wrappers.proto",
        include_str!("wkt/google/protobuf/wrappers.proto"),
    ),
];

/// The bundled text of `path`, if it is one of the well-known types.
pub fn source(path: &str) -> Option<&'static str> {
    FILES.iter().find(|(p, _)| *p == path).map(|(_, s)| *s)
}
