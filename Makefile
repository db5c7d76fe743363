# manejo — ZARC-NM remote-sensing indicators. `make help` lists the targets.
SHELL        := /bin/bash
# Debian's Go tarball install lives here; fresh shells may not have it on PATH.
export PATH  := $(PATH):/usr/local/go/bin
.DEFAULT_GOAL := help
GO           ?= go
BIN          := bin/manejo
DEMO_DIR     ?= build/demo
# Pure packages (no cgo) run under the race detector, with -short: every test
# runs, the accuracy harnesses on their small worlds (same code, same
# concurrency, a fraction of their CPU at full size under -race). All
# packages, the pure ones included, then run in full without it, so every
# assertion and threshold is checked. A listed folder that does not exist
# (yet) is left out.
PURE         := tillage coverage classify spectral zarc internal/num
PURE_PKGS    := $(foreach p,$(PURE),$(if $(wildcard $(p)/*.go),./$(p)/...))
# Developer tools, pinned, installed by scripts/setup.sh (not on PATH).
STATICCHECK  := bin/tools/staticcheck

.PHONY: help setup build test bench demo accuracy golden lint stats clean

help: ## List targets
	@awk 'BEGIN{FS=":.*?## "} /^[a-z-]+:.*?## /{printf "  %-10s %s\n",$$1,$$2}' $(MAKEFILE_LIST)

setup: ## Install GDAL, pkg-config and Chromium with apt when missing, then Go modules and the pinned staticcheck (idempotent)
	@scripts/setup.sh

build: setup ## Build bin/manejo
	$(GO) build -trimpath -ldflags "-X main.version=$$(git describe --tags --always --dirty 2>/dev/null || echo dev)" -o $(BIN) ./cmd/manejo

lint: setup ## go vet, staticcheck (pinned by setup) and go.mod/go.sum tidy
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(GO) mod tidy -diff

# The pipeline package's end-to-end tests take most of the suite's time: they
# start first, in a go test of their own beside the race-detector run of the
# pure packages and then the other packages, so their waits (leases, retries,
# child processes) overlap other work; four at a time (-parallel 4, not the
# two cores' 2), as their CPU is mostly in child manejo processes and their
# time partly in waits. The target fails when any of them does.
test: lint ## make lint, then unit tests (race detector on the pure packages)
	$(GO) test -count=1 -parallel 4 -timeout 30m ./pipeline/ & pipeline=$$!; \
	$(GO) test -race -short -count=1 -timeout 30m $(PURE_PKGS) && \
	$(GO) test -count=1 -timeout 30m $$($(GO) list ./... | grep -v -E '/pipeline$$'); rest=$$?; \
	wait $$pipeline; pipe=$$?; \
	[ $$rest -eq 0 ] && [ $$pipe -eq 0 ]

bench: setup ## Benchmarks of every stage (ns/op, allocs, custom metrics)
	$(GO) test -run='^$$' -bench=. -benchmem ./...

accuracy: setup ## Accuracy harnesses on synthetic fields with known truth (tillage, coverage)
	$(GO) test -tags research -count=1 -run 'Accuracy' -v ./tillage/ ./coverage/ -accuracy

demo: build ## Run the pipeline on built-in sample data and print the result
	@scripts/demo.sh $(BIN) $(DEMO_DIR)

golden: setup ## Rewrite golden files (grid testdata, the SINM golden payload, the schema tables of docs/outputs.md)
	$(GO) test ./grid/ ./export/ ./sinm/ -update

stats: ## Code statistics with go/ast: file sizes, function lengths, test flags, always-skipped tests, documented names
	$(GO) run ./internal/tools/codestats -detail

clean: ## Remove build outputs
	rm -rf bin build
