# placer: build, test, benchmark, lint, demo.
GO      ?= go
BIN     := bin/placer
PKGS    := ./...
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# Every go command make runs builds with -trimpath (added to what `go env
# GOFLAGS` holds): without it Go's build cache keys each of this module's
# packages by its folder, so a clone at a new path (CI's fresh clone, its
# GOCACHE kept) compiled and vetted the whole module again. Measured
# 2026-11-29, two clones of one commit at two paths, one GOCACHE, the
# second clone's CPU s (user + sys): go build ./cmd/placer 31.1 -> 2.9,
# go vet ./... 17.4 -> 1.5, go test -count=1 -vet=off -run '^$$' ./...
# (compiling and linking every test binary) 71.6 -> 31.0. No test reads
# its own source's path (runtime.Caller): go test runs each package in
# its folder.
export GOFLAGS := $(strip $(filter-out -trimpath,$(shell $(GO) env GOFLAGS)) -trimpath)
# A plain `go build` prints no warnings (go-nvml is pinned at v0.12.9-0,
# whose NVML header marks nothing deprecated; docs/hardware.md). CUDA's own
# headers do mark old driver calls deprecated, and gorgonia.org/cu's cgo
# prologue references them all: make cuda passes this flag.
CUDA_CGO_CFLAGS := -O2 -g -Wno-deprecated-declarations

.PHONY: all build test bench bench-sim lint fuzz demo clean deps go-deps proto

all: build

# ======================================================================
# Build, set-up (make deps), make test and its parts, benchmarks, lint.
# ======================================================================

# The set-up, once per machine: everything make test needs. Go's modules;
# Debian's torch 1.13 for the exporter's old-torch tests (py-deps); the
# virtualenv of current PyTorch (venv) with the held-out models'
# transformers and timm (venv-test); the frameworks that read placer's
# exports (venv-frameworks, venv-megatron, venv-bridge); CUDA 11.8's and 13's headers
# for the cuda build's check (cuda-dev, cuda13-dev); Slurm's packages
# (slurm-deps; make test starts the daemons). Each step says what and why
# before it installs, and does nothing when it is already there. A fresh
# machine (2026-11-27, this project's 2-core machine, PyPI's downloads
# included): see docs/history.md for the measured time.
#
# Where the Python packages go: VENV, FRAMEWORKS_DIR, MEGATRON_DIR,
# CUDA_DEV_DIR and CUDA13_DEV_DIR default to folders under
# ${XDG_CACHE_HOME:-$HOME/.cache}/placer (one per machine, shared by its
# clones); the placer binary and the Go tests find the virtualenv by the
# same rule (internal/torchenv: $TORCH_PY, else that folder's
# torch-venv), and make exports TORCH_PY to every command it runs, so a
# make VENV=DIR reaches them too. CI (.ci/run) points XDG_CACHE_HOME at an
# empty folder of its own, so that nothing installed by hand on the
# machine can stand in for a step missing here.
deps: go-deps py-deps venv venv-test venv-frameworks venv-megatron venv-bridge cuda-dev cuda13-dev slurm-deps

go-deps:
	$(GO) mod download

build: go-deps
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/placer

# The whole suite, fuzz seed corpora included (they run as ordinary tests),
# then the simulator's tests again with every raw index checked
# (evaluate/roofline/raw.go).
#
# What a green CI proves beyond that: the `cuda`-tagged code vets and builds
# and links no cuBLAS (cuda-check: CUDA 11.8's headers from Debian's
# nvidia-cuda-dev, unpacked once per machine, and CUDA 13's from the
# virtualenv), the zoo's models export on
# current torch (zoo, about 35 s; TestZoo reads them), and the exporter's
# tests pass on current torch and on Debian's 1.13. A test whose data is
# absent says SKIP with its reason: the suite's output goes through
# tools/dev/testsummary, which prints what go test prints plus one line per
# skipped test and why. The Go tests run with PLACER_CUDA_CHECKED=1:
# cuda-check has just vetted and built the cuda build and read what it
# links, so TestCUDABuildCompiles, the same check from go test (another
# cgo compile of gorgonia.org/cu, 1-2.5 minutes on 2 cores), says SKIP.
#
# The exporter's tests on current torch and on Debian's 1.13 run side by
# side (make -j2, each target's output kept whole): most of their time is
# one python process at a time, torch's import, and gloo's start, which
# leave the second core idle.
#
# make test depends on make deps (each step a no-op once installed), and
# runs the Go tests with PLACER_REQUIRE_TORCH=1: a Go test that needs the
# virtualenv or a package in it fails instead of saying SKIP, so a set-up
# step missing from make deps cannot pass unseen.
#
# The Slurm test (TestSlurm, what make test-slurm runs) runs inside the Go
# tests (slurm-up first, PLACER_TEST_SLURM=1), not after the Python tests
# on its own: it took 42 s in a quiet make test (2026-11-27) and uses
# about 33 CPU s (its own process 16.7, the array's tasks 16.6, measured
# 2026-11-27), the rest Slurm starting tasks and the test polling squeue;
# alone, it left more than one of the 2 cores idle on average, beside the
# other packages' tests the gaps are filled. The Go tests that run
# the placer binary (cmd/placer's, tools/dev/readme's README samples) run
# bin/placer, just built (PLACER_TEST_BINARY), instead of linking a
# binary of their own each (3 CPU s less in each package, measured
# 2026-11-27). The Go tests run with GOGC=400 (the collector runs once
# the heap has grown 4x since the last collection, not 1x): the searches
# allocate many small objects on small heaps, so collections were a large
# share of their CPU time. Measured 2026-11-28, go test of the package at
# GOGC=100 -> 400 (the same binary): planner/search 53.6 -> 45.6
# CPU s, peak RSS 47 -> 61 MB; cmd/placer's report megatron test 30.6,
# 32.0 -> 25.4, 26.5 CPU s. Peak RSS stays where live data sets it (jobs
# 820 MB) and grows where the heap is small (workloads/export 33 -> 86
# MB; both with Step.Count's allocations cut too). The placer processes the tests start inherit it; users'
# runs keep Go's default.
#
# Each phase's wall and CPU time (tools/dev/testsummary/phase.sh: user+sys of
# every process it waited for) is printed as it ends and as a table at the
# end (out/test-phases.txt), a failed phase's with the table so far; the Go
# tests' phase also prints its 20 slowest tests (go test -json's wall) and
# its packages by CPU (tools/dev/testsummary/exec.sh, go test's -exec: each
# test binary's CPU and its children's). On a shared machine the wall is
# the neighbours' too; the CPU is this run's. go test's -timeout (20m
# a package) is a hang guard, not a speed: under a load of 15 to 30 on 2
# cores (other sessions' builds, 2026-11-28) cmd/placer's tests took
# 540 s and met the 9m it had been.
PHASE := tools/dev/testsummary/phase.sh $(CURDIR)/out/test-phases.txt
test:
	@mkdir -p out && rm -f out/test-phases.txt out/test-cpu.txt && date +%s.%N > out/test-start
	@$(PHASE) deps $(MAKE) --no-print-directory deps
	@$(PHASE) build+slurm-up $(MAKE) --no-print-directory build slurm-up
	@$(PHASE) static+zoo $(MAKE) -j2 --output-sync=recurse test-static zoo
	@$(MAKE) --no-print-directory -j2 test-phase-go test-phase-python-then-profile
	@tools/dev/testsummary/phase.sh --table out/test-phases.txt out/test-start

# make test's Go tests and Python groups run side by side (make -j2): one
# after the other the Go phase kept 1.65 cores busy (478 CPU s in 289 s)
# and the Python phase 1.45 (362 CPU s in 250 s), and make test took
# 650 s on 2 quiet cores with warm caches (2026-11-28). Each phase still
# prints its own wall and CPU; their walls overlap, so the table gives
# make test's wall end to end beside their sum. Their lines interleave
# as they print (go test's per package as each ends, Python's per group).
# go test runs with -vet=off: test-static's go vet $(PKGS) has just run
# every analyzer go test's own vet step runs (atomic, bool, buildtags,
# directive, errorsas, ifaceassert, nilfunc, printf, stringintconv,
# tests: a subset of go vet's), on the same packages and their tests, and
# go test vetted the whole module a second time (before -trimpath, a
# fresh clone's path missed Go's cache): in a new clone after go vet ./..., go test
# -count=1 -run '^$' ./... spent 6.2 CPU s in its 187 vet runs, beside
# 37.4 compiling and 22.5 linking (each tool timed through -toolexec,
# 2026-11-29).
.PHONY: test-phase-go test-phase-python
test-phase-go:
	@$(PHASE) go-test bash -o pipefail -c 'GOGC=400 PLACER_CUDA_CHECKED=1 PLACER_REQUIRE_TORCH=1 PLACER_TEST_SLURM=1 PLACER_TEST_BINARY=$(CURDIR)/$(BIN) \
		PLACER_TEST_CPU=$(CURDIR)/out/test-cpu.txt PLACER_TEST_ROOT=$(CURDIR) \
		$(GO) test -count=1 -vet=off -timeout 20m -exec $(CURDIR)/tools/dev/testsummary/exec.sh -json $(PKGS) | $(GO) run ./tools/dev/testsummary -top 20 -cpu out/test-cpu.txt'
test-phase-python:
	@$(PHASE) python $(MAKE) -j2 --output-sync=recurse test-python-venv-tools test-python-package-debian

# The CPU profile's loop (test-profile-cpu) runs after the Python groups,
# beside the Go tests: the Python phase ended about 40 s before the Go
# phase, and the loop (51 s) ran alone after both, one core idle
# (make test 657.6 s end to end at 548ccc7, 2026-11-29).
.PHONY: test-phase-python-then-profile
test-phase-python-then-profile: test-phase-python
	@$(PHASE) profile-cpu $(MAKE) --no-print-directory test-profile-cpu

