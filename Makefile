# distfeat — see README.md. Every target works on a fresh machine with Go installed.
GO      ?= go
BIN     ?= bin/distfeat
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/distfeat/distfeat/internal/buildinfo.Version=$(VERSION)

.PHONY: build test vet bench bench-e2e demo fuzz clean

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/distfeat

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l . | tee /dev/stderr)" || (echo "gofmt needed on the files above" && exit 1)

# The full suite: vet, gofmt, and every test under the race detector.
test: vet
	$(GO) test -race -timeout 20m ./...

# Micro-benchmarks per family (ns/point, ns/window).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./embedding/...

# End-to-end throughput through the embedded broker, with the raw consume→produce ceiling.
bench-e2e: build
	$(BIN) bench

demo: build
	$(BIN) demo

clean:
	rm -rf bin
