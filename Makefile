# rocelab — the two commands are `make demo` and `make test`; see README.md.
GO        ?= go
# Static binaries: the docker runtime copies bin/rocelab into a FROM-scratch
# image, and tests that build the binary share this build cache.
export CGO_ENABLED := 0
BIN       := bin/rocelab
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
FUZZTIME  ?= 3s
DEMO_OUT  ?= demo-out

.PHONY: all build install image test unit race fuzz-short lint demo bench clean
.PHONY: rocelab rocelab-node rocelab-controller verbs-lib

all: build

## build: every binary and the verbs library; each also has a target of
## its own (go build skips what is up to date).
build: rocelab rocelab-node rocelab-controller verbs-lib

rocelab:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/rocelab

# The node process deploy starts for every node (else `rocelab node`, slower to start).
rocelab-node:
	$(GO) build -o $(dir $(BIN))rocelab-node ./cmd/rocelab-node

# The Kubernetes controller of labs that span machines.
rocelab-controller:
	$(GO) build -o $(dir $(BIN))rocelab-controller ./cmd/rocelab-controller

verbs-lib:
	@scripts/build-verbs-lib.sh bin/lib/libibverbs.so.1 || \
		echo "note: bin/lib/libibverbs.so.1 or librdmacm.so.1 not built: verbs programs (perftest, ibv_*, rping) will find no lab NIC"

## image: rocelab's OCI image from make build's output — the three
## programs in /usr/local/bin, the verbs libraries in /usr/local/lib/rocelab —
## as bin/rocelab-image.tar (`docker load -i`, `ctr -n k8s.io images import`),
## tagged $(IMAGE). Reproducible: every file and the image dated
## SOURCE_DATE_EPOCH (the commit's time), entries sorted, owned by root.
IMAGE     ?= rocelab:$(VERSION)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
image: build
	$(GO) run ./cmd/imagegen -bin bin -o bin/rocelab-image.tar -tag $(IMAGE) -version $(VERSION) -source-date-epoch $(SOURCE_DATE_EPOCH)

## install: put rocelab on the PATH ($(PREFIX)/bin, /usr/local/bin by default).
PREFIX    ?= /usr/local
install: build
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/rocelab
	install -D -m 0755 $(dir $(BIN))rocelab-node $(DESTDIR)$(PREFIX)/bin/rocelab-node
	install -D -m 0755 $(dir $(BIN))rocelab-controller $(DESTDIR)$(PREFIX)/bin/rocelab-controller
	if [ -f bin/lib/libibverbs.so.1 ]; then install -D -m 0755 bin/lib/libibverbs.so.1 $(DESTDIR)$(PREFIX)/lib/rocelab/libibverbs.so.1; fi
	if [ -f bin/lib/librdmacm.so.1 ]; then install -D -m 0755 bin/lib/librdmacm.so.1 $(DESTDIR)$(PREFIX)/lib/rocelab/librdmacm.so.1; fi

## test: lint, every unit/integration test, then each fuzz target briefly.
test: lint unit race fuzz-short

# A test binary's time waiting for testenv.Exclusive counts against go
# test's per-binary timeout (10 min by default); the heavy packages that
# take it add up to about 8 minutes.
# The compliance mutation tests need the endpoint's mutants, compiled in
# only with the rocelab_mutants tag (the shipped binary has none).
# On a machine without the Kubernetes build cached, deploy/helm's test
# waits for scripts/k8s-bin.sh to build kube-apiserver and then the node's
# binaries (42 minutes cold here, at the lowest priority beside the
# tests): hence 60m.
unit:
	$(GO) test -count=1 -timeout 60m ./...
	$(GO) test -count=1 -timeout 30m -tags rocelab_mutants -run 'Mutant|FailedCaseEvidence' ./endpoint/ ./lab/compliance/... ./lab/emulation/node/

# The parallel simulator under the race detector: engines of a group, pipes
# across them, a partitioned lab. The detector needs a C compiler.
race:
	@if command -v cc >/dev/null; then \
		CGO_ENABLED=1 $(GO) test -count=1 -race -run 'Group|Across|Workers' ./core/sim/ ./wire/pipe/ ./lab/simulation/simlab/ ./lab/simulation/simbench/ ./lab/scenarios/run/; \
	elif [ -n "$$CI" ]; then echo "race: no C compiler (cc) for the race detector" >&2; exit 1; \
	else echo "race: skipped: no C compiler (cc) for the race detector"; fi

fuzz-short:
	FUZZTIME=$(FUZZTIME) scripts/fuzz-short.sh

lint:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## demo: the most complete thing rocelab can do today, on the default topology.
## It runs rocelab, whose labs start rocelab-node; no controller, no verbs
## programs.
demo: rocelab rocelab-node
	scripts/demo.sh $(BIN) $(DEMO_OUT)

## bench: Go benchmarks of the hot paths, side by side in one run.
bench:
	scripts/bench.sh

clean:
	rm -rf bin $(DEMO_OUT)

## soak: deploy laptop.yaml and run collectives, perf and faults in rounds
## for SOAK_DURATION (default 3m), sampling every node process's RSS,
## goroutines and open fds; prints first/last/max per node and fails when
## any keeps growing. Takes minutes; not part of `make test`.
.PHONY: soak
SOAK_DURATION ?= 3m
soak:
	SOAK_DURATION=$(SOAK_DURATION) $(GO) test -tags soak -count=1 -run '^TestSoak$$' -v -timeout 0 ./lab/emulation/control/deploy/

## bench-sim: the simulator at data-center scale: a 1,024-host three-tier
## Clos permutation (single-path ECMP, then MetaRoCE spraying) and a
## 2,048-GPU ring all-reduce, each on one core and on two (two workers);
## wall time, packets per second, peak RSS and digests side by side, failing
## when a digest differs. BASELINE=<rev> adds that revision's simulator, one
## core, before each scenario. HTSIM=<path to htsim_roce> then pairs
## permutation-ecmp with htsim_roce's same permutation, alternated, ROUNDS
## (3) rounds with the load of each (docs/performance.md says how to build
## htsim). Takes minutes; not part of `make test`.
.PHONY: bench-sim
bench-sim:
	scripts/bench-sim.sh

## example-plots: regenerate the README's example plots (docs/img/examples)
## from the example scenarios, in the simulator.
.PHONY: example-plots
example-plots: rocelab
	scripts/example-plots.sh $(BIN)

## dashboards: regenerate the Grafana dashboards (dashboards/grafana/json)
## from their Go code; a test fails when the committed files differ.
.PHONY: dashboards web-vendor
dashboards:
	$(GO) run ./cmd/dashgen -o dashboards/grafana/json

## web-vendor: re-copy the web view's pinned npm libraries (package-lock.json)
## into its embedded assets.
web-vendor:
	cd dashboards/web && npm ci --no-audit --no-fund && cp node_modules/uplot/dist/uPlot.iife.min.js node_modules/uplot/dist/uPlot.min.css node_modules/uplot/LICENSE static/vendor/
