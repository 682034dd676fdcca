# The verbs everyone uses. Each installs what it needs into .venv first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.amber-deps

.PHONY: setup build bench bench-full test test-rust test-python test-pythons lint fmt fuzz clean conformance

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): | $(PY)
	$(PY) -m pip install --quiet "maturin>=1.7,<2"
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

## lint: formatting, clippy, ruff, mypy and stubtest, as CI runs them.
lint: setup
	cargo fmt --all --check
	cd crates/fuzz && cargo fmt --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
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
	rm -rf $(VENV) target

## test-pythons: build and run the Python suite on every CPython 3.10-3.13 found (pyenv or PATH).
PYTHONS ?= $(shell for v in 3.10 3.11 3.12 3.13; do \
	  p=$$(ls -d $$HOME/.pyenv/versions/$$v.*/bin/python$$v 2>/dev/null | tail -n 1); \
	  [ -n "$$p" ] || p=$$(command -v python$$v); [ -n "$$p" ] && echo $$p; done)
test-pythons:
	@for py in $(PYTHONS); do \
	  v=$$($$py -c 'import sys; print("%d.%d" % sys.version_info[:2])'); \
	  echo "== CPython $$v ($$py)"; \
	  [ -x .venv-$$v/bin/python ] || $$py -m venv .venv-$$v; \
	  .venv-$$v/bin/python -m pip install --quiet --upgrade pip "maturin>=1.7,<2"; \
	  VIRTUAL_ENV=$(CURDIR)/.venv-$$v CARGO_TARGET_DIR=target/py$$v \
	    .venv-$$v/bin/maturin develop --release --quiet --extras dev,bench || exit 1; \
	  .venv-$$v/bin/python -m pytest -q -p no:cacheprovider || exit 1; \
	done

## fuzz: each cargo-fuzz target for FUZZ_SECONDS (needs `cargo install cargo-fuzz`; see crates/fuzz/README.md).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= decode decode_body roundtrip varint archive copy_parse proto_compile proto_descriptor proto_wire proto_text
fuzz:
	command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
	cd crates/fuzz && for t in $(FUZZ_TARGETS); do \
	  mkdir -p corpus/$$t && cp -n seeds/$$t/* corpus/$$t/ 2>/dev/null; \
	  RUSTC_BOOTSTRAP=1 cargo fuzz run --fuzz-dir . $$t -- -max_total_time=$(FUZZ_SECONDS) -timeout=10 || exit 1; \
	done