# What make test checks before the Go tests, beside the zoo's exports
# (make -j2: the exports are one Python process each, 44 CPU s in all on
# a fresh clone, and vet, gofmt, cuda-check and the simulator's simcheck
# build about 25 CPU s; one after the other they left a core idle for
# about a minute, 2026-11-27). cuda-check's binaries carry a fixed
# version (VERSION=cuda-check, not the commit's): go build links a binary
# again only when what it is built from changed, so a commit that leaves
# the code alone relinks neither (3.6 CPU s against 10.6 with both
# relinked, 2026-11-28); make cuda still stamps the commit.
.PHONY: test-static
test-static: build
	$(GO) vet $(PKGS)
	@test -z "$$(gofmt -l .)" || (echo "gofmt needed:"; gofmt -l .; exit 1)
	$(MAKE) cuda-check VERSION=cuda-check
	$(GO) test -count=1 -tags simcheck ./evaluate/roofline

# The PyTorch exporter (tools/dev/torchexport) runs on two torches:
#
# - current PyTorch from PyPI (TORCH_PINS, exact versions) in a virtualenv
#   that `make venv` creates once per machine and reuses: VENV, by default
#   under the user's cache directory, so that every clone on the machine
#   (CI's fresh ones included) shares it. PyPI's Linux wheel is the CUDA
#   build (it brings the nvidia-* CUDA 13 libraries: 5.5 GB installed);
#   PyPI hosts no CPU-only torch wheel (the +cpu builds are on PyTorch's
#   own index, which this project's machines cannot reach). Measured on
#   this project's machine (2026-11-25): 74 s and 2 min 14 s in two runs
#   to create it, download included (the network's speed decides).
#   torchvision 0.29.2 is the newest release, built for torch 2.14 (torch
#   2.15.0 is out, its torchvision not yet). onnxscript is what
#   torch.onnx.export needs on torch 2.9 and later.
# - Debian's torch 1.13, torchvision 0.14 and onnx 1.12 (docs/import.md),
#   under Debian's python3 (not a python3 earlier on PATH, such as
#   pyenv's), kept working because it costs 10 s. py-deps installs them
#   with apt when they are missing (root, or sudo), with python3-venv for
#   the virtualenv. On this project's machine the install took 4 min 24 s
#   with recommended packages (apt-get update included);
#   --no-install-recommends leaves out the GUI and audio libraries they
#   pull in. python3-pytest (7.2.1 on Debian 12) runs the package's tests
#   there as pytest 9.2.0 runs them in the virtualenv (test-python-debian).
#
# make test creates the virtualenv when it is missing (once per machine: 1 to
# 2.5 minutes here, against CI's 90), so that CI runs the exporter's tests
# and the zoo on current torch, as the README says it does.
PYTHON      ?= /usr/bin/python3
PY_DEBS     := python3-torch python3-torchvision python3-onnx python3-venv python3-pytest
TORCH_PINS  := torch==2.14.1 torchvision==0.29.2 onnx==1.23.2 onnxscript==0.7.2
VENV        ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/placer/torch-venv
TORCH_PY    := $(VENV)/bin/python
# The Go code's rule (internal/torchenv) reads $TORCH_PY first: every
# command make runs (go test, the binary's placer profile) gets this one.
export TORCH_PY
# The runner's held-out models (python/placer_torch/tests/runner/
# test_runner.py): tiny configs of transformers' GPT-2 and BERT and timm's
# ViT, random weights, nothing downloaded; and pytest 9.2.0 (PyPI's newest,
# 2026-11-27) with what it imports (iniconfig, pluggy, pygments, packaging),
# which runs the package's tests (python/placer_torch/pyproject.toml).
# Installed into the virtualenv beside TORCH_PINS (not a new virtualenv;
# TORCH_PINS on the same command line keep torch where it is) when
# $(VENV)/placer-test-pins differs: about 15 s, 30 MB.
PY_TEST_PINS := transformers==5.24.0 timm==1.0.31 pytest==9.2.0 iniconfig==2.3.1 pluggy==1.7.0 pygments==2.21.0 \
                packaging==26.4
# py-deps and venv-test look for their modules with importlib.util.find_spec,
# which finds a module's file without running it (0.02 CPU s), not with an
# import: importing torch 1.13 took 1.5 CPU s and placer_torch (which
# imports torch 2.14) 1.9, and make test's sub-makes run these checks ten
# times (2026-11-27, this project's 2-core machine).
.PHONY: py-deps venv venv-test test-python test-python-venv test-python-venv-tools test-python-venv-package test-python-package-debian test-python-debian test-python-debian-runner zoo bench-runner
py-deps:
	@if ! $(PYTHON) -c 'import importlib.util as u, sys; sys.exit(not all(u.find_spec(m) for m in ("torch", "torchvision", "onnx", "ensurepip", "pytest")))' 2>/dev/null; then \
		sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		echo "py-deps: placer_torch's tests on Debian's torch 1.13 (python/placer_torch/tests) need $(PY_DEBS);"; \
		echo "py-deps: installing them with apt-get --no-install-recommends (once per machine; about 4 minutes)"; \
		$$sudo apt-get update -qq && \
		$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(PY_DEBS); \
	fi

# The virtualenv of current PyTorch: created when missing or when its pins
# ($(VENV)/placer-pins) differ from TORCH_PINS, reused otherwise.
venv: py-deps
	@if [ "$$(cat $(VENV)/placer-pins 2>/dev/null)" != "$(TORCH_PINS)" ]; then \
		echo "venv: installing $(TORCH_PINS) from PyPI into $(VENV)"; \
		echo "venv: once per machine; about 5.5 GB (the CUDA libraries of PyPI's wheel), 1 to 2.5 minutes on this project's machine"; \
		rm -rf $(VENV) && mkdir -p $(dir $(VENV)) && \
		$(PYTHON) -m venv $(VENV) && \
		$(TORCH_PY) -m pip install --disable-pip-version-check -q $(TORCH_PINS) && \
		echo "$(TORCH_PINS)" > $(VENV)/placer-pins; \
	fi

# The held-out models, and placer_torch (python/placer_torch: apply_plan)
# installed editable (pip install -e --no-deps) from this checkout when the
# virtualenv's points elsewhere; the tools find it in their own checkout
# either way.
venv-test: venv
	@if [ "$$(cat $(VENV)/placer-test-pins 2>/dev/null)" != "$(PY_TEST_PINS)" ]; then \
		echo "venv-test: installing $(PY_TEST_PINS) into $(VENV)"; \
		$(TORCH_PY) -m pip install --disable-pip-version-check -q $(PY_TEST_PINS) $(TORCH_PINS) && \
		echo "$(PY_TEST_PINS)" > $(VENV)/placer-test-pins; \
	fi
	@if [ "$$(cd /tmp && $(TORCH_PY) -c 'import importlib.util as u, os; print(os.path.dirname(os.path.dirname(os.path.realpath(u.find_spec("placer_torch").origin))))' 2>/dev/null)" != "$(realpath python/placer_torch)" ]; then \
		echo "venv-test: pip install -e python/placer_torch"; \
		$(TORCH_PY) -m pip install --disable-pip-version-check -q --no-deps --no-build-isolation -e python/placer_torch; \
	fi

# placer_torch's tests (python/placer_torch/tests; docs/torch-plan.md,
# docs/import.md) run by pytest from python/placer_torch, whose
# pyproject.toml configures it, one pytest a group: the markers that
# tests/conftest.py gives each test file by its folder pick a group's
# tests (cd python/placer_torch && python -m pytest runs them all). PLACER
# names the placer binary just built.
#
# The exporter's invariants, the module-map round trip (placer search ->
# placer export --to module-map -> placement.apply_module_map) and the ONNX
# import (tests/exporter), the torch-plan runner (tests/runner: a 2-stage
# x 2-replica plan on 4 CPU processes with gloo against the unsplit model,
# and the module map's transfer hooks), the transformer and experts
# runners (tests/transformer, tests/experts) and, first, without torch, no
# import circles in placer_torch and the tools on it (tests/test_imports.py,
# under a second) run on Debian's 1.13 (-m debian), in one python; then
# tools/dev/torchplan's test of heldout.py, and make fidelity's script
# (tools/measure/fidelity) on the CPU with two tiny models against the real
# binary: the plumbing, not the accuracy (about 7 s). The runner without
# torch.fx (tests/runner/test_runner.py, docs/torch-plan.md): on current
# torch with the held-out GPT-2, BERT (FSDP2) and ViT, every strategy, one
# launch of 4 gloo processes (about 70 s on 2 shared cores), and on
# Debian's 1.13 the cases that need neither (-m debian_runner). The
# package's own tests on current torch (-m package: the imports and placer
# profile's measurements, tests/profile), with torchtitan's folder,
# PLACER_FRAMEWORKS, for placer profile --framework torchtitan's tests
# (tests/profile/test_frameworks.py, its DTensor case 44 s on 2 loaded
# cores, 2026-11-27), and megatron-core's folder, PLACER_MEGATRON, for
# --framework megatron's (its three cases 72 s, 37 CPU s, on 2 cores at
# load 8; 29 s, 28 CPU s, at load 3; 2026-11-27).
test-python: test-python-venv test-python-debian

test-python-venv: test-python-venv-tools test-python-venv-package

# make test runs the Python tests as two groups side by side (make -j2):
# test-python-venv-tools (the exporter, the runner, the experts, the
# frameworks' and Megatron's checks) and test-python-package-debian
# (placer_torch's own tests, then Debian's 1.13), not current torch
# against Debian's (265 s against 110 s, 2026-11-27). In a quiet make test
# of 2026-11-27 (2 cores, the groups side by side) the suites then in the
# first took 45.6 + 133.5 + 11.4 + 13.8 = 204 s by their own count
# ("Ran N tests in"), those in the second 68.2 + 124.2 + 12.3 = 205 s, with
# Megatron's checks (12.3 s) in the second. In the fresh-clone make test
# of 2026-11-28 (commit 93b9ec2, 2 quiet cores) the first group's suites
# took 193.4 (-m commands) + 14.3 + 6.4 = 214 s, the second's 111.3
# (-m package) + 73.1 (-m debian) + 0.0 + 32.9 + 22.1 + 10.5 + 41.7
# (Megatron's) = 291 s: Megatron's checks moved back to the first group
# (256 s against 250 s by those counts). The first group's placer_torch
# tests are pytest's -m commands, the second's -m package and -m debian
# (tests/conftest.py's GROUPS).
test-python-venv-tools: build venv-test venv-frameworks venv-bridge venv-megatron megatron-report
	cd python/placer_torch && PLACER=$(CURDIR)/$(BIN) $(TORCH_PY) -m pytest -v -rs --durations=10 -m commands
	$(MAKE) test-hfconfigs
	$(MAKE) test-frameworks
	$(MAKE) test-bridge
	$(MAKE) test-megatron

