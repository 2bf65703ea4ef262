# Plimsoll's entry points. `make run` and `make test` do all set-up themselves on a
# fresh Debian machine: a virtualenv in .venv with the project and its extras, and
# the Debian packages the tests need.
# The interpreter: Debian's own /usr/bin/python3 when it is 3.11 or newer with venv, else
# python3 on PATH. Where a version manager puts another python3 first, the two differ:
# on this project's VMs pyenv's 3.11.7 (configured without --enable-optimizations) comes
# first, and in one run of bench/mock.py the mock served 84,366 requests/s under Debian's
# 3.11 against 72,835 under it (1.16x; 1.24x in an earlier run), the generator's closed
# loop 8.64-8.78 us of CPU a request against 9.30.
PYTHON ?= $(shell /usr/bin/python3 -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' \
	2>/dev/null && echo /usr/bin/python3 || echo python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha1sum pyproject.toml | cut -c1-12)
# curl openssl xz-utils iproute2 util-linux: the real control plane the operator tests run on.
# podman, runc and mmdebstrap: the image tests build and run the three images
# (scripts/build-images) with no Docker engine and no registry; containerd: they
# import the --save archives as kind and k3d do.
# postgresql, redis-server and their Prometheus exporters: the real services the seed
# examples and their tests start in a run's work dir (Debian bookworm ships Redis, not Valkey).
DEBIAN_PACKAGES := prometheus nginx-light wrk curl openssl xz-utils iproute2 util-linux \
	podman runc mmdebstrap containerd postgresql redis-server prometheus-postgres-exporter \
	prometheus-redis-exporter containernetworking-plugins gcc
OUT ?= plimsoll-out

.PHONY: hot-path run test e2e truth docs check lint typecheck contracts crd debian bench images examples clean

# The generator's hot path is compiled at install (hatch_build.py): gcc and Python's
# headers come first. BUILD_PACKAGES assume Debian's python3; another interpreter
# brings its own headers.
BUILD_PACKAGES := gcc python3-dev
$(STAMP): pyproject.toml
	./scripts/ensure-debian-packages $(BUILD_PACKAGES)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-* $(HOT_PATH_BUILT) && touch $@

# The compiled hot path, rebuilt in place when its Python source or its declarations
# change: an import would otherwise run the old compiled code (tests/conftest.py stops
# a run that would).
HOT_PATH_SOURCES := $(wildcard generator-image/plimsoll_generator/*.pxd) \
	$(patsubst %.pxd,%.py,$(wildcard generator-image/plimsoll_generator/*.pxd))
HOT_PATH_BUILT := $(VENV)/.hot-path-built
$(HOT_PATH_BUILT): $(STAMP) $(HOT_PATH_SOURCES) hatch_build.py
	$(BIN)/python hatch_build.py
	touch $@

## Recompile the generator's hot path in place (make run, test and e2e do it when needed).
hot-path: $(HOT_PATH_BUILT)

debian:
	./scripts/ensure-debian-packages $(DEBIAN_PACKAGES)

## The main job: find the quickstart target's ceiling on this machine.
run: $(HOT_PATH_BUILT)
	$(BIN)/plimsoll run examples/quickstart.yaml --out $(OUT)

## The seed examples on this machine (real PostgreSQL and Redis), each under 10 minutes,
## checked for the figures its seed asks for; reports in $(OUT)/examples/.
examples: $(HOT_PATH_BUILT) debian
	$(BIN)/python scripts/run-examples --out $(OUT)/examples

## The test suite a change is checked with, in minutes: everything but the long
## end-to-end runs and the truth measurements (tests/conftest.py END_TO_END, TRUTH).
test: $(HOT_PATH_BUILT) debian
	$(BIN)/pytest -n 2 --dist loadfile -m "not e2e and not truth" --durations=25

## The long end-to-end runs, proving each capability on real components: images (built
## once a session), the seed examples' whole runs, the operator on a real cluster and a
## real node. CI runs them too. Ends with each test's time holding the host.
e2e: $(HOT_PATH_BUILT) debian
	$(BIN)/pytest -n 2 --dist loadfile -m e2e --durations=25

## The measurements that need a quiet host: ceilings against truths known another way
## (the real node against the same spec run here, the calibration round trip, the local
## shapes and ceilings against their analytic values), then bench/truth.py. Serial and
## alone; one JSON line per case. CI does not run it: run it, and quote it, before
## resolving a change to the search, the verdicts, attribution, platforms or generator.
truth: $(HOT_PATH_BUILT) debian
	$(BIN)/pytest -p no:xdist -m truth --durations=0
	$(BIN)/python bench/truth.py

lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy operator/plimsoll generator-image/plimsoll_generator mock-upstream-image/plimsoll_mock \
		hatch_build.py

contracts: $(STAMP)
	$(BIN)/lint-imports

## Every static check, then the tests.
check: lint typecheck contracts test

## Regenerate the checked-in CRD (a test fails when it is stale).
crd: $(STAMP)
	$(BIN)/plimsoll crd > crds/capacitytest.yaml

bench: $(HOT_PATH_BUILT) debian
	$(BIN)/python bench/search.py
	$(BIN)/python bench/mock.py
	$(BIN)/python bench/generator.py

## The docs site into site/ (strict: broken links or undescribed fields fail it).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

## The operator, generator and mock images (podman, or Docker when its daemon answers).
images: $(STAMP) debian
	PYTHON=$(BIN)/python ./scripts/build-images

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache .mypy_cache .ruff_cache
