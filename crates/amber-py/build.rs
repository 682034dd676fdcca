use pyo3_build_config::{BuildFlag, PythonImplementation};

/// Which CPython layouts the edge may read in place, decided once here from
/// the interpreter being built for (`ffi/` says what each one reads):
/// - `amber_dict_table`: a dict's entry table (`struct _dictkeysobject`,
///   the same from CPython 3.11 to 3.15 on builds with the GIL);
/// - `amber_dict_version_tag`: the dict's version tag (PEP 509), which
///   CPython 3.14 removed.
///
/// A version this file does not know gets the portable paths, and so does
/// every build made with `AMBER_PORTABLE=1` in the environment (`amber_portable`:
/// no CPython layout is read in place, not even the `str` and `int` ones
/// checked at import), which measures what the layouts are worth and tests
/// the paths other interpreters take.
fn main() {
    // Exposes cfgs such as Py_3_12 for version-specific object layouts.
    pyo3_build_config::use_pyo3_cfgs();
    println!("cargo::rustc-check-cfg=cfg(amber_dict_table)");
    println!("cargo::rustc-check-cfg=cfg(amber_dict_version_tag)");
    println!("cargo::rustc-check-cfg=cfg(amber_portable)");
    println!("cargo::rerun-if-env-changed=AMBER_PORTABLE");
    if std::env::var("AMBER_PORTABLE").is_ok_and(|v| !v.is_empty() && v != "0") {
        println!("cargo::rustc-cfg=amber_portable");
        return;
    }
    let config = pyo3_build_config::get();
    let version = (config.version().major, config.version().minor);
    let cpython_with_gil = config.implementation() == PythonImplementation::CPython
        && !config.build_flags().0.contains(&BuildFlag::Py_GIL_DISABLED);
    if cpython_with_gil && ((3, 11)..=(3, 15)).contains(&version) {
        println!("cargo::rustc-cfg=amber_dict_table");
        if version <= (3, 13) {
            println!("cargo::rustc-cfg=amber_dict_version_tag");
        }
    }
}
