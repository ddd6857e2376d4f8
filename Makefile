# offcc — GNU make targets. See `make help`.

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c

# Go 1.26 lives in /usr/local/go/bin on the build machines.
export PATH := /usr/local/go/bin:$(PATH)
GO ?= go

LLVM_BIN ?= /usr/lib/llvm-22/bin
LLVM_LIB ?= /usr/lib/llvm-22/lib
OFFLOAD_FLAGS := -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu
# Budget per Go fuzz target in `make test`.
FUZZTIME ?= 5s
# Timeout of each test binary in `make test`.
TEST_TIMEOUT ?= 10m
# 1 makes tests fail, not skip, when an LLVM 22 tool is missing (CI sets it;
# see internal/llvmtest).
OFFCC_REQUIRE_LLVM ?=

.PHONY: all build deps demo test vet gotest fuzz e2e bench clean help

all: build

help:
	@echo 'make build   build bin/offcc and the bin/offcc++ symlink (also: make all)'
	@echo 'make deps    check/install the LLVM 22 Debian packages (apt-get when root)'
	@echo 'make demo    build and run examples/hello_offload.c with OpenMP host offload'
	@echo 'make test    go vet, go test -race ./... (e2e against a -race offcc), fuzz each Fuzz* for $(FUZZTIME)'
	@echo 'make e2e     only the end-to-end tests (e2e/), against bin/offcc'
	@echo 'make bench   run scripts/bench-*.sh (offcc vs clang-22 timings)'
	@echo 'make clean   remove build outputs'

# go build is incremental, so always ask it.
build:
	@mkdir -p bin
	$(GO) build -o bin/offcc ./cmd/offcc
	ln -sfn offcc bin/offcc++

deps:
	@scripts/deps.sh

demo: deps build
	bin/offcc $(OFFLOAD_FLAGS) examples/hello_offload.c -o bin/hello_offload
	OMP_TARGET_OFFLOAD=MANDATORY LD_LIBRARY_PATH=$(LLVM_LIB) bin/hello_offload

vet:
	$(GO) vet ./...

# The e2e tests drive a race-instrumented offcc (bin/race/offcc), so data
# races in the parallel job graph fail the tests (GORACE exitcode=66).
gotest:
	@mkdir -p bin/race
	$(GO) build -race -o bin/race/offcc ./cmd/offcc
	ln -sfn offcc bin/race/offcc++
	OFFCC=$(CURDIR)/bin/race/offcc GORACE="exitcode=66 halt_on_error=1" \
		OFFCC_REQUIRE_LLVM=$(OFFCC_REQUIRE_LLVM) \
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