# placer report megatron --json, which two of the groups' tests read
# (tools/dev/frameworks/test_megatron.py: every plan in it exported;
# tools/measure/layerbench: its rows against layerbench's cases), run
# once a make test rather than once a test: its searches took 49 and 54
# CPU s in two runs (2026-11-29, 2 loaded cores). megatron-report
# writes it anew each time either group runs (written to a .tmp, then
# renamed: a failed run leaves no file to read), and the groups' tests
# find it by PLACER_REPORT_MEGATRON, exported to their sub-makes; a test
# run alone (make test-megatron, make test-python-debian) has no
# PLACER_REPORT_MEGATRON and runs the report itself.
MEGATRON_REPORT := $(CURDIR)/out/report-megatron.json
.PHONY: megatron-report
megatron-report: build
	@mkdir -p out && rm -f $(MEGATRON_REPORT) && $(BIN) report megatron --json > $(MEGATRON_REPORT).tmp && \
		mv $(MEGATRON_REPORT).tmp $(MEGATRON_REPORT)
test-python-venv-tools test-python-package-debian: export PLACER_REPORT_MEGATRON := $(MEGATRON_REPORT)

# Hugging Face's config.json files as transformers itself writes them
# (tools/measure/hfconfigs, graph/transformer/testdata/hf5): each model type
# placer reads, built by transformers' config class at small sizes (no
# weights, no download) and written by its save_pretrained, read by
# bin/placer as the model built; the committed files checked against
# what the pinned transformers (PY_TEST_PINS: 5.24.0) writes. About 12 s.
.PHONY: test-hfconfigs
test-hfconfigs: build venv-test
	PLACER=$(CURDIR)/$(BIN) $(TORCH_PY) -m unittest discover -v -s tools/measure/hfconfigs -p 'test_*.py'

test-python-venv-package: build venv-test venv-frameworks venv-megatron
	cd python/placer_torch && PLACER=$(CURDIR)/$(BIN) PLACER_FRAMEWORKS=$(FRAMEWORKS_DIR) PLACER_MEGATRON=$(MEGATRON_DIR) $(TORCH_PY) -m pytest -v -rs --durations=10 -m package
	PLACER_MEGATRON=$(MEGATRON_DIR) PLACER_TORCH_PY=$(TORCH_PY) $(TORCH_PY) -m unittest discover -v -s tools/measure/mcoreops -p 'test_*.py'

test-python-package-debian: build venv-test venv-frameworks py-deps megatron-report
	$(MAKE) test-python-venv-package
	$(MAKE) test-python-debian

test-python-debian-runner: build py-deps
	cd python/placer_torch && PLACER=$(CURDIR)/$(BIN) $(PYTHON) -m pytest -v -rs -m debian_runner

# test_heldout.py builds heldout.py's models, some of them the runner
# tests' (tiny_models, on PYTHONPATH).
test-python-debian: build py-deps
	cd python/placer_torch && PLACER=$(CURDIR)/$(BIN) $(PYTHON) -m pytest -v -rs --durations=10 -m debian
	cd tools/dev/torchplan && PYTHONPATH=$(CURDIR)/python/placer_torch/tests/runner $(PYTHON) -m unittest -v test_heldout
	PLACER=$(CURDIR)/$(BIN) $(PYTHON) -m unittest discover -v -s tools/measure/layerbench -p 'test_*.py'
	PYTHONPATH=$(CURDIR)/python/placer_torch $(PYTHON) -m unittest discover -v -s tools/measure/kernelbench -p 'test_*.py'
	PLACER=$(CURDIR)/$(BIN) $(PYTHON) -m unittest discover -v -s tools/measure/fidelity -p 'test_*.py'
	$(PYTHON) -m unittest discover -v -s tools/measure/timmbench -p 'test_*.py'
	PLACER=$(CURDIR)/$(BIN) $(PYTHON) -m unittest discover -v -s tools/measure/gpu -p 'test_*.py'
	$(PYTHON) -m unittest discover -v -s tools/measure/mlperf -p 'test_*.py'
	$(PYTHON) -m unittest discover -v -s tools/measure/codebases -p 'test_*.py'
	$(PYTHON) -m unittest discover -v -s tools/measure/dle -p 'test_*.py'

# Profile, then predict, then run, on this machine's CPU (docs/profile.md, "The CPU loop"): a
# tiny Llama profiled on 4 gloo processes where the cores give each its
# own, else 2 (placer profile), eight plans predicted from it (eval
# --profile: DDP, FSDP, TP with and without SP, 1F1B, recomputation, a
# larger micro-batch) and run (placer_torch.profile.runs), and a tiny
# MoE's three plans beside them.
#
# test-profile-cpu, in make test, is the whole path checked on what does
# not depend on the machine's speed while it runs (placer_torch/profile/
# loopcheck.py): the profiles written and complete, every plan predicted
# and run, every plan's first loss the untrained model's (ln vocab + 1/6,
# the same across plans), predicted/measured within 10x either way (a
# wrong unit or a lost term). Once, at the least that times every plan
# (medians of 1 loop, one round of one step).
#
# bench-profile-cpu is the loop's accuracy: BENCH_REPEATS repeats of
# profile then runs (A B A B ...: a neighbour's load falls on both), the
# profiles' medians of 3 loops, the runs' of 3 interleaved rounds of 2
# steps; the dense plans' Spearman, the median |error| and the median
# |error| against each model's geometric mean of predicted/measured,
# printed with their range and spread over the repeats; fails when a
# figure misses its limit (Spearman >= 0.8, ratio error <= 20%, error
# <= 60%) by more than its own spread (half its range over the repeats).
# About 85 s a repeat on 2 quiet cores.
BENCH_REPEATS ?= 3
.PHONY: test-profile-cpu bench-profile-cpu
test-profile-cpu: build
	PYTHONPATH=$(CURDIR)/python/placer_torch $(TORCH_PY) -m placer_torch.profile.cpuloop $(BIN) --out out/profile-cpu

bench-profile-cpu: build
	PYTHONPATH=$(CURDIR)/python/placer_torch $(TORCH_PY) -m placer_torch.profile.cpuloop $(BIN) --bench $(BENCH_REPEATS) --out out/bench-profile-cpu

# The CPU loop's second half (docs/profile.md): a tiny DeepSeek-like model (latent
# attention, a dense layer first, experts) at dp2, dp2 ep2 and pp2, and the
# tiny MoE at tp2 with sequence parallelism at etp 1, etp 2 and ep 2,
# profiled, predicted and run on 2 gloo processes. test-profile-cpu-moe
# checks the path as test-profile-cpu does (not in make test: it adds
# about a minute); bench-profile-cpu-moe measures the median |error|
# over BENCH_REPEATS repeats (profiles of medians of 9 loops) and fails
# when it is above 20% by more than its spread. About 110 s a repeat on
# 2 cores.
.PHONY: test-profile-cpu-moe bench-profile-cpu-moe
test-profile-cpu-moe: build
	PYTHONPATH=$(CURDIR)/python/placer_torch $(TORCH_PY) -m placer_torch.profile.moeloop $(BIN) --out out/profile-cpu-moe --json out/profile-cpu-moe/summary.json

bench-profile-cpu-moe: build
	PYTHONPATH=$(CURDIR)/python/placer_torch $(TORCH_PY) -m placer_torch.profile.moeloop $(BIN) --bench $(BENCH_REPEATS) --out out/bench-profile-cpu-moe

# The model zoo: training steps with Adam, random weights, built from code
# (python/placer_torch/placer_torch/zoo.py) and exported on current torch (the
# virtualenv), written to $(ZOO_DIR) with their meta files: each graph is
# exported again when the exporter (python/placer_torch) or the zoo
# changes (about 35 s for the five). Not committed; Go tests that read
# them skip when they are absent.
ZOO_DIR    ?= out/zoo
ZOO_MODELS ?= resnet50 inception_v3 vit_b_16 bert_base gpt2_small
ZOO_DEPS   := tools/dev/torchexport/torchexport.py python/placer_torch/placer_torch/zoo.py python/placer_torch/placer_torch/exporter.py \
              python/placer_torch/placer_torch/torchexport.py python/placer_torch/placer_torch/exportflags.py
zoo: $(ZOO_MODELS:%=$(ZOO_DIR)/%.json)

$(ZOO_DIR)/%.json: $(ZOO_DEPS) | venv
	@mkdir -p $(ZOO_DIR)
	$(TORCH_PY) tools/dev/torchexport/torchexport.py --model $* -o $@

# A single-node Slurm cluster on this machine (tools/dev/slurm/up.sh): Debian's
# slurmctld, slurmd, slurm-client and munge installed with apt-get
# --no-install-recommends when missing (about a minute), a minimal
# slurm.conf (this host, SLURM_CPUS=2 CPUs, no cgroups), munged, slurmctld
# and slurmd started as root (or with sudo); it waits for sinfo to show the
# node idle. Idempotent.
.PHONY: slurm-up slurm-deps test-slurm
slurm-up:
	sh tools/dev/slurm/up.sh

# Slurm's packages only (make deps): what slurm-up installs when missing,
# without starting the daemons.
slurm-deps:
	SLURM_INSTALL_ONLY=1 sh tools/dev/slurm/up.sh

# The Slurm test (cmd/placer TestSlurm, docs/cluster.md): a small report's
# cells as a job array and its table job, checked against one process's
# table; then an array cancelled half-way and resubmitted, every cell
# finished once. About a minute. Without PLACER_TEST_SLURM=1 (a plain go
# test) it is skipped. make test runs it within its Go tests (slurm-up,
# then PLACER_TEST_SLURM=1 go test ./...), not with this target.
test-slurm: slurm-up
	PLACER_TEST_SLURM=1 $(GO) test -count=1 -run '^TestSlurm$$' -v ./cmd/placer

