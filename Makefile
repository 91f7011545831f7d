# distfeat — see README.md. Every target works on a fresh machine with Go installed.
GO      ?= go
BIN     ?= bin/distfeat
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/distfeat/distfeat/internal/buildinfo.Version=$(VERSION)
# The dev tag adds the development commands (broker, demo, bench, soak), which embed the kfake
# test broker. The production image (deploy/Dockerfile) builds without it; so does
# `make build TAGS=`. CGO off, as in the image: a static binary starts without the dynamic
# loader (≈ 1 ms of every `distfeat embed` run).
TAGS    ?= dev

.PHONY: build test test-race test-arch test-python test-kafka test-kafka-full vet staticcheck install-staticcheck bench bench-e2e bench-kcat demo fuzz soak clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/distfeat

# Both builds: the production one (no tag) and the dev one; go vet, gofmt and staticcheck.
vet:
	$(GO) vet ./...
	$(GO) vet -tags dev ./...
	@test -z "$$(gofmt -l . | tee /dev/stderr)" || (echo "gofmt needed on the files above" && exit 1)
	$(MAKE) staticcheck

# staticcheck's default checks on both builds, with the pinned version that
# `make install-staticcheck` puts in Go's install directory (GOBIN, else GOPATH/bin; .ci/run
# runs it), else the staticcheck on the PATH. Without either the step fails under CI=true and
# is skipped with the reason elsewhere.
STATICCHECK_VERSION := v0.8.2
staticcheck:
	@sc="$$($(GO) env GOBIN)"; sc="$${sc:-$$($(GO) env GOPATH)/bin}/staticcheck"; \
	if [ ! -x "$$sc" ]; then sc="$$(command -v staticcheck || true)"; fi; \
	if [ -z "$$sc" ]; then \
		msg="staticcheck not found: make install-staticcheck (go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION))"; \
		if [ "$$CI" = true ]; then echo "make staticcheck: $$msg" >&2; exit 1; fi; \
		echo "make staticcheck: skipping: $$msg"; exit 0; \
	fi; \
	echo "$$sc ./... ($$("$$sc" -version))"; "$$sc" ./... && \
	echo "$$sc -tags dev ./..." && "$$sc" -tags dev ./...

install-staticcheck:
	$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# The full suite: vet, gofmt, staticcheck; every test of every package, with the dev commands' tests (soak;
# cmd/distfeat's tests also build the production binary and check it has no kfake); the code
# that runs goroutines again under the race detector (test-race); the cross-architecture
# checks (test-arch).
test: vet
	$(GO) test -tags dev -timeout 20m ./...
	$(MAKE) test-race
	$(MAKE) test-arch
	$(MAKE) test-kafka
	$(MAKE) test-python

# The Python package (python/, docs/python.md): `pip install ./python` into bin/pyenv (builds
# the Go shared library with cgo), then its pytest suite against bin/distfeat and the embedded
# broker. Missing Python dependencies skip it with the reason, and fail it under CI=true.
test-python: build
	scripts/test-python.sh

# The race detector where there is concurrency to guard: the worker (consumer, which runs the
# processor and windows on its goroutines; kafkaio's writer, readers and connection probing;
# the test broker; output files; the service's metrics server), the processor's decode-ahead
# (its Prepare tests: the processor's and window's other tests start no goroutines and run
# under -race inside the consumer's), the parallel finalisation and shared adds of
# embedding, offline's parallel sketching (the Python library), the parallel estimates of
# calibrate (its determinism tests) and the worker run in-process by cmd/distfeat. The
# statistical suites (calibrate's accuracy studies, the marginal-transfer example,
# internal/numeric, nufft, twosample) start no goroutines of their own and run only in
# `test`: under -race they took 18, 3.5 and ~1 minutes on a loaded 2-core machine and
# guarded nothing (as window's 30 s and processor's replay properties' 60 s did).
RACE_PKGS := ./consumer/ ./kafkaio/ ./service/ ./embedding/ ./internal/testbroker/ ./internal/outfile/ ./offline/
test-race:
	$(GO) test -race -tags dev -timeout 20m $(RACE_PKGS)
	$(GO) test -race -tags dev -timeout 10m -run '^(TestPreparedMatchesProcess|TestPrepareDecodedBytes|TestProcessPreparedOutOfOrder)$$' ./processor/
	$(GO) test -race -tags dev -timeout 10m -run '^(TestDeterministic|TestDeterministicLabelled|TestMarginalTransferChoice)$$' ./calibrate/
	$(GO) test -race -tags dev -timeout 10m -run '^(TestWorkerPointsMatchEmbed|TestCalibrateFromTopic)$$' ./cmd/distfeat/

