//! Parse and resolve each test `.proto` file and compare the result with
//! protoc's descriptor set (tests/data/proto/golden, made by regen.sh):
//! structural equality of the decoded sets, and byte equality of the
//! encodings.

use std::path::PathBuf;

use amber_core::proto::{compile, DirLoader, FileDescriptorSet, Message};

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/proto")
}

/// (include dir under data/, root file, golden name)
const CASES: &[(&str, &str, &str)] = &[
    ("", "proto2_all.proto", "proto2_all"),
    ("", "proto3_all.proto", "proto3_all"),
    ("", "editions_2023.proto", "editions_2023"),
    ("", "editions_2024.proto", "editions_2024"),
    ("", "base.proto", "base"),
    ("", "reexport.proto", "reexport"),
    ("", "importer.proto", "importer"),
    ("", "services.proto", "services"),
    ("", "custom_options.proto", "custom_options"),
    ("", "wkt_all.proto", "wkt_all"),
    (
        "conformance",
        "test_messages_proto2.proto",
        "test_messages_proto2",
    ),
    (
        "conformance",
        "test_messages_proto3.proto",
        "test_messages_proto3",
    ),
    (
        "conformance",
        "test_messages_edition2023.proto",
        "test_messages_edition2023",
    ),
    (
        "conformance",
        "google/protobuf/unittest_import.proto",
        "unittest_import",
    ),
    (
        "conformance",
        "google/protobuf/unittest_custom_options.proto",
        "unittest_custom_options",
    ),
    (
        "conformance",
        "google/protobuf/unittest_proto3_optional.proto",
        "unittest_proto3_optional",
    ),
    (
        "conformance",
        "google/protobuf/unittest_proto3.proto",
        "unittest_proto3",
    ),
    (
        "conformance",
        "google/protobuf/unittest_delimited.proto",
        "unittest_delimited",
    ),
];

fn golden(name: &str) -> (Vec<u8>, FileDescriptorSet) {
    let bytes = std::fs::read(data().join("golden").join(format!("{name}.pb"))).unwrap();
    let set = FileDescriptorSet::decode(&bytes).unwrap();
    (bytes, set)
}

fn ours(dir: &str, root: &str) -> FileDescriptorSet {
    let mut loader = DirLoader {
        include: vec![data().join(dir)],
    };
    compile(&[root], &mut loader, true).unwrap_or_else(|e| panic!("{e}"))
}

/// The first differing line of two debug renderings, with context.
fn first_diff(a: &str, b: &str) -> String {
    let al: Vec<&str> = a.lines().collect();
    let bl: Vec<&str> = b.lines().collect();
    for i in 0..al.len().max(bl.len()) {
        if al.get(i) != bl.get(i) {
            let lo = i.saturating_sub(12);
            return format!(
                "line {i}\n--- ours\n{}\n--- protoc\n{}",
                al[lo..(i + 4).min(al.len())].join("\n"),
                bl[lo..(i + 4).min(bl.len())].join("\n")
            );
        }
    }
    String::new()
}

/// CASES plus every `cases/*.proto` but the `dep_*` files they import.
fn all_cases() -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = CASES
        .iter()
        .map(|(d, r, n)| (d.to_string(), r.to_string(), n.to_string()))
        .collect();
    let mut small: Vec<String> = std::fs::read_dir(data().join("cases"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".proto") && !n.starts_with("dep_"))
        .collect();
    small.sort();
    for n in small {
        let stem = n.trim_end_matches(".proto").to_string();
        out.push(("cases".into(), n, format!("case_{stem}")));
    }
    out
}