# The CUDA binary bin/placer-cuda: `placer hw bench`, `placer calibrate` and
# the measuring evaluator (hw.NewEvaluator), through gorgonia.org/cu (the
# driver API) and cuBLAS behind the `cuda` build tag. It links only
# libcuda.so.1 (the driver, stable across CUDA versions) and loads cuBLAS at
# run time (libcublas.so.13, .12, .11 in turn, or $PLACER_CUBLAS), so a
# binary built here starts on hosts with CUDA 11.8 to 13 (docs/hardware.md).
# It compiles against CUDA 11.8's headers from Debian's nvidia-cuda-dev,
# which evaluate/hw/scripts/install-cuda-dev.sh unpacks into CUDA_DEV_DIR
# (once per machine, about 80 s, no root) when the system has no cuda.h and
# cublas_v2.h. CUDA_INCLUDE, when set, names other include directories to
# compile against instead (their cccl/ too, where CUDA 13 keeps CCCL's
# headers); the link still uses the system's libcuda or CUDA_DEV_DIR's stub.
# CUDA 13 headers build too: gorgonia.org/cu v0.9.6 calls five driver
# functions whose CUDA 13 signatures changed (the 3-argument cuCtxCreate
# among them), and evaluate/hw/cuda13compat/cuda.h, first on the include
# path, points them back at the entry points CUDA 11.8 and 12 name
# (cuda13-check below). make test vets and builds it; it runs only where a
# GPU and its driver are.
CUDA_BIN     := bin/placer-cuda
CUDA_DEV_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/placer/cuda-dev
CUDA_INCLUDE ?=
CUDA_COMPAT  := $(CURDIR)/evaluate/hw/cuda13compat
CUDA_SYS     := $(firstword $(foreach d,/usr/local/cuda/include /usr/include,$(if $(and $(wildcard $(d)/cuda.h),$(wildcard $(d)/cublas_v2.h)),$(d))))
CUDA_INC     := $(or $(CUDA_INCLUDE),$(if $(CUDA_SYS),,$(CUDA_DEV_DIR)/include))
CUDA_ENV     := CGO_ENABLED=1 CGO_CFLAGS="$(CUDA_CGO_CFLAGS) -I$(CUDA_COMPAT) $(addprefix -I,$(CUDA_INC) $(wildcard $(addsuffix /cccl,$(CUDA_INC) $(CUDA_SYS))))" \
                CGO_LDFLAGS="$(if $(CUDA_SYS),,-L$(CUDA_DEV_DIR)/lib)"

.PHONY: cuda cuda-dev cuda-check cuda13-dev cuda13-check
cuda-dev:
	sh evaluate/hw/scripts/install-cuda-dev.sh $(CUDA_DEV_DIR)

cuda: go-deps cuda-dev
	$(CUDA_ENV) $(GO) build -tags cuda -ldflags "-X main.version=$(VERSION)" -o $(CUDA_BIN) ./cmd/placer

# What CI proves of the CUDA build without a GPU: the `cuda`-tagged code
# vets and builds, and the binary needs no cuBLAS (readelf lists what it
# links). Every package is vetted with the tag (evaluate/hw holds the
# tagged files) but nn/nntest and the packages whose tests use it (the
# gradient checks of the learned methods): nn/nntest imports
# gorgonia.org/gorgonia, whose own `cuda`-tagged backend (which placer does
# not use) needs cuDNN's headers, and Debian has only an installer that
# downloads them from NVIDIA.
CUDA_VET_PKGS = $(shell $(GO) list -f '{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}' $(PKGS) | awk '!/placer\/nn\/nntest/ {print $$1}')
cuda-check: cuda
	$(CUDA_ENV) $(GO) vet -tags cuda $(CUDA_VET_PKGS)
	@needed="$$(readelf -d $(CUDA_BIN) | awk '/NEEDED/ {print $$NF}' | tr -d '[]' | tr '\n' ' ')"; \
		echo "cuda-check: $(CUDA_BIN) links $$needed"; \
		case "$$needed" in *cublas*) echo "cuda-check: $(CUDA_BIN) links cuBLAS; it must load it at run time"; exit 1;; esac; \
		case " $$needed " in *" libcuda.so.1 "*) ;; *) echo "cuda-check: $(CUDA_BIN) does not link libcuda.so.1"; exit 1;; esac
	@$(if $(CUDA_INCLUDE),:,$(MAKE) --no-print-directory cuda13-check)

# The same checks against CUDA 13.0's headers (bin/placer-cuda13): the
# virtualenv's nvidia/cu13/include (make venv; PyPI's CUDA runtime and
# cuBLAS 13 wheels), plus the headers cublas_v2.h includes that those
# wheels lack, CCCL's <nv/target> and crt/host_defines.h (CUDA13_PINS, a
# 3 MB download, pip-installed once per machine into CUDA13_DEV_DIR by
# cuda13-dev). cuda-check runs it; without the virtualenv it says SKIP and
# passes.
CUDA13_PINS    := nvidia-cuda-cccl==13.0.85 nvidia-cuda-crt==13.0.88
CUDA13_DEV_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/placer/cuda13-dev
CUDA13_VENV    = $(firstword $(wildcard $(VENV)/lib/python3*/site-packages/nvidia/cu13/include/cuda.h))
cuda13-dev:
	@if [ "$$(cat $(CUDA13_DEV_DIR)/placer-pins 2>/dev/null)" != "$(CUDA13_PINS)" ]; then \
		echo "cuda13-dev: installing $(CUDA13_PINS) (headers only, a 3 MB download) from PyPI into $(CUDA13_DEV_DIR)"; \
		rm -rf $(CUDA13_DEV_DIR) && \
		$(TORCH_PY) -m pip install --disable-pip-version-check -q --no-deps --target $(CUDA13_DEV_DIR) $(CUDA13_PINS) && \
		echo "$(CUDA13_PINS)" > $(CUDA13_DEV_DIR)/placer-pins; \
	fi

cuda13-check:
	@if [ -z "$(CUDA13_VENV)" ]; then \
		echo "cuda13-check: SKIP: no CUDA 13 headers (no $(VENV)/lib/python3*/site-packages/nvidia/cu13/include/cuda.h; make venv installs them)"; \
	else \
		$(MAKE) --no-print-directory cuda13-dev && \
		$(MAKE) --no-print-directory cuda-check CUDA_BIN=bin/placer-cuda13 \
			CUDA_INCLUDE="$(patsubst %/,%,$(dir $(CUDA13_VENV))) $(CUDA13_DEV_DIR)/nvidia/cu13/include"; \
	fi

