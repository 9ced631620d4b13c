# Local development. `make run` and `make test` work on a fresh clone: they create .venv, install
# what they need (again only when a requirements file changed), and use the embedded PostgreSQL
# and Redis under .data/ unless DATABASE_URL / REDIS_URL are set. `./dev CMD` runs any command
# with the same development environment (see docs/installation.md).

PYTHON_BOOT := $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
# Two stamps: running needs requirements.txt only; the test tools (requirements-dev.txt: pytest,
# ruff, playwright, scikit-learn, statsmodels...) are installed by the targets that use them.
STAMP := $(VENV)/.requirements-installed
DEV_STAMP := $(VENV)/.requirements-dev-installed

# The installer. uv (from PyPI, pinned, into the venv) installs the runtime requirements into a
# fresh venv in 1-2 s where pip takes ~26 s on this 2-core machine (pip downloads and unpacks
# every wheel again for each new venv; uv hard-links them from its cache), and it is a plain
# wheel on PyPI, so it comes the same way as every other dependency (~2 s to install). It
# installs the same pinned files; it reads UV_INDEX_URL / UV_DEFAULT_INDEX, not pip's
# configuration. Both compile the packages' bytecode as they install (uv only when asked:
# --compile-bytecode), so that no process pays for compiling Django and its neighbours from
# source at every start where PYTHONDONTWRITEBYTECODE is set (it is on this machine: without
# the .pyc files a gunicorn worker took over 30 s to boot on a busy machine and was killed). If uv cannot be had (no wheel for the platform, no index), or with
# INSTALLER=pip, pip installs instead.
UV_VERSION := 0.13.9
INSTALLER ?= uv

.PHONY: run test test-collation lint docs stack-up stack-down stack-status perf venv venv-dev local-model shell

venv: $(STAMP)

venv-dev: $(DEV_STAMP)

$(PY):
	$(PYTHON_BOOT) -m venv $(VENV)
	@if [ "$(INSTALLER)" = uv ]; then \
	  $(PY) -m pip install --disable-pip-version-check --no-input -q "uv==$(UV_VERSION)" \
	    || echo "uv could not be installed; pip installs the requirements instead" >&2; \
	fi

define install
	@if [ "$(INSTALLER)" = uv ] && [ -x $(VENV)/bin/uv ]; then \
	  echo "$(VENV)/bin/uv pip install --compile-bytecode -r $(1)"; \
	  $(VENV)/bin/uv pip install --python $(PY) -q --compile-bytecode -r $(1); \
	else \
	  echo "$(PY) -m pip install -r $(1)"; \
	  $(PY) -m pip install --disable-pip-version-check --no-input -q -r $(1); \
	fi
endef

# Reinstall only when a requirements file is newer than the last successful install.
$(STAMP): requirements.txt | $(PY)
	$(call install,requirements.txt)
	touch $(STAMP)

$(DEV_STAMP): requirements.txt requirements-dev.txt $(STAMP)
	$(call install,requirements-dev.txt)
	touch $(DEV_STAMP)

# The embedded models' server and weights (Gemma 3 270M and SmolLM2 135M; built once per machine,
# ~5 min; then seconds). `make run` does not wait for it: serve_local_model installs it in the
# background.
local-model: $(STAMP)
	$(PY) -m config.localmodel install

run: $(STAMP)
	$(PY) -m config.rundev

# A shell with the development environment (DEBUG=1, the development SECRET_KEY, the embedded
# stack's URLs when unset, the venv first on PATH): what `./dev` gives one command.
shell: $(STAMP)
	./dev $${SHELL:-/bin/bash}

# The documentation site: docs/ (the README as its home page) into site/, warnings as errors.
docs: $(DEV_STAMP)
	$(VENV)/bin/mkdocs build --strict

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	DEBUG=$${DEBUG:-1} $(VENV)/bin/mypy

# The settings refuse to load with DEBUG off and no SECRET_KEY; tests run with DEBUG=1 unless
# the caller says otherwise (pytest-django still runs each test with settings.DEBUG False).
# --durations: the slowest tests are named at the end of each run, so that the run's time (kept
# well under 30 minutes) is spent knowingly. -n: the tests run in TEST_PROCESSES processes
# (pytest-xdist), each file one unit of work (tests/conftest.py); TEST_PROCESSES=0 runs them in
# this one process.
TEST_PROCESSES ?= 2
test: $(DEV_STAMP) local-model
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	DEBUG=$${DEBUG:-1} $(VENV)/bin/mypy
	$(VENV)/bin/mkdocs build --strict
	DEBUG=$${DEBUG:-1} $(VENV)/bin/pytest -n $(TEST_PROCESSES) --dist loadfile --durations=40

