# The verbs everyone uses. Each installs what it needs into .venv first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.amber-deps

.PHONY: setup build bench bench-full test test-rust test-python test-pythons check-freethreaded wheel lint fmt fuzz clean conformance

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): | $(PY)
	$(PY) -m pip install --quiet "maturin>=1.16,<2"
	touch $(STAMP)

## setup: create .venv, build amber (release) and install the dev and bench extras.
setup: build

## build: compile the Rust extension into .venv with the extras' dependencies.
build: $(STAMP)
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(VENV)/bin/maturin develop --release --quiet --extras dev,bench

## bench: amber's main job, quick size: every study side by side.
bench: setup
	$(VENV)/bin/amber bench --quick

## bench-full: every study at full size (takes longer).
bench-full: setup
	$(VENV)/bin/amber bench

## test: the whole suite: Rust unit tests, then pytest.
test: setup test-rust test-python

test-rust:
	cargo test --workspace --quiet

test-python:
	$(PY) -m pytest -q

## lint: formatting, clippy (also for CPython 3.10's layouts and the portable build), ruff, mypy
## and stubtest, as CI runs them.
lint: setup
	cargo fmt --all --check
	cd crates/fuzz && cargo fmt --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	# The edge's other layouts: CPython 3.10 (no dict table read in place) and the portable build.
	PYO3_CONFIG_FILE=$(CURDIR)/scripts/pythons/pyo3-3.10.cfg CARGO_TARGET_DIR=target/check3.10 \
	  cargo clippy -p amber-py --quiet -- -D warnings
	AMBER_PORTABLE=1 CARGO_TARGET_DIR=target/check-portable cargo clippy -p amber-py --quiet -- -D warnings
	$(VENV)/bin/ruff check python tests benches scripts
	$(VENV)/bin/ruff format --check python tests benches scripts
	$(VENV)/bin/mypy
	$(PY) -m mypy.stubtest amber._native --allowlist tests/typing/stubtest-allowlist.txt

## conformance: Google's protobuf conformance suite against amber.proto (binary, JSON and text format).
## Builds the C++ runner once into the cache; see docs/proto-conformance.md.
CONFORMANCE := scripts/conformance
conformance: setup
	@rm -rf target/conformance && mkdir -p target/conformance
	runner=$$(bash $(CONFORMANCE)/build-runner.sh) && \
	  $$runner --maximum_edition 2023 \
	    --failure_list $(CONFORMANCE)/failure_list_python.txt \
	    --text_format_failure_list $(CONFORMANCE)/text_format_failure_list_python.txt \
	    --output_dir target/conformance \
	    $(abspath $(PY)) $(CURDIR)/$(CONFORMANCE)/testee.py

fmt:
	cargo fmt --all
	$(VENV)/bin/ruff format python tests benches scripts
	$(VENV)/bin/ruff check --fix python tests benches scripts

clean:
	rm -rf $(VENV) .venv-* target dist

## test-pythons: build and run the whole Python suite on every CPython in PY_VERSIONS: 3.10-3.13
## from pyenv or PATH, 3.14 and 3.15 from a Debian unstable root that scripts/pythons/sid-root.sh
## builds into $(AMBER_CACHE) when it is missing (needs root; about a minute).
PY_VERSIONS ?= 3.10 3.11 3.12 3.13 3.14 3.15
ROOT_VERSIONS := 3.14 3.15
export AMBER_CACHE ?= $(HOME)/.cache/amber
test-pythons:
	@for v in $(PY_VERSIONS); do \
	  case " $(ROOT_VERSIONS) " in \
	    *" $$v "*) bash scripts/pythons/in-root.sh bash scripts/pythons/test-one.sh python$$v || exit 1;; \
	    *) p=$$(ls -d $$HOME/.pyenv/versions/$$v.*/bin/python$$v 2>/dev/null | tail -n 1); \
	       [ -n "$$p" ] || p=$$(command -v python$$v) || { echo "CPython $$v not found (pyenv or PATH)"; exit 1; }; \
	       bash scripts/pythons/test-one.sh $$p || exit 1;; \
	  esac; \
	done

## check-freethreaded: compile the extension for free-threaded CPython 3.14t (a check only:
## amber keeps the GIL on such interpreters; see docs/compatibility.md).
check-freethreaded:
	PYO3_CONFIG_FILE=$(CURDIR)/scripts/pythons/pyo3-3.14t.cfg CARGO_TARGET_DIR=target/check3.14t \
	  cargo clippy -p amber-py --quiet -- -D warnings

## wheel: release wheels for manylinux_2_28 (built with zig) and an sdist into dist/, checked with
## auditwheel and twine, then installed into a fresh environment without Rust for a smoke test.
## WHEEL_PYTHONS: the interpreters to build for (default: the one in .venv).
WHEEL_PYTHONS ?= $(abspath $(PY))
wheel: $(STAMP)
	$(PY) -m pip install --quiet "ziglang>=0.13,<0.16" "auditwheel>=6.1" "twine>=6.1"
	rm -rf dist
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH CARGO_TARGET_DIR=target/wheel \
	  $(VENV)/bin/maturin build --release --quiet --zig \
	  --compatibility manylinux_2_28 \
	  $(foreach p,$(WHEEL_PYTHONS),-i $(p)) --out dist
	$(VENV)/bin/maturin sdist --out dist
	for w in dist/*.whl; do $(VENV)/bin/auditwheel show $$w; done
	$(VENV)/bin/twine check --strict dist/*
	bash scripts/wheel-smoke.sh $(PYTHON) dist

## fuzz: each cargo-fuzz target for FUZZ_SECONDS (needs `cargo install cargo-fuzz`; see crates/fuzz/README.md).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= decode decode_body roundtrip varint archive copy_parse proto_compile proto_descriptor proto_wire proto_text
fuzz:
	command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
	cd crates/fuzz && for t in $(FUZZ_TARGETS); do \
	  mkdir -p corpus/$$t && cp -n seeds/$$t/* corpus/$$t/ 2>/dev/null; \
	  RUSTC_BOOTSTRAP=1 cargo fuzz run --fuzz-dir . $$t -- -max_total_time=$(FUZZ_SECONDS) -timeout=10 || exit 1; \
	done