bench: go-deps
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# The simulator's headline figure (issue target: <= 10 ms on one core):
# one evaluation of an 80,000-op layered DAG on 8 GPUs with fusion, run
# SIM_COUNT times of about a second each; the host's load moves single
# runs by a tenth or more, so it prints the fastest and the median of the
# wall time and of the thread's CPU time. (The CPU clock advances in 4 ms
# ticks: over a run of about 100 evaluations that is 0.04 ms.)
SIM_COUNT ?= 10
bench-sim: go-deps
	$(GO) test ./evaluate/roofline -run '^$$' -bench 'Simulate80kLocal$$' -benchmem -cpu 1 -count $(SIM_COUNT) | tee /tmp/placer-bench-sim.txt
	@for col in 3:wall 5:cpu; do awk -v c=$${col%%:*} '/^BenchmarkSimulate80kLocal/ {print $$c/1e6}' /tmp/placer-bench-sim.txt | sort -n | \
		awk -v w=$${col#*:} '{v[NR]=$$1} END {if (NR) printf "Simulate80kLocal %s ms/op over %d runs: min %.2f, median %.2f\n", w, NR, v[1], v[int((NR+1)/2)]}'; done

# The tests' wall-clock bounds (internal/timed): make test runs these
# tests and asserts what they check besides the clock (a time budget's
# status and that it was spent, nothing run on a no-run report, every dead
# worker's claim taken over within its lease); here PLACER_TEST_TIMED=1
# asserts their wall times too: a no-run report within 2 s (equal-time)
# and 10 s (learned), a 0.3 s cell within 5 s, a 100 ms local-search
# budget within 1 s and an anchored one within its budget + 1 s, a zoo
# graph's import within 1 s (the zoo exported first), the last cell worker after
# 20 kills within 45 s, a docs block past its time stopped within 10 s
# (tools/dev/readme's TestExec; make test fails it past 19 s only, where the
# block was not stopped). On a quiet machine: about 1 minute on 2 cores.
TIMED_TESTS := ^(TestLearned|TestLearnedSharedDir|TestEqualTime|TestEqualTimeCascade|TestLocalSearchTimeBudget|TestAnchoredLocalSearch|TestZoo|TestCellKilledWorkers|TestExec)$$
TIMED_PKGS  := ./jobs/reports ./methods/classical ./workloads/export ./cmd/placer ./tools/dev/readme
.PHONY: bench-timed
bench-timed: build zoo
	bash -o pipefail -c "PLACER_TEST_TIMED=1 PLACER_TEST_BINARY=$(CURDIR)/$(BIN) $(GO) test -count=1 -v -run '$(TIMED_TESTS)' $(TIMED_PKGS) | grep -E '^(--- |ok|FAIL)|timed:'"

lint:
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

# Short fuzzing sessions of every decoder (FUZZTIME=30s by default). An
# input that widens coverage is minimized for at most FUZZMINTIME: with Go's
# default, 60 s, both workers could sit minimizing a few-KB input (Go's
# minimizer tries every pair of cut points) for the whole session, shown as
# 0 execs/s (docs/robustness.md).
FUZZTIME ?= 30s
FUZZMINTIME ?= 5s
FUZZFLAGS = -run '^$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME)
fuzz:
	$(GO) test ./graph $(FUZZFLAGS) -fuzz '^FuzzDecode$$'
	$(GO) test ./graph $(FUZZFLAGS) -fuzz '^FuzzFastDecode$$'
	$(GO) test ./decision $(FUZZFLAGS) -fuzz FuzzDecode
	$(GO) test ./workloads/msrfiddle $(FUZZFLAGS) -fuzz FuzzDecode
	$(GO) test ./workloads/costgraph $(FUZZFLAGS) -fuzz FuzzDecode
	$(GO) test ./workloads/onnx $(FUZZFLAGS) -fuzz FuzzDecode
	$(GO) test ./methods/regal $(FUZZFLAGS) -fuzz FuzzRead
	$(GO) test ./methods/gdp $(FUZZFLAGS) -fuzz FuzzDecodeMoveHead

# The Go code generated from the .proto declarations (committed; builds need
# neither tool): costgraph's CostGraphDef and ONNX's ModelProto. Needs
# protoc (Debian: protobuf-compiler) and protoc-gen-go v1.36.12
# (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12).
.PHONY: proto
proto:
	cd workloads/costgraph && protoc --go_out=. --go_opt=module=github.com/placer/placer/workloads/costgraph costgraph.proto
	cd workloads/onnx && protoc --go_out=. --go_opt=module=github.com/placer/placer/workloads/onnx onnx.proto

# The README's quick start: the GO policy searched on trxl2 for two GPUs
# (about a minute), and one decision evaluated with a timeline.
demo: build
	$(BIN) search --workload trxl2 --gpus 2 --steps 20 --out trxl2-result.json
	$(BIN) eval --workload trxl2 --gpus 2 --placement trxl2-result.json --trace trxl2-trace.json

clean:
	rm -rf bin

# ======================================================================
# Measurements: tools/measure/, the harnesses and bench readers whose
# outputs the model reads (measurements/, docs/hardware.md), and the
# bench's checks.
# ======================================================================

# The MLPerf Training bench (measurements/mlperf, DESIGN.md §14): every
# submission of GPT-3 175B and Llama 2 70B LoRA on NVIDIA GPUs of rounds
# v3.0 to v5.0 (and Llama 3.1 405B in v5.0), read from mlcommons' training_results_vX.Y repositories
# (bare git mirrors or checkouts; MIRRORS, by default every
# training_results_v* under /work/.mirror). Round v5.0 is read (its
# Llama 3.1 405B rows the validation part); v5.1 and later are held out:
# the script refuses them. About 40 s on 2 shared cores.
MIRRORS ?=
.PHONY: mlperf-bench-data bench-fits
mlperf-bench-data:
	$(PYTHON) tools/measure/mlperf/mlperf_bench.py --out measurements/mlperf $(MIRRORS)

# Published throughputs of code bases other than NVIDIA's MLPerf recipes
# (measurements/<codebase>, DESIGN.md §14): each read from a fetched mirror at a
# pinned commit by tools/measure/codebases/codebases_bench.py, e.g.
# CODEBASE_MIRRORS="--internevo /work/.mirror/InternLM+InternEvo/repo".
CODEBASE_MIRRORS ?= --internevo /work/.mirror/InternLM+InternEvo/repo \
	--flashattn /work/.mirror/Dao-AILab+flash-attention/repo --torchtitan /work/.mirror/pytorch+torchtitan/repo \
	--nanotron /work/.mirror/huggingface+nanotron/repo --fms-fsdp /work/.mirror/foundation-model-stack+fms-fsdp/repo
.PHONY: codebase-bench-data
codebase-bench-data:
	$(PYTHON) tools/measure/codebases/codebases_bench.py --out measurements $(CODEBASE_MIRRORS)

# NVIDIA DeepLearningExamples' PyTorch README tables (measurements/dle,
# DESIGN.md §14): training throughput and inference latency per model, GPU,
# GPUs, batch and precision, read from a bare mirror (fetch
# github:NVIDIA/DeepLearningExamples) at DLE_COMMIT. About 2 s; Debian's
# python3 with python3-yaml.
DLE_MIRROR ?= /work/.mirror/NVIDIA+DeepLearningExamples/repo
DLE_COMMIT ?= 729963dd47e7c8bd462ad10bfac7a7b0b604e6dd
.PHONY: dle-bench-data
dle-bench-data:
	$(PYTHON) tools/measure/dle/dle_bench.py --mirror $(DLE_MIRROR) --commit $(DLE_COMMIT) --out measurements/dle

# The rows of measurements/dle that tools/measure/dle/dle_predict.py builds
# (ConvNets' ResNet-50, ResNeXt-101, SE-ResNeXt-101 and EfficientNet
# training at 1 and 8 GPUs on V100 and A100) exported as the example trains
# them (cached in $XDG_CACHE_HOME/placer/dle; the first run exports 42
# steps, 15-45 s each on this project's machine) and predicted with placer
# eval (dp=8 for the 8-GPU rows); results.csv, summary.json, report.txt
# into measurements/dle, validation as aggregates only.
.PHONY: dle-bench
dle-bench: build venv-test
	nice -n 10 $(TORCH_PY) tools/measure/dle/dle_predict.py export
	$(TORCH_PY) tools/measure/dle/dle_predict.py report --placer $(BIN) \
		--placer-version "$$(git rev-parse --short HEAD 2>/dev/null)" --rows > measurements/dle/report.txt
	cat measurements/dle/report.txt

# The bench's fits test (planner/bench TestBenchRunsFit): every
# MLPerf submission that ran must be predicted to fit. make test runs it
# on the development part (its failures listed by row) and logs the
# validation part's count; this target makes a validation run told over
# fail it too (the issue's must-hold for both parts).
bench-fits: go-deps
	PLACER_BENCH_FITS=1 go test -count=1 -v -run TestBenchRunsFit ./planner/bench/

# One transformer block's per-GPU shard for each row of Megatron-LM's table
# timed on a GPU (BF16, CUDA events, median of 20 runs) against placer's
# prediction of it (layer_forward_s, layer_backward_s): one JSON object per
# row in out/layerbench.json, then the table (tools/measure/layerbench/README.md).
# Needs a CUDA GPU (the nine rows fit in 80 GB; not yet run on one) and a
# placer binary: it does not build one, so that it runs on a GPU machine
# without Go (make build elsewhere and bring bin/placer). There, name that
# machine's python: make layerbench TORCH_PY=python3. LAYERBENCH_FLAGS
# passes more flags (--rows 1.7B,462B, --case gpt:...,tp=..).
LAYERBENCH_FLAGS ?=
.PHONY: layerbench
layerbench:
	@test -x $(BIN) || { echo "layerbench: no $(BIN): run make build (where Go is) and bring it here"; exit 1; }
	@mkdir -p out
	PLACER=$(CURDIR)/$(BIN) $(TORCH_PY) tools/measure/layerbench/layerbench.py --json $(LAYERBENCH_FLAGS) > out/layerbench.json.tmp
	mv out/layerbench.json.tmp out/layerbench.json
	$(TORCH_PY) tools/measure/layerbench/layerbench.py --table out/layerbench.json

# Everything a lent GPU settles, in one command of at most about 8
# minutes (tools/measure/gpu/run.sh: layerbench, fidelity at full and quarter
# batch with profiles, hw bench, torchexport --profile on CUDA), with the
# GPU host's own torch (TORCH_PY=python3 there) and bin/ built here and
# carried (the host has no Go). Results in out/gpu, summary.json first.
# gpu-check runs the same plumbing on this machine's CPU at smoke-test
# sizes (no hw bench), in about a minute, the named steps included.
# Named steps, which a plain make gpu leaves out (its list is past the 8
# minutes already) and GPU_STEPS runs: sliding-window attention (GPT-OSS
# 120B's layers), latent attention (DeepSeek-V3's) and the layers of
# transformers and torchtitan on CUDA, about 5 minutes for the seven:
#   GPU_STEPS=profile-gpt-oss-window,eval-gpt-oss-window,window-attn,profile-deepseek-v3-mla,eval-deepseek-v3-mla,profile-llama1b-hf,profile-llama1b-titan make gpu
# sh tools/measure/gpu/run.sh --list prints every step (name, time limit, default
# or named, command) and runs none; make test's tools/measure/gpu/test_run.py
# checks it and every profile step's options against bin/placer.

.PHONY: gpu gpu-carry gpu-check
gpu:
	TORCH_PY=$(or $(GPU_PY),python3) sh tools/measure/gpu/run.sh out/gpu

# The binaries a device machine runs (it has no Go): stripped and gzipped
# into out/carry, about 12 MB each, for tools/measure/gpu/device.sh; and timm's
# wheel (about 2.5 MB) for make gpu's timm-val step.
gpu-carry: go-deps cuda-dev venv
	@mkdir -p out/carry
	$(GO) build -ldflags "-s -w -X main.version=$(VERSION)" -o out/carry/placer ./cmd/placer
	$(CUDA_ENV) $(GO) build -tags cuda -ldflags "-s -w -X main.version=$(VERSION)" -o out/carry/placer-cuda ./cmd/placer
	gzip -9 -f out/carry/placer out/carry/placer-cuda
	rm -f out/carry/timm-*.whl
	$(TORCH_PY) -m pip download --quiet --no-deps --only-binary=:all: -d out/carry $(filter timm==%,$(PY_TEST_PINS))

gpu-check: build venv
	GPU_DEVICE=cpu GPU_QUICK=1 GPU_NAMED=1 TORCH_PY=$(TORCH_PY) sh tools/measure/gpu/run.sh out/gpu-cpu

# placer's predictions against the real training step on a GPU
# (tools/measure/fidelity/fidelity.py; docs/hardware.md, "make fidelity"): for each
# zoo model (resnet50, inception_v3, vit_b_16, bert_base, gpt2_small) at
# its batch B and B/2, B/4, B/8, FP32, the step is exported with
# torchexport --profile, predicted by placer eval --host on the h100
# preset three ways (roofline; calibrated by placer calibrate
# --from-profile on the other models' measured ops; the measured op
# costs), and run for real in PyTorch (median step time, peak
# torch.cuda.max_memory_allocated, GPU-busy share from torch.profiler).
# Prints the table and writes out/fidelity.json (atomically). Needs a CUDA
# GPU (not yet run on one) and a placer binary: it does not build one, so
# that it runs on a GPU host without Go (make build elsewhere and bring
# bin/placer). There, name that host's python: make fidelity
# TORCH_PY=python3. FIDELITY_FLAGS passes more flags: --model NAME (repeat;
# or package.module:factory with --input-shape), --batches 32,8,
# --precision fp32 --precision bf16 (autocast), --hardware FILE, --steps N,
# --warmup N, --profile-steps N, --no-host,
# --work DIR (the graphs and profiles; default out/fidelity), --device cpu
# (the plumbing only, no GPU: the predictions are for an H100).
FIDELITY_FLAGS ?=

.PHONY: fidelity
fidelity:
	@test -x $(BIN) || { echo "fidelity: no $(BIN): run make build (where Go is) and bring it here"; exit 1; }
	@mkdir -p out
	PLACER=$(CURDIR)/$(BIN) $(TORCH_PY) tools/measure/fidelity/fidelity.py --out out/fidelity.json $(FIDELITY_FLAGS)

# timm's published training benchmark as a test bench (docs/timm-bench.md,
# measurements/timm/README.md): the committed sample (359 of the 834
# models both published RTX 3090 files hold, seeded and stratified by
# timm's module, checked against its rule first) exported as benchmark.py
# trains them (its batch and image size, FP16 autocast, NCHW and
# channels-last, nesterov SGD) one child process at a time under nice,
# cached by model and settings in $XDG_CACHE_HOME (~/.cache)/placer/timm
# (a rerun exports only what is missing: minutes), then each step
# predicted with placer eval --hardware rtx3090 and compared with
# train_step_time; the table of results and the parts' figures written
# to measurements/timm (results.csv, summary.json, report.txt). The
# first run exports 718 steps: about 3 CPU s each on this project's
# machine (measurements/timm/README.md). TIMM_EXPORT_FLAGS: e.g.
# --formats nchw, --budget SECONDS, --limit N.
TIMM_DIR          ?= measurements/timm
TIMM_EXPORT_FLAGS ?=
TIMM_REPORT_FLAGS ?= --rows
.PHONY: timm-bench
timm-bench: build venv-test
	$(TORCH_PY) tools/measure/timmbench/timmbench.py sample --check --dir $(TIMM_DIR)
	nice -n 10 $(TORCH_PY) tools/measure/timmbench/timmbench.py export --dir $(TIMM_DIR) $(TIMM_EXPORT_FLAGS)
	$(TORCH_PY) tools/measure/timmbench/timmbench.py report --dir $(TIMM_DIR) --placer $(BIN) \
		--placer-version "$$(git rev-parse --short HEAD 2>/dev/null)" $(TIMM_REPORT_FLAGS) > $(TIMM_DIR)/report.txt
	cat $(TIMM_DIR)/report.txt

# ======================================================================
# Developers' tools: tools/dev/, what developers run to check the
# project (the docs' runner, the frameworks' own code reading placer's
# exports, the exporter's and the runner's speed, the held-out check).
# ======================================================================

# The README's sample outputs made anew from the commands each one's
# marker names (tools/dev/readme: <!-- readme: COMMAND | options --> above a
# fence); its test (go test ./tools/dev/readme, in make test) fails when a
# sample drifts from what its command prints.
.PHONY: readme
readme: build
	$(GO) run ./tools/dev/readme -placer $(BIN) -write README.md

# Every command block of README.md and docs/*.md runs as written
# (tools/dev/readme/docs.go; a block is a fenced or indented block with a line
# that runs placer or make). make test runs the quick ones (go test
# ./tools/dev/readme's TestDocsCommands, a page to a scratch folder); a block
# marked <!-- docs: long --> (a search with a minutes budget, a report
# over many graphs, the frameworks' runs) is this target's, and its page
# names this target beside it. docs-long runs every block that is not
# skipped, quick ones included, page by page in order, so that a long
# block finds the files the blocks above it wrote; each block within 30
# minutes. It prints each block's exit, CPU and wall time.
# go run ./tools/dev/readme -docs -list README.md docs/*.md lists the blocks
# and how each is checked.
.PHONY: docs-long
docs-long: build
	$(GO) run ./tools/dev/readme -placer $(BIN) -docs -long README.md docs/*.md

# The runner's overhead per step against the same strategy by hand (DDP,
# fully_shard, torch.distributed.pipelining's Schedule1F1B) on 2 gloo
# processes: runner / hand per strategy, the median of paired repeats
# (docs/torch-plan.md#overhead; about 40 s).
bench-runner: venv
	PYTHONPATH=$(CURDIR)/python/placer_torch/tests/runner $(TORCH_PY) tools/dev/torchplan/bench_overhead.py --world 2 --repeats 7 --steps 10

# The frameworks' own code reading placer's exports (tools/dev/frameworks,
# docs/import.md#frameworks): torchtitan 0.2.2 (its last release with
# TOML job files) and DeepSpeed 0.19.8, with what they import, pinned:
# FRAMEWORKS_PINS is the set pip resolves for the two beside TORCH_PINS,
# installed with --no-deps into FRAMEWORKS_DIR (pip --target, on
# PYTHONPATH for the tests only; not into the virtualenv, whose packages
# the other tests share: datasets, pandas and tensorboard come with
# torchtitan) once per machine, again when $(FRAMEWORKS_DIR)/placer-pins
# differs. DeepSpeed is a source package built against the virtualenv's
# torch (--no-build-isolation; no ops compiled). Measured on this
# project's 2-core machine (2026-11-26, others' jobs running): 23 s to
# install, 351 MB (16 s and 386 MB with torchao). test-frameworks exports the plans with bin/placer and
# checks each with the framework's parsers and pipeline builders on a
# simulated world (torch's fake process group): about 30 s; the last step
# of test-python-venv. torchao 0.18.0 is torchtitan's float8 (for
# test-frameworks-run; its wheel also brings a top-level package named
# test, removed: on PYTHONPATH it would hide Python's own).
#
# test-frameworks-run: the frameworks train placer's plans on CPU
# processes with gloo, one step's loss and the next against the unsplit
# model's (tools/dev/frameworks/test_run.py, docs/frameworks.md): torchtitan
# 0.2.2's own trainer (tools/dev/frameworks/titan_cpu.py) on 4 processes for
# FSDP 4, TP 2 x FSDP 2, PP 2 x FSDP 2 (1F1B), PP 2 x 2 virtual stages x
# FSDP 2 (Interleaved1F1B) and FSDP 4 with float8, and DeepSpeed 0.19.8
# (tools/dev/frameworks/ds_run.py) for ZeRO-2 and ZeRO-3 on 2, a 2-stage
# pipeline on 2 and 2 stages x 2 replicas on 4; and torchtitan 0.3.0's
# torchtitan.train (tools/dev/frameworks/titan03_cpu.py: the device, SDPA on
# the CPU, FSDP's sum reduction, synthetic data) on the exported modules
# as their Run line says, FSDP 4, TP 2 x FSDP 2 and PP 2 x FSDP 2 (1F1B);
# each run a process group of its own with a timeout. Measured on this
# project's 2-core machine (2026-11-26, others' jobs running, load 4 to
# 5): 3 min 15 s (make's build included) before 0.3.0's runs, which add
# 92.5 s (2026-11-26, other jobs running). Not part of make test, whose
# CI run it would lengthen by that much: run it by hand, or add it to
# test-python-venv. torchtitan 0.2.2 imports tokenizers and
# huggingface_hub, which FRAMEWORKS_PINS leaves to the virtualenv of
# venv-test (transformers brings them): hence venv-test here.
FRAMEWORKS_PINS := torchtitan==0.2.2 deepspeed==0.19.8 tyro==1.0.17 docstring_parser==0.18.0 typeguard==4.6.1 tomli==2.5.0 \
                   torchdata==0.11.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 xxhash==4.1.0 pandas==3.1.1 \
                   pyarrow==26.0.1 python-dateutil==4.0.0 tzdata==2026.6 requests==2.34.2 certifi==2026.10.19.post1 \
                   charset-normalizer==3.5.3 urllib3==2.8.0 tensorboard==2.21.0 tensorboard-data-server==0.7.2 \
                   absl-py==2.5.1 grpcio==1.85.3 Markdown==3.11.3 Werkzeug==3.1.9 hjson==3.1.0 msgpack==1.2.4 \
                   ninja==1.13.2 psutil==7.2.2 py-cpuinfo==9.0.0 einops==0.8.2 torchao==0.18.0
FRAMEWORKS_DIR  ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/placer/frameworks
.PHONY: venv-frameworks test-frameworks test-frameworks-run test-frameworks-run-ci
venv-frameworks: venv
	@if [ "$$(cat $(FRAMEWORKS_DIR)/placer-pins 2>/dev/null)" != "$(FRAMEWORKS_PINS)" ]; then \
		echo "venv-frameworks: installing torchtitan 0.2.2, DeepSpeed 0.19.8 and what they import into $(FRAMEWORKS_DIR)"; \
		rm -rf $(FRAMEWORKS_DIR) && \
		$(TORCH_PY) -m pip install --disable-pip-version-check -q --no-deps --no-build-isolation --use-pep517 --target $(FRAMEWORKS_DIR) $(FRAMEWORKS_PINS) && \
		rm -rf $(FRAMEWORKS_DIR)/test && \
		echo "$(FRAMEWORKS_PINS)" > $(FRAMEWORKS_DIR)/placer-pins; \
	fi

test-frameworks: build venv-frameworks
	PLACER=$(CURDIR)/$(BIN) PLACER_FRAMEWORKS=$(FRAMEWORKS_DIR) $(TORCH_PY) -m unittest discover -v -s tools/dev/frameworks -p 'test_exports.py'

test-frameworks-run: build venv-test venv-frameworks venv-frameworks-03
	PLACER=$(CURDIR)/$(BIN) PLACER_FRAMEWORKS=$(FRAMEWORKS_DIR) PLACER_FRAMEWORKS03=$(FRAMEWORKS03_DIR) $(TORCH_PY) -m unittest discover -v -s tools/dev/frameworks -p 'test_run.py'

# Two of test-frameworks-run's runs: a pipeline through each framework's
# own trainer, torchtitan 0.2.2's PP 2 x FSDP 2 (1F1B) on 4 gloo
# processes and DeepSpeed 0.19.8's 2-stage PipelineModule from the
# exported _pipeline.py on 2, each loss against the unsplit model's
# (46-50 s on 2 idle cores, three runs of 2026-11-26). make test does not
# run them: a fresh clone's make test with them took 541 s on 2 idle cores
# (2026-11-26, session 7), and CI, which also installs what the caches
# lack (about 2 minutes more in the last measured landing: 605 s against
# 485 here), has 10 minutes. test-python-debian already leaves
# the runner's test_runner.py (35 s on torch 1.13; test-python-venv
# runs it on current torch) to test-python-debian-runner.
test-frameworks-run-ci: build venv-frameworks
	PLACER=$(CURDIR)/$(BIN) PLACER_FRAMEWORKS=$(FRAMEWORKS_DIR) $(TORCH_PY) -m unittest discover -v -s tools/dev/frameworks -p 'test_run.py' \
		-k '*TorchtitanRuns.test_pp_fsdp' -k '*DeepSpeedRuns.test_pipeline'

# torchtitan 0.3.0, PyPI's newest, reading placer's --to torchtitan@0.3
# exports (the default for --to torchtitan; tools/dev/frameworks/check03.py
# and test_exports_03.py, docs/frameworks.md): a config module, no TOML.
# FRAMEWORKS03_PINS is the set pip resolves for torchtitan 0.3.0 beside
# TORCH_PINS less what the virtualenv has at that version (torch 2.14.1
# included: 0.3.0 pins no torch and imports on it) and less wandb, which
# torchtitan imports only with metrics.enable_wandb; tokenizers, h11,
# anyio, idna, PyYAML, safetensors and tqdm, which its trainer imports and
# which only venv-test's transformers had brought (make venv has none of
# them: on a virtualenv of TORCH_PINS alone, check03 stopped at
# "No module named 'tokenizers'"). datasets 4.7.0
# (0.3.0 wants < 4.8) and its huggingface_hub 1.33.0 and fsspec
# 2026.2.0 differ from FRAMEWORKS_PINS' and the virtualenv's, so 0.3.0
# has a --target folder of its own, FRAMEWORKS03_DIR, on PYTHONPATH for
# these tests only; torchtitan 0.2.2's stays as it is. Measured on this
# project's 2-core machine (2026-11-26, others' jobs running): 18 s to
# install, 387 MB; test-frameworks-03 21 to 41 s (9 to 12 CPU s), which CI's
# 10 minutes (make test took 9 min 11 s) have no room for: not part of
# make test; run it by hand.
FRAMEWORKS03_PINS := torchtitan==0.3.0 tyro==1.0.17 docstring_parser==0.18.0 typeguard==4.6.1 spmd_types==0.2.3 \
                     torch_checkpointing==0.1.1 torchdata==0.11.0 einops==0.8.2 datasets==4.7.0 dill==0.4.0 \
                     multiprocess==0.70.18 xxhash==4.1.0 pandas==3.1.1 pyarrow==26.0.1 python-dateutil==4.0.0 tzdata==2026.6 \
                     requests==2.34.2 certifi==2026.10.19.post1 charset-normalizer==3.5.3 urllib3==2.8.0 fsspec==2026.2.0 \
                     huggingface_hub==1.33.0 httpx==0.28.1 httpcore==1.0.9 sniffio==1.3.1 aiohttp==3.14.5 aiohappyeyeballs==2.7.1 \
                     aiosignal==1.4.0 attrs==26.1.0 frozenlist==1.8.0 multidict==7.2.1 propcache==0.5.4 yarl==1.25.1 \
                     tensorboard==2.21.0 tensorboard-data-server==0.7.2 absl-py==2.5.1 grpcio==1.85.3 Markdown==3.11.3 Werkzeug==3.1.9 \
                     tokenizers==0.23.3 h11==0.16.0 anyio==4.16.0 idna==3.20 PyYAML==6.0.4 safetensors==0.8.0 tqdm==4.70.1
FRAMEWORKS03_DIR  ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/placer/frameworks-03
.PHONY: venv-frameworks-03 test-frameworks-03
venv-frameworks-03: venv
	@if [ "$$(cat $(FRAMEWORKS03_DIR)/placer-pins 2>/dev/null)" != "$(FRAMEWORKS03_PINS)" ]; then \
		echo "venv-frameworks-03: installing torchtitan 0.3.0 and what it imports into $(FRAMEWORKS03_DIR)"; \
		rm -rf $(FRAMEWORKS03_DIR) && \
		$(TORCH_PY) -m pip install --disable-pip-version-check -q --no-deps --target $(FRAMEWORKS03_DIR) $(FRAMEWORKS03_PINS) && \
		echo "$(FRAMEWORKS03_PINS)" > $(FRAMEWORKS03_DIR)/placer-pins; \
	fi

test-frameworks-03: build venv-frameworks-03
	PLACER=$(CURDIR)/$(BIN) PLACER_FRAMEWORKS03=$(FRAMEWORKS03_DIR) $(TORCH_PY) -m unittest discover -v -s tools/dev/frameworks -p 'test_exports_03.py'

# Megatron-Core's own configuration classes reading placer's --to megatron
# exports (tools/dev/frameworks/megatron_check.py and test_megatron.py;
# docs/cluster-scale.md, "Running a plan"): megatron-core 0.16.1, PyPI's
# newest, installed with --no-deps into MEGATRON_DIR (pip --target, on
# PYTHONPATH for these tests only; what it imports, torch, numpy and
# packaging, is the virtualenv's; no Transformer Engine, which its config
# classes do not need) once per machine, again when
# $(MEGATRON_DIR)/placer-pins differs. Its wheel has megatron/core, not
# megatron/training: megatron_check.py does what Megatron-LM
# core_v0.16.1's pretrain_gpt.py does with its arguments, on the flags
# and defaults of workloads/export/plans/testdata/megatron-lm-core_v0.16.1-args.txt.
# Measured on this project's 2-core machine (2026-11-26, others' jobs
# running, load 7): 2 s to install, 17 MB; test-megatron 30 s, 17 CPU s
# (every plan of placer report megatron, the docs' examples, every
# setting); the last step of make test's first Python group
# (test-python-venv-tools).
MEGATRON_PINS := megatron-core==0.16.1
MEGATRON_DIR  ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/placer/megatron
.PHONY: venv-megatron test-megatron
venv-megatron: venv
	@if [ "$$(cat $(MEGATRON_DIR)/placer-pins 2>/dev/null)" != "$(MEGATRON_PINS)" ]; then \
		echo "venv-megatron: installing $(MEGATRON_PINS) into $(MEGATRON_DIR)"; \
		rm -rf $(MEGATRON_DIR) && \
		$(TORCH_PY) -m pip install --disable-pip-version-check -q --no-deps --target $(MEGATRON_DIR) $(MEGATRON_PINS) && \
		echo "$(MEGATRON_PINS)" > $(MEGATRON_DIR)/placer-pins; \
	fi

test-megatron: build venv-megatron
	PLACER=$(CURDIR)/$(BIN) PLACER_MEGATRON=$(MEGATRON_DIR) PYTHONPATH=$(MEGATRON_DIR) $(TORCH_PY) -m unittest discover -v -s tools/dev/frameworks -p 'test_megatron.py'

# Megatron-Bridge 0.5.0's own override machinery and configuration
# classes reading placer's --to megatron-bridge exports
# (tools/dev/frameworks/bridge_check.py says what of Bridge runs and what
# does not, and test_bridge.py; docs/frameworks.md): BRIDGE_PINS
# installed with --no-deps (and --ignore-requires-python: Bridge 0.5.0
# asks Python 3.12, the virtualenv's is 3.11) into BRIDGE_DIR once per
# machine, again when $(BRIDGE_DIR)/placer-pins differs: Bridge with the
# megatron-core of its release (0.18.0, which has the megatron.training
# config classes Bridge's ConfigContainer extends), OmegaConf and Hydra
# (its overrides), and what its dataset configs import (datasets and
# its pyarrow, pandas, dill, multiprocess, xxhash, dateutil). No
# Transformer Engine. Measured on this project's 2-core machine
# (2026-11-27, others' jobs running): 20 s to install, 302 MB;
# test-bridge 18 to 31 s (its "Ran 3 tests in"), a step of make test's
# first Python group (test-python-venv-tools).
BRIDGE_PINS := megatron-bridge==0.5.0 megatron-core==0.18.0 omegaconf==2.3.0 hydra-core==1.3.2 antlr4-python3-runtime==4.9.3 \
	datasets==5.2.0 pyarrow==26.0.1 pandas==3.1.1 dill==0.4.1 multiprocess==0.70.19 xxhash==4.1.0 python-dateutil==4.0.0
BRIDGE_DIR  ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/placer/bridge
.PHONY: venv-bridge test-bridge
venv-bridge: venv
	@if [ "$$(cat $(BRIDGE_DIR)/placer-pins 2>/dev/null)" != "$(BRIDGE_PINS)" ]; then \
		echo "venv-bridge: installing megatron-bridge 0.5.0 and what its config modules import into $(BRIDGE_DIR)"; \
		rm -rf $(BRIDGE_DIR) && \
		$(TORCH_PY) -m pip install --disable-pip-version-check -q --no-deps --ignore-requires-python --target $(BRIDGE_DIR) $(BRIDGE_PINS) && \
		echo "$(BRIDGE_PINS)" > $(BRIDGE_DIR)/placer-pins; \
	fi

test-bridge: build venv-bridge
	PLACER=$(CURDIR)/$(BIN) PLACER_BRIDGE=$(BRIDGE_DIR) PYTHONPATH=$(BRIDGE_DIR) $(TORCH_PY) -m unittest discover -v -s tools/dev/frameworks -p 'test_bridge.py'

# The exporter's speed target: ResNet-50's training step exported in at
# most 60 s (whole process, median of 3), and every zoo graph imported in
# under 1 s (BenchmarkZooImport; needs make zoo first).
.PHONY: bench-export
bench-export: venv
	$(TORCH_PY) tools/dev/torchexport/bench.py --model resnet50 --runs 3 --limit 60
	$(GO) test ./workloads/export -run '^$$' -bench ZooImport -benchmem

# docs/import.md's closing note: placer baselines (30 s per search method)
# and a 5-minute placer search on the transformers at 4 and 8 GPUs, into
# out/closing. About 50 minutes on 2 cores; needs make zoo first.
ZOO_PLACE_MODELS ?= bert_base gpt2_small
.PHONY: zoo-place
zoo-place: build
	mkdir -p out/closing
	for m in $(ZOO_PLACE_MODELS); do for n in 4 8; do \
		$(BIN) baselines --graph $(ZOO_DIR)/$$m.json --gpus $$n --time 30s --seed 1 > out/closing/$$m-$$n-baselines.txt || exit 1; \
		$(BIN) search --graph $(ZOO_DIR)/$$m.json --gpus $$n --time 5m --seed 1 -q --out out/closing/$$m-$$n-search.json > out/closing/$$m-$$n-search.txt || exit 1; \
	done; done

# The held-out check (docs/held-out.md): the thirteen held-out
# models (tiny transformers, timm and hand-written ones) at 2 and 4 GPUs,
# each exported, searched (--cpu 10s), exported as a torch plan, evaluated
# and run with --check on gloo CPU processes (at most 4), with every row of
# the search's table (placer search --rows); HELD_OUT_FLAGS='--models zoo --gpus 2,4'
# checks the zoo's instead (exported at their batch; only zoo_mlp and zoo_cnn
# run unless --zoo-run names more). Long (about 45 minutes on 2 shared
# cores with four rows a cell; every row adds 3 to 11 s of run each, about
# 15 rows a cell): not part of make test.
HELD_OUT_DIR   ?= out/held-out
HELD_OUT_FLAGS ?= --gpus 2,4 --rows
.PHONY: held-out
held-out: build venv-test
	mkdir -p $(HELD_OUT_DIR)
	$(TORCH_PY) tools/dev/torchplan/heldout.py $(HELD_OUT_FLAGS) --work $(HELD_OUT_DIR) --json $(HELD_OUT_DIR)/held-out.json | tee $(HELD_OUT_DIR)/held-out.txt

# ======================================================================
# The models embedded in placer, trained anew (methods/gdp, methods/regal).
# ======================================================================

# The default model embedded in placer (methods/gdp/defaultmodel), which `placer
# infer` and `placer finetune` use without --model: the small policy
# pre-trained on 2, 4 and 8 GPUs over trxl2, wavenet2x18 and the 20
# training graphs of 24 REGAL synthetic graphs (all four families), from a
# fixed seed and a fixed step count, so the same placer gives the same file.
# A few minutes on 2 CPU cores. Rebuild placer afterwards to embed it.
DEFAULT_MODEL  := methods/gdp/defaultmodel/data/default.policy
DM_WORK        := out/default-model
DM_STEPS       ?= 5000

.PHONY: default-model
default-model: go-deps
	rm -rf $(DM_WORK) && mkdir -p $(DM_WORK)
	$(GO) run ./cmd/placer workloads synth --family all --count 24 --seed 1 -o $(DM_WORK)/synth
	$(GO) run ./cmd/placer pretrain --workloads trxl2,wavenet2x18 --graphs $(DM_WORK)/synth/train \
		--gpus 2 --extra-gpus 4,8 --policy small --seed 1 --samples 16 --warmup 1980 --steps $(DM_STEPS) \
		--checkpoint-every 500 --out $(DM_WORK)/default.policy -q
	cp $(DM_WORK)/default.policy $(DEFAULT_MODEL)

# go-scored's default move head (methods/gdp/defaultmodel/data/default.head), which
# go-scored-pretrained, go-scored-prior, go-scored-zero-shot and placer
# infer's refinement start from: pre-trained (placer pretrain --scored) over
# the 100 training graphs of 120 REGAL synthetic graphs, every built-in
# workload of the rnnlm, inception and wavenet families, and the msr-fiddle
# graphs beside the checkout (../shared/data, when there: inceptionv3 and
# resnet50; its gnmt graphs are held out), each on 2, 4 and 8 GPUs (334
# graphs; a graph no quick baseline fits is skipped), 12,800 visits of
# 2,000 evaluations each (about 38 per graph), from a fixed seed; its
# features read go-scored's fixed untrained network. About 80 CPU minutes,
# 1 h 41 min of training (the embedded head: 6,400 visits, then resumed to
# 12,800 with DH_RESUME=1, which gives the same head as one run: visit i's
# seed depends only on the seed and i). The families gnmt, trxl and amoebanet are never seen: they
# are the held-out families of the zero-shot measurement (docs/search.md).
# Resumable: DH_RESUME=1 continues from the head in $(DH_WORK). Rebuild
# placer afterwards to embed it.
DEFAULT_HEAD := methods/gdp/defaultmodel/data/default.head
DH_WORK      := out/default-head
DH_VISITS    ?= 12800
DH_WORKLOADS := rnnlm2,rnnlm4,rnnlm8,inception_b32,inception_b64,wavenet2x18,wavenet4x36,wavenet5,wavenet10
DH_FIDDLE    := $(wildcard ../shared/data/msr-fiddle)
comma        := ,
DH_GRAPHS    := $(DH_WORK)/synth/train$(if $(DH_FIDDLE),$(comma)$(DH_FIDDLE) --hold-out gnmt)

.PHONY: default-head
default-head: go-deps
ifeq ($(DH_RESUME),)
	rm -rf $(DH_WORK) && mkdir -p $(DH_WORK)
	$(GO) run ./cmd/placer workloads synth --family all --count 120 --seed 1 -o $(DH_WORK)/synth
	$(GO) run ./cmd/placer pretrain --scored --workloads $(DH_WORKLOADS) --graphs $(DH_GRAPHS) \
		--gpus 2 --extra-gpus 4,8 --seed 1 --steps $(DH_VISITS) --visit-evals 2000 --out $(DH_WORK)/default.head -q
else
	$(GO) run ./cmd/placer pretrain --scored --workloads $(DH_WORKLOADS) --graphs $(DH_GRAPHS) \
		--gpus 2 --extra-gpus 4,8 --seed 1 --steps $(DH_VISITS) --visit-evals 2000 --resume $(DH_WORK)/default.head --out $(DH_WORK)/default.head -q
endif
	cp $(DH_WORK)/default.head $(DEFAULT_HEAD)

# The default REGAL model embedded in placer (methods/regal/defaultmodel), which the
# methods regal and regal-zero-shot use: REGAL's policy trained for step
# time on 2 V100s with REGAL's synchronous transfers, over the 100 training
# graphs of 120 REGAL synthetic graphs (all four families, seed 1) and 2
# augmented copies of wavenet2x18, from a fixed seed and step count, so the
# same placer gives the same file. About 7 minutes on 2 shared CPU cores
# (docs/regal.md). Rebuild placer afterwards to embed it.
REGAL_MODEL := methods/regal/defaultmodel/data/default.regal
RM_WORK     := out/regal-model
RM_STEPS    ?= 600

.PHONY: regal-model
regal-model: go-deps
	rm -rf $(RM_WORK) && mkdir -p $(RM_WORK)
	$(GO) run ./cmd/placer workloads synth --family all --count 120 --seed 1 -o $(RM_WORK)/synth
	$(GO) run ./cmd/placer regal train --graphs $(RM_WORK)/synth/train --workloads wavenet2x18 --copies 2 \
		--gpus 2 --sync-transfers --seed 1 --steps $(RM_STEPS) --out $(RM_WORK)/default.regal -q > $(RM_WORK)/train.txt
	cat $(RM_WORK)/train.txt
	cp $(RM_WORK)/default.regal $(REGAL_MODEL)

# The default REGAL model for peak memory (methods/regal/defaultmodel/data/
# peak-memory.regal), which regal and regal-zero-shot use on a problem
# whose objective is peak memory: the recipe of regal-model with the
# reward on the largest per-GPU peak (--objective peak-memory). About 5
# minutes on 2 shared CPU cores (docs/regal.md). Rebuild placer afterwards
# to embed it.
REGAL_MODEL_MEMORY := methods/regal/defaultmodel/data/peak-memory.regal
RMM_WORK           := out/regal-model-peak
RMM_STEPS          ?= 600
RMM_EVALS          ?= 1000

.PHONY: regal-model-memory
regal-model-memory: go-deps
	rm -rf $(RMM_WORK) && mkdir -p $(RMM_WORK)
	$(GO) run ./cmd/placer workloads synth --family all --count 120 --seed 1 -o $(RMM_WORK)/synth
	$(GO) run ./cmd/placer regal train --graphs $(RMM_WORK)/synth/train --workloads wavenet2x18 --copies 2 \
		--gpus 2 --sync-transfers --seed 1 --steps $(RMM_STEPS) --evaluations $(RMM_EVALS) --objective peak-memory \
		--out $(RMM_WORK)/peak-memory.regal -q > $(RMM_WORK)/train.txt
	cat $(RMM_WORK)/train.txt
	cp $(RMM_WORK)/peak-memory.regal $(REGAL_MODEL_MEMORY)

# The transfer experiment of GDP fig. 2 / GO fig. 5 (placer report
# generalization, docs/transfer.md): each of the six families held out in
# turn, pre-trained on the other five's smallest workloads; expert, best
# baseline, GO-one, zero-shot and fine-tuned (50 steps) on its own. About
# 20 minutes on 2 CPU cores (measured while other jobs ran). Resumable: finished families stay in GEN_DIR, and
# running it again after an interruption continues where it stopped. The
# second command only reads the finished families back (as JSON).
GEN_DIR   ?= out/generalization
GEN_FLAGS ?= --gpus 2 --seed 1 --samples 16 --policy small --pretrain-steps 300 --search-steps 100 --finetune-steps 50

.PHONY: generalization
generalization: build
	mkdir -p $(GEN_DIR)
	$(BIN) report generalization $(GEN_FLAGS) --dir $(GEN_DIR) --plot $(GEN_DIR)/generalization.svg > $(GEN_DIR)/generalization.txt
	$(BIN) report generalization $(GEN_FLAGS) --dir $(GEN_DIR) --json -q > $(GEN_DIR)/generalization.json
	cat $(GEN_DIR)/generalization.txt

# brkga-tuned's settings (REGAL's tuned-BRKGA baseline): the grid of
# methods/brkga/tuned.DefaultGrid (81 settings) on 4 synthetic training graphs at
# 5,000 evaluations per run (the budget the method is compared at; tuned at
# 1,000 it chose settings that lose to default BRKGA at 5,000, docs/regal.md),
# both objectives, REGAL's synchronous transfers, written to
# methods/brkga/tuned/params.json (embedded: rebuild after). About 4 CPU minutes
# (docs/regal.md has the measured wall time).
.PHONY: brkga-tune
brkga-tune:
	$(GO) build -o bin/placer-tune ./cmd/placer
	nice -n 10 bin/placer-tune tune-brkga --train-graphs 4 --evaluations 5000 --sync-transfers --seed 0 --out methods/brkga/tuned/params.json