# Same bytes on every architecture and build (docs/guarantees.md): the golden and bit-identity
# tests of embedding and internal/numeric with the portable kernels (-tags purego), with
# GOAMD64=v3 (implicit FMA fusion allowed) and on arm64 under qemu-user; then `distfeat embed`
# built for arm64 (qemu), purego and v3 against the committed checksums in
# cmd/distfeat/testdata/arch. Without qemu-aarch64-static (Debian: qemu-user-static) the arm64
# steps fail under CI=true and are skipped with the reason elsewhere.
ARCH_TESTS := '^(TestGolden|TestGoldenRFFPaths|Test.*BitIdentical|TestSincos.*|TestStreamingEqualsBatchEqualsMerged|TestHDDStreaming|TestExpPortable|TestDeterministicMath.*)$$'
ARCH_PKGS  := ./embedding/ ./internal/numeric/ ./internal/nufft/
test-arch:
	$(GO) test -count=1 -tags purego -run $(ARCH_TESTS) $(ARCH_PKGS)
	@if [ "$$($(GO) env GOHOSTARCH)" = amd64 ] && grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && grep -qw bmi2 /proc/cpuinfo; then \
		echo "GOAMD64=v3 $(GO) test $(ARCH_PKGS)"; GOAMD64=v3 $(GO) test -count=1 -run $(ARCH_TESTS) $(ARCH_PKGS); \
	else echo "test-arch: skipping the GOAMD64=v3 run: not an amd64 host with AVX2, FMA and BMI2"; fi
	@if command -v qemu-aarch64-static >/dev/null 2>&1; then \
		echo "GOARCH=arm64 $(GO) test -exec qemu-aarch64-static $(ARCH_PKGS)"; \
		GOARCH=arm64 $(GO) test -count=1 -exec qemu-aarch64-static -run $(ARCH_TESTS) $(ARCH_PKGS); \
	elif [ "$$CI" = true ]; then echo "test-arch: qemu-aarch64-static not found; .ci/run installs qemu-user-static" >&2; exit 1; \
	else echo "test-arch: skipping the arm64 run: qemu-aarch64-static not installed (apt-get install qemu-user-static)"; fi
	DISTFEAT_TEST_ARCH=1 $(GO) test -count=1 -timeout 15m -run '^TestEmbed(GoldenBytes|CrossArch)$$' ./cmd/distfeat/

# The suites again against a real Apache Kafka (docs/real-kafka.md): internal/realkafka
# fetches the pinned release with Maven on first use (a cache outside the repository; later
# runs are offline) and kafkarun starts a secured single node on loopback, runs the tests
# with DISTFEAT_TEST_BROKERS and the secured listeners in the environment, and stops it by
# its PID; the failover test starts its own three-node cluster. Without Java or Maven (or
# when the fetch fails) the step fails under CI=true and is skipped with the reason
# elsewhere. KAFKA_TESTS is what `make test` runs (about 4 minutes on 2 cores);
# test-kafka-full runs every package that uses the test broker. The three-node failover test
# (TestRealKafkaFailover, about 3 minutes, mostly the nodes' downtime) runs beside the others.
KAFKARUN := $(GO) run ./internal/realkafka/kafkarun
KAFKA_CMD_TESTS := "^(TestWorkerKilledMidStream|TestWorkerSIGTERM|TestHealthcheckCommand|TestWorkerKilledTimeWindows|TestThirdPartyClient|TestCalibrateFromTopic|TestIdleCloseSurvivesKill|TestWorkerPointsMatchEmbed|TestSecuredClusterEndToEnd|TestEveryMechanismEndToEnd|TestSecuredClusterFailures|TestDownstreamJSExample)$$"
# kafkarun -fetch exits 3 when Kafka cannot run here (no Java, no Maven, fetch failed).
KAFKA_OR_SKIP = $(KAFKARUN) -fetch; rc=$$?; \
	if [ $$rc -eq 3 ] && [ "$$CI" = true ]; then echo "test-kafka: real Kafka unavailable (above); .ci/run installs Java and Maven" >&2; exit 1; fi; \
	if [ $$rc -eq 3 ]; then echo "test-kafka: skipping the real-Kafka suites: unavailable (above)"; exit 0; fi; \
	[ $$rc -eq 0 ] || exit $$rc
test-kafka:
	@$(KAFKA_OR_SKIP); \
	$(KAFKARUN) -- sh -c '$(GO) test -count=1 -tags dev -timeout 15m -run "^TestRealKafkaFailover$$" ./cmd/distfeat/ & fo=$$!; \
		$(GO) test -count=1 -p 1 -parallel 1 -tags dev -timeout 15m ./kafkaio/ ./consumer/ && \
		$(GO) test -count=1 -tags dev -timeout 15m -run $(KAFKA_CMD_TESTS) ./cmd/distfeat/; rc=$$?; \
		wait $$fo && exit $$rc'

test-kafka-full:
	@$(KAFKA_OR_SKIP); \
	$(KAFKARUN) -- $(GO) test -count=1 -p 1 -tags dev -timeout 30m ./kafkaio/ ./consumer/ ./cmd/distfeat/ ./internal/testbroker/

# Micro-benchmarks per family (ns/point, ns/window).
bench:
	$(GO) test -tags dev -run '^$$' -bench . -benchmem ./embedding/... ./internal/numeric/

# End-to-end throughput through the embedded broker, with the raw consume→produce ceiling.
bench-e2e: build
	$(BIN) bench

# The worker against a kcat consume→produce copy (needs kcat): on the embedded broker in its
# own process, then on a real Apache Kafka single node (kafkarun; skipped without Java).
bench-kcat: build
	scripts/kcat-ratio.sh
	@$(KAFKA_OR_SKIP); $(KAFKARUN) -topics "$$(scripts/kcat-ratio.sh -T)" -- scripts/kcat-ratio.sh -k

demo: build
	$(BIN) demo

# Each fuzzer for FUZZTIME (go test -fuzz runs one target at a time).
FUZZTIME ?= 3m
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeJSON$$' -fuzztime $(FUZZTIME) ./schema/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeArrow$$' -fuzztime $(FUZZTIME) ./schema/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeFeatures$$' -fuzztime $(FUZZTIME) ./schema/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodePoints$$' -fuzztime $(FUZZTIME) ./schema/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodePredictions$$' -fuzztime $(FUZZTIME) ./schema/
	$(GO) test -run '^$$' -fuzz '^FuzzParseSpec$$' -fuzztime $(FUZZTIME) ./spec/

# Two worker processes, 10 M points, one killed mid-run; then 100 000 concurrent keys.
soak: build
	$(BIN) soak
	$(BIN) soak --keys 100000 --max-open-windows 1000

clean:
	rm -rf bin python/build python/distfeat.egg-info
