fn main() {
    // Exposes cfgs such as Py_3_12 for version-specific object layouts.
    pyo3_build_config::use_pyo3_cfgs();
}
