# The two set-up commands: `make demo` and `make test`. Everything installs into .venv.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
export VIRTUAL_ENV := $(abspath $(VENV))

.PHONY: demo test test-rust test-python bench build venv clean chromium

$(VENV)/.deps: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "maturin>=1.5,<2" "numpy>=1.24" "pandas>=2.0" "pyarrow>=14" "matplotlib>=3.7" "typer>=0.12" "rich>=13" "pytest>=7" "hypothesis>=6"
	touch $@

venv: $(VENV)/.deps

build: venv
	$(VENV)/bin/maturin develop --release -q

demo: build
	$(PY) -m dcnlab demo

# The test profile (Cargo.toml: optimised, with debug assertions and overflow checks), so that every index
# into an IdVec is checked (crates/sim/src/idvec.rs) while the tests run.
test-rust:
	cargo test -p dcnlab-sim

# The report test renders the HTML page in headless Chromium (Debian's package).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

# The optional extra dcnlab[ray], for the Ray backend's tests (python/tests/test_ray.py).
$(VENV)/.ray: $(VENV)/.deps
	$(PY) -m pip install -q "ray>=2.40"
	touch $@

# The optional extra dcnlab[rl], for the Gymnasium environment's tests (python/tests/test_rl.py).
$(VENV)/.rl: $(VENV)/.deps
	$(PY) -m pip install -q "gymnasium>=0.29"
	touch $@

test-python: build chromium $(VENV)/.ray $(VENV)/.rl
	$(PY) -m pytest -q python/tests

test: test-rust test-python

# make bench: this tree side by side with a baseline commit, built once under bench-results/ (bench/README.md).
BASE ?= 0fb7fca
RUNS ?= 5
bench:
	cargo build --release --bins
	base=$$(bench/build_base.sh $(BASE)) && \
		./target/release/dcnlab-bench --against "$$base" --base-name $(BASE) --runs $(RUNS) --out bench-results/ab.json

clean:
	rm -rf $(VENV) target bench-results results