# The tests whose result depends on the database's locale (marker `collation`: case-insensitive
# search beyond ASCII, the order of ids and names), against the embedded PostgreSQL under .data/
# whatever DATABASE_URL / REDIS_URL say: the cluster a fresh clone gets, which CI's own server
# (`make test` in .ci/run) does not show. The pytest process starts the embedded servers if they
# are not running and stops them when it ends (servers already running are left alone).
test-collation: $(DEV_STAMP)
	env -u DATABASE_URL -u REDIS_URL DEBUG=$${DEBUG:-1} $(VENV)/bin/pytest -m collation

stack-up: $(STAMP)
	$(PY) -m config.devstack up

stack-down: $(STAMP)
	$(PY) -m config.devstack down

stack-status: $(STAMP)
	$(PY) -m config.devstack status

# Every perf script with settings short enough for one run of about 10-15 minutes, each against
# its baseline in the same run; one table of the results (with the machine's load and a verdict
# that is never a pass when the machine was disturbed) in $(PERF_OUT)/PERF.md. A script that
# fails does not stop the others (the leading -); the table marks one that left no result, and
# the last step exits non-zero unless every target passed.
PERF_OUT ?= .artifacts/perf
PERF_RESULTS := $(PERF_OUT)/results.jsonl
perf: $(DEV_STAMP)
	mkdir -p $(PERF_OUT) && rm -f $(PERF_RESULTS)
	$(PY) -m compileall -q config annotation benchmarks evaluation perf
	-DEBUG=$${DEBUG:-1} $(PY) perf/import_speed.py --repeat 3 --results $(PERF_RESULTS)
	-DEBUG=$${DEBUG:-1} $(PY) perf/eval_overhead.py --repeat 5 --tool-mode both --bare-processes 2 \
	  --results $(PERF_RESULTS)
	-DEBUG=$${DEBUG:-1} $(PY) perf/agreement_speed.py --repeat 3 --results $(PERF_RESULTS)
	-DEBUG=$${DEBUG:-1} $(PY) perf/calibration_speed.py --repeat 3 --results $(PERF_RESULTS)
	-DEBUG=$${DEBUG:-1} $(PY) perf/csv_speed.py --repeat 3 --export both --results $(PERF_RESULTS)
	-$(PY) perf/bfcl_ast.py --repeat 5 --results $(PERF_RESULTS)
	-DEBUG=$${DEBUG:-1} $(PY) perf/annotate_load.py --seconds 30 --cpu-load 1 \
	  --results $(PERF_RESULTS)
	-DEBUG=$${DEBUG:-1} $(PY) perf/annotate_load.py --seconds 20 --saturation-seconds 20 \
	  --saturation-annotators 10 --results $(PERF_RESULTS)
	-DEBUG=$${DEBUG:-1} $(PY) perf/annotate_load.py --seconds 10 --saturation-seconds 20 \
	  --saturation-annotators 10 --protocol one --results $(PERF_RESULTS)
	-DEBUG=$${DEBUG:-1} $(PY) perf/request_cost.py --results $(PERF_RESULTS)
	-$(PY) perf/scale_out.py --judge-samples 400 --results $(PERF_RESULTS)
	-DEBUG=$${DEBUG:-1} $(PY) perf/large_sizes.py --sizes 10000,100000 --repeat 3 \
	  --time-limit 900 --results $(PERF_RESULTS)
	-DEBUG=$${DEBUG:-1} $(PY) perf/suite_analyses.py --sizes 10000,100000 --repeat 3 \
	  --python-max 10000 --drop-db --time-limit 900 --results $(PERF_RESULTS)
	$(PY) perf/honest.py $(PERF_RESULTS) $(PERF_OUT)/PERF.md \
	  import_speed.py eval_overhead.py agreement_speed.py calibration_speed.py csv_speed.py \
	  bfcl_ast.py annotate_load.py request_cost.py scale_out.py large_sizes.py suite_analyses.py