#[test]
fn every_file_matches_protoc() {
    let mut failures = Vec::new();
    let cases = all_cases();
    assert!(cases.len() > 30);
    for (dir, root, name) in &cases {
        let (gbytes, gset) = golden(name);
        let set = ours(dir, root);
        if let Ok(d) = std::env::var("AMBER_PROTO_DUMP") {
            std::fs::write(format!("{d}/{name}.pb"), set.encode()).unwrap();
        }
        if set != gset {
            let a = format!("{set:#?}");
            let b = format!("{gset:#?}");
            failures.push(format!("{root}: {}", first_diff(&a, &b)));
            continue;
        }
        if set.encode() != gbytes {
            failures.push(format!("{root}: equal structs but different bytes"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn golden_sets_round_trip() {
    for (_, _, name) in all_cases() {
        let (bytes, set) = golden(&name);
        assert_eq!(set.encode(), bytes, "{name}");
        assert_eq!(FileDescriptorSet::decode(&set.encode()).unwrap(), set);
    }
}

#[test]
fn only_roots_without_include_imports() {
    let mut loader = DirLoader {
        include: vec![data()],
    };
    let set = compile(&["importer.proto"], &mut loader, false).unwrap();
    assert_eq!(set.file.len(), 1);
    let (_, g) = golden("importer");
    assert_eq!(Some(&set.file[0]), g.file.last());
}

#[test]
fn files_from_memory() {
    let mut loader = |name: &str| -> Option<Vec<u8>> {
        match name {
            "a.proto" => {
                Some(b"syntax = \"proto3\"; import \"b.proto\"; message A { B b = 1; }".to_vec())
            }
            "b.proto" => Some(b"syntax = \"proto3\"; message B {}".to_vec()),
            _ => None,
        }
    };
    let set = compile(&["a.proto"], &mut loader, true).unwrap();
    assert_eq!(set.file.len(), 2);
    assert_eq!(
        set.file[1].message_type[0].field[0].type_name.as_deref(),
        Some(".B")
    );
}

/// Developer aid, not part of the suite: compile every `.proto` in the
/// folder `$AMBER_PROTO_DIFF` and write `<name>.ours.pb` or `<name>.ours.err`
/// next to it, for comparison with protoc.
#[test]
#[ignore]
fn write_outputs_for_comparison() {
    let Ok(dir) = std::env::var("AMBER_PROTO_DIFF") else {
        return;
    };
    let dir = PathBuf::from(dir);
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("proto") {
            continue;
        }
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        let stem = name.trim_end_matches(".proto");
        let mut loader = DirLoader {
            include: vec![dir.clone()],
        };
        match compile(&[&name], &mut loader, true) {
            Ok(set) => std::fs::write(dir.join(format!("{stem}.ours.pb")), set.encode()).unwrap(),
            Err(e) => std::fs::write(dir.join(format!("{stem}.ours.err")), e.to_string()).unwrap(),
        }
    }
}

/// Developer aid, not part of the suite: compile each file named in
/// `$AMBER_PROTO_LIST` (one a line, relative to `$AMBER_PROTO_ROOT`) and
/// write `<i>.ours.pb` or `<i>.ours.err` into `$AMBER_PROTO_OUT`.
#[test]
#[ignore]
fn write_list_outputs() {
    let (Ok(root), Ok(list), Ok(out)) = (
        std::env::var("AMBER_PROTO_ROOT"),
        std::env::var("AMBER_PROTO_LIST"),
        std::env::var("AMBER_PROTO_OUT"),
    ) else {
        return;
    };
    let out = PathBuf::from(out);
    for (i, name) in std::fs::read_to_string(list).unwrap().lines().enumerate() {
        let mut loader = DirLoader {
            include: vec![PathBuf::from(&root)],
        };
        match compile(&[name], &mut loader, true) {
            Ok(set) => std::fs::write(out.join(format!("{i}.ours.pb")), set.encode()).unwrap(),
            Err(e) => std::fs::write(out.join(format!("{i}.ours.err")), e.to_string()).unwrap(),
        }
    }
}

#[test]
fn source_code_info_is_kept_as_unknown_bytes() {
    let (bytes, set) = golden("source_info_proto2_all");
    let file = set.file.last().unwrap();
    assert!(
        !file.unknown.is_empty(),
        "SourceCodeInfo (field 9) lands in unknown"
    );
    assert_eq!(set.encode(), bytes);
    // Without it the set equals what amber compiles.
    let mut stripped = set.clone();
    for f in &mut stripped.file {
        f.unknown.clear();
    }
    assert_eq!(stripped, ours("", "proto2_all.proto"));
}
