# distfeat — see README.md. Every target works on a fresh machine with Go installed.
GO      ?= go
BIN     ?= bin/distfeat
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/distfeat/distfeat/internal/buildinfo.Version=$(VERSION)
# The dev tag adds the development commands (broker, demo, bench, soak), which embed the kfake
# test broker. The production image (deploy/Dockerfile) builds without it; so does
# `make build TAGS=`.
TAGS    ?= dev

.PHONY: build test vet bench bench-e2e demo fuzz soak clean

build:
	$(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/distfeat

# Both builds: the production one (no tag) and the dev one.
vet:
	$(GO) vet ./...
	$(GO) vet -tags dev ./...
	@test -z "$$(gofmt -l . | tee /dev/stderr)" || (echo "gofmt needed on the files above" && exit 1)

# The full suite: vet, gofmt, and every test under the race detector, with the dev commands'
# tests (soak); cmd/distfeat's tests also build the production binary and check it has no kfake.
test: vet
	$(GO) test -race -tags dev -timeout 20m ./...

# Micro-benchmarks per family (ns/point, ns/window).
bench:
	$(GO) test -tags dev -run '^$$' -bench . -benchmem ./embedding/...

# End-to-end throughput through the embedded broker, with the raw consume→produce ceiling.
bench-e2e: build
	$(BIN) bench

demo: build
	$(BIN) demo

# Each fuzzer for FUZZTIME (go test -fuzz runs one target at a time).
FUZZTIME ?= 3m
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeJSON$$' -fuzztime $(FUZZTIME) ./schema/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeArrow$$' -fuzztime $(FUZZTIME) ./schema/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeFeatures$$' -fuzztime $(FUZZTIME) ./schema/
	$(GO) test -run '^$$' -fuzz '^FuzzParseSpec$$' -fuzztime $(FUZZTIME) ./embedding/

# Two worker processes, 10 M points, one killed mid-run; then 100 000 concurrent keys.
soak: build
	$(BIN) soak
	$(BIN) soak --keys 100000 --max-open-windows 1000

clean:
	rm -rf bin
