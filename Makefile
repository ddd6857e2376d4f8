# offcc — GNU make targets. See `make help`.

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c

# Go 1.26 lives in /usr/local/go/bin on the build machines.
export PATH := /usr/local/go/bin:$(PATH)
GO ?= go

LLVM_BIN ?= /usr/lib/llvm-22/bin
LLVM_LIB ?= /usr/lib/llvm-22/lib
OFFLOAD_FLAGS := -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu
# Budget per Go fuzz target in `make test` (47 targets: under 2 minutes in
# all; `go test` runs their seed corpora and the inputs fuzzing found, kept
# in testdata/fuzz, every time). A longer hunt: FUZZTIME=5m make fuzz.
FUZZTIME ?= 1s
# Timeout of each test binary in `make test` (e2e takes about 20 minutes on
# 2 CPUs with a -race offcc beside the other packages: 40m guards against
# hangs, not slowness).
TEST_TIMEOUT ?= 40m
# 1 makes tests fail, not skip, when an LLVM 22 tool is missing (CI sets it;
# see internal/llvmtest).
OFFCC_REQUIRE_LLVM ?=
# 1 makes the CUDA tests fail, not skip, when NVIDIA's toolkit (ptxas,
# fatbinary, nvlink, cuobjdump) is missing (CI sets it; make deps-cuda
# installs Debian's).
OFFCC_REQUIRE_CUDA ?=
# 1 makes the tests with clang 19 fail, not skip, when LLVM 19 or its
# privately unpacked OpenMP runtime (/opt/offcc/libomp-19) is missing (CI
# sets it; make deps installs both).
OFFCC_REQUIRE_LLVM19 ?=

# make install: offcc, offcc++ and the binutils links go to $(PREFIX)/bin,
# the multi-call links to $(PREFIX)/libexec/offcc (off PATH, where they
# would shadow LLVM's own tools), the CMake toolchain file to
# $(PREFIX)/share/offcc/cmake, the man page docs/offcc.1 to
# $(PREFIX)/share/man/man1. DESTDIR is prepended to all of them.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(DESTDIR)$(PREFIX)/bin
LIBEXECDIR = $(DESTDIR)$(PREFIX)/libexec/offcc
CMAKEDIR = $(DESTDIR)$(PREFIX)/share/offcc/cmake
MAN1DIR = $(DESTDIR)$(PREFIX)/share/man/man1
# The executable make install installs as offcc: bin/offcc, built first,
# unless INSTALL_EXE names another (the e2e tests install the compiler
# under test).
INSTALL_EXE ?=
# LLVM's binutils, linked beside offcc so that CMake (and anything else that
# looks beside the compiler) finds LLVM 22's, not an older llvm-ar on PATH.
BINUTILS := llvm-ar llvm-ranlib llvm-nm llvm-objcopy llvm-objdump llvm-strip
# Names under which offcc behaves as an LLVM tool (see cmd/offcc).
MULTICALL := llvm-offload-binary clang-offload-packager clang-offload-bundler

.PHONY: all build deps deps-cuda demo test vet gotest fuzz e2e bench install man clean help

all: build

help:
	@echo 'make build   build bin/offcc, the bin/offcc++ symlink and links to LLVM 22 binutils (llvm-ar ...) beside them (also: make all)'
	@echo 'make deps    check/install the LLVM 22 and 19 Debian packages (apt-get when root)'
	@echo 'make deps-cuda  install NVIDIA'"'"'s CUDA toolkit 11.8 from Debian non-free (root; 1.6 GB download)'
	@echo 'make demo    build and run examples/hello_offload.c with OpenMP host offload'
	@echo 'make test    go vet, go test -race ./... (e2e against a -race offcc), fuzz each Fuzz* for $(FUZZTIME)'
	@echo 'make e2e     only the end-to-end tests (e2e/), against bin/offcc'
	@echo 'make bench   run scripts/bench-*.sh (offcc vs clang-22 timings)'
	@echo 'make install install offcc, offcc++, links, the CMake toolchain file and the man page under PREFIX=$(PREFIX) (DESTDIR honoured)'
	@echo 'make man     regenerate docs/offcc.1 from package manual (go generate ./manual)'
	@echo 'make clean   remove build outputs'

# go build is incremental, so always ask it. CGO_ENABLED=0: offcc has no C
# code of its own (only net's resolver would link libc), and a static
# executable starts without the dynamic linker: about 100 fewer page
# faults per process, which every compile and warm hit pays
# (docs/benchmarks.md).
build:
	@mkdir -p bin
	CGO_ENABLED=0 $(GO) build -o bin/offcc ./cmd/offcc
	ln -sfn offcc bin/offcc++
	for t in $(BINUTILS); do ln -sfn $(LLVM_BIN)/$$t bin/$$t; done

# The multi-call links are relative (../../bin/offcc), so a DESTDIR tree
# works where it is, too.
install: $(if $(INSTALL_EXE),,build)
	install -d "$(BINDIR)" "$(LIBEXECDIR)" "$(CMAKEDIR)" "$(MAN1DIR)"
	install -m 755 "$(or $(INSTALL_EXE),bin/offcc)" "$(BINDIR)/offcc"
	ln -sfn offcc "$(BINDIR)/offcc++"
	for t in $(BINUTILS); do ln -sfn "$(LLVM_BIN)/$$t" "$(BINDIR)/$$t"; done
	for t in $(MULTICALL); do ln -sfn ../../bin/offcc "$(LIBEXECDIR)/$$t"; done
	install -m 644 cmake/offcc-toolchain.cmake "$(CMAKEDIR)/offcc-toolchain.cmake"
	install -m 644 docs/offcc.1 "$(MAN1DIR)/offcc.1"

# docs/offcc.1 is committed; manual's tests fail when it is stale.
man:
	$(GO) generate ./manual

deps:
	@scripts/deps.sh

deps-cuda:
	@scripts/deps-cuda.sh

demo: deps build
	bin/offcc $(OFFLOAD_FLAGS) examples/hello_offload.c -o bin/hello_offload
	OMP_TARGET_OFFLOAD=MANDATORY LD_LIBRARY_PATH=$(LLVM_LIB) bin/hello_offload

# (CGO_ENABLED=0 as make build: the two share their compiled packages.)
vet:
	CGO_ENABLED=0 $(GO) vet ./...

# The e2e tests drive a race-instrumented offcc (bin/race/offcc), so data
# races in the parallel job graph fail the tests (GORACE exitcode=66).
gotest:
	@mkdir -p bin/race
	$(GO) build -race -o bin/race/offcc ./cmd/offcc
	ln -sfn offcc bin/race/offcc++
	OFFCC=$(CURDIR)/bin/race/offcc GORACE="exitcode=66 halt_on_error=1 atexit_sleep_ms=0" \
		OFFCC_REQUIRE_LLVM=$(OFFCC_REQUIRE_LLVM) OFFCC_REQUIRE_CUDA=$(OFFCC_REQUIRE_CUDA) \
		OFFCC_REQUIRE_LLVM19=$(OFFCC_REQUIRE_LLVM19) \
		$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...

fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) scripts/fuzz.sh

test: deps build vet gotest fuzz

e2e: build
	OFFCC=$(CURDIR)/bin/offcc $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./e2e

bench: build
	@for s in scripts/bench-*.sh; do echo "== $$s"; bash "$$s"; done

clean:
	rm -rf bin
