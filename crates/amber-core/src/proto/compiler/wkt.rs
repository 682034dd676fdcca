//! Google's well-known-type `.proto` files, bundled (with their license
//! headers) so that `import "google/protobuf/timestamp.proto";` resolves
//! without any include path.

/// Import path and text of each bundled file.
pub const FILES: &[(&str, &str)] = &[
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
