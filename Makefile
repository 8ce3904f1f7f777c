# kubesched: build, test, benchmark.
GO ?= go
PKGS := ./...

# Where the integration tests keep etcd, kube-apiserver and kubesched builds.
INTEGRATION_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/kubesched-integration

.PHONY: all build test test-unit fuzz-phase fuzz fuzz-differential fuzz-planner fuzz-consolidate soak test-integration integration-binaries vet fmt-check bench bench-real conformance example clean

all: build

build:
	$(GO) build -o bin/kubesched ./cmd/kubesched

## test: everything CI runs: vet, formatting, unit tests with the race
## detector, a few seconds of each fuzz target, and the integration tests
## on a real kube-apiserver and etcd. On a fresh clone with empty module,
## build and integration caches (2 cores, 2026-12-06) it took 41 minutes
## and ~7.9 GB of disk, 11-16 minutes warm; each long phase says what it
## does, and the time it starts, since go test prints nothing while it
## builds.
# NOW is the time a phase's ==> line is printed (UTC).
NOW = $$(date -u +%H:%M:%S)

test: vet fmt-check test-unit fuzz-phase fuzz test-integration

fuzz-phase:
	@echo "==> $(NOW) fuzz: each fuzz target for $(FUZZTIME) inputs, after building its instrumented test binary (cold: a minute or two more)"

## test-unit: the unit tests alone, with the race detector.
test-unit:
	@echo "==> $(NOW) test-unit: building the race-enabled test binaries, then running them (cold: ~8 min on 2 cores, the first ~5 silent while it builds; warm: ~2 min); one line per package as each finishes"
	$(GO) test -race -count=1 -timeout 25m $(PKGS)

## integration-binaries: build etcd, kube-apiserver, upstream's
## kube-scheduler (the oracle of the differential tests) and
## kube-controller-manager (the oracle of workload expansion) from Go
## modules (cold: ~6 min on 2 cores for the four, after their modules'
## download; warm: seconds; ~0.6 GB in INTEGRATION_CACHE).
integration-binaries:
	@echo "==> $(NOW) integration-binaries: etcd, kube-apiserver, kube-scheduler and kube-controller-manager v1.37.2 from Go modules into $(INTEGRATION_CACHE) (cold: ~6 min on 2 cores, silent; warm: seconds)"
	mkdir -p $(INTEGRATION_CACHE)
	@echo "==> $(NOW) building etcd"
	cd test/integration && $(GO) build -o $(INTEGRATION_CACHE)/etcd ./cmd/etcd
	@echo "==> $(NOW) building kube-apiserver (the longest)"
	cd test/integration && $(GO) build -o $(INTEGRATION_CACHE)/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
	@echo "==> $(NOW) building kube-scheduler"
	cd test/integration && $(GO) build -o $(INTEGRATION_CACHE)/kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler
	@echo "==> $(NOW) building kube-controller-manager"
	cd test/integration && $(GO) build -o $(INTEGRATION_CACHE)/kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager

## test-integration: kubesched (built with -race) against a real control plane.
test-integration: integration-binaries
	@echo "==> $(NOW) test-integration: go vet, then the tests, each on its own kube-apiserver and etcd, with kubesched built with -race first; go test prints each package's line when the package is done (the main one after several minutes)"
	cd test/integration && $(GO) vet ./... && KUBESCHED_INTEGRATION_CACHE=$(INTEGRATION_CACHE) $(GO) test -count=1 -timeout 30m ./...

## fuzz: each fuzz target for FUZZTIME (seed corpus in testdata/fuzz);
## longer runs: make fuzz FUZZTIME=200000x. A count, not a duration: Go
## 1.26's fuzzer can end a timed run with a spurious "context deadline
## exceeded" and no failing input (golang/go#75804, fixed in Go 1.27; its
## internal/fuzz stop() suppresses only the worker context's error).
FUZZTIME ?= 1000x
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzLoadFile$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./internal/config
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./internal/simulator/loading
	$(GO) test -run '^$$' -fuzz '^FuzzHostileQuantities$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./internal/simulator/loading
	$(GO) test -run '^$$' -fuzz '^FuzzScanHead$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./internal/simulator/loading
	$(GO) test -run '^$$' -fuzz '^FuzzFastYAML$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./internal/simulator/loading

## soak: the long chaos soaks: TestChaosSoak (6,000 pods, 12 rounds of
## faults) and TestChaosSoakBindingPaths (SOAK_PATHS_PODS pods of every
## binding path, plain, volume, DRA, gang and extender, in
## SOAK_PATHS_ROUNDS waves, under their faults and node churn); the short
## ones run in test-integration. Each prints its summary and per-path
## table; the whole log stays in INTEGRATION_CACHE.
SOAK_PODS ?= 6000
SOAK_ROUNDS ?= 12
SOAK_PATHS_PODS ?= 1500
SOAK_PATHS_ROUNDS ?= 10
soak: integration-binaries
	cd test/integration && KUBESCHED_INTEGRATION_CACHE=$(INTEGRATION_CACHE) KUBESCHED_SOAK_PODS=$(SOAK_PODS) KUBESCHED_SOAK_ROUNDS=$(SOAK_ROUNDS) \
		KUBESCHED_SOAK_PATHS_PODS=$(SOAK_PATHS_PODS) KUBESCHED_SOAK_PATHS_ROUNDS=$(SOAK_PATHS_ROUNDS) \
		$(GO) test -count=1 -run '^TestChaosSoak(BindingPaths)?$$' -timeout 120m -v ./ > $(INTEGRATION_CACHE)/soak.log 2>&1; rc=$$?; \
		grep -E 'chaos_([a-z]+_)*test\.go|^(---|ok|FAIL|PASS)' $(INTEGRATION_CACHE)/soak.log; echo "full log: $(INTEGRATION_CACHE)/soak.log"; exit $$rc

## fuzz-differential: the differential fuzzer (test/integration/difffuzz):
## kubesched's per-node decisions against upstream's framework in process,
## for DIFF_FUZZTIME from DIFF_SEED; prints each divergence shrunk to a
## scenario, the summary and the coverage report.
DIFF_FUZZTIME ?= 30m
DIFF_SEED ?= 1
fuzz-differential:
	cd test/integration && KUBESCHED_DIFFFUZZ_DURATION=$(DIFF_FUZZTIME) KUBESCHED_DIFFFUZZ_SEED=$(DIFF_SEED) KUBESCHED_DIFFFUZZ_COVERAGE=1 \
		$(GO) test -count=1 -run '^TestDifferential$$' -timeout 0 -v ./difffuzz

## fuzz-planner: the planner fuzzer (internal/simulator/plannerfuzz):
## PLANNER_CASES random small clusters from PLANNER_SEED, each asked
## capacity --node-types' question, the answer judged by simulation and
## its cost compared with the optimum found by exhaustive search; a plan
## (the answer, and each candidate optimum) is feasible when it places
## every pod (DaemonSet pods included) in its own order and in 32 other
## orders of its new nodes (names, joining order, tie-break draws:
## -orders N, 0 for its own only). Fails unless every answer is feasible
## with no empty node, >= 98% are optimal and the worst cost ratio is
## <= 1.05. Prints the statistics and the worst cases' seeds; reproduce
## one with go test -run '^TestPlannerAgainstTheOptimum$' -v
## ./internal/simulator/plannerfuzz -args -seed <seed> -cases 1.
## 1,000 cases: ~15 min on 2 cores.
PLANNER_CASES ?= 1000
PLANNER_SEED ?= 1
fuzz-planner:
	$(GO) test -count=1 -run '^TestPlannerAgainstTheOptimum$$' -timeout 0 -v ./internal/simulator/plannerfuzz \
		-args -cases=$(PLANNER_CASES) -seed=$(PLANNER_SEED) -enforce

## fuzz-consolidate: the consolidation fuzzer
## (internal/simulator/consolidatefuzz): CONSOLIDATE_CASES random small
## clusters from CONSOLIDATE_SEED (2 to 7 priced nodes, running pods of
## every kind the drain rules read, zone and hostname constraints,
## DaemonSets, PodDisruptionBudgets, pending pods; in 30% of the cases 1
## to 3 priced node types to replace nodes by), each asked consolidate's
## question under cluster-autoscaler's or Karpenter's rules; the plan
## (removals, then replacements) is judged by simulation, drain after
## drain (its nodes cordoned, the pods that move pending again, a new
## node with its DaemonSet pods; the rules and budgets read by the
## fuzzer's own table and count) and its saving compared with the best
## feasible plan removing a subset of the nodes and replacing at most one
## other subset, by exhaustive search. Fails unless every plan is
## feasible, >= 98% save the optimum and the worst saving ratio is >=
## 0.95. Prints the statistics (the cases with node types apart) and the
## seeds; reproduce one with go test -run
## '^TestConsolidateAgainstTheOptimum$' -v
## ./internal/simulator/consolidatefuzz -args -seed <seed> -cases 1
## -describe (-orders N: every set in N orders of its replacements;
## -strict-cordon: no replacement may wait for its node's deletion).
## 1,000 cases: ~15 s on 2 cores.
CONSOLIDATE_CASES ?= 1000
CONSOLIDATE_SEED ?= 1
fuzz-consolidate:
	$(GO) test -count=1 -run '^TestConsolidateAgainstTheOptimum$$' -timeout 0 -v ./internal/simulator/consolidatefuzz \
		-args -cases=$(CONSOLIDATE_CASES) -seed=$(CONSOLIDATE_SEED) -enforce

vet:
	@echo "==> $(NOW) vet: compiles every dependency to type-check them (on a fresh clone: the module download and ~5 min on 2 cores, as the first go run; then seconds)"
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

## bench-real: the benchmark suite against a real control plane, kubesched
## and upstream's kube-scheduler v1.37.2 on the same workloads (BENCH_ONLY=
## substrings of workload names, BENCH_SCALE= divisor of the sizes,
## BENCH_PROFILE= a folder for kubesched's CPU profiles, BENCH_SCHEDULERS=
## kubesched to run one scheduler only, BENCH_ENV="GOGC=400" added to
## kubesched's environment).
BENCH_ONLY ?= SchedulingBasic
BENCH_SCALE ?= 1
bench-real: integration-binaries
	cd test/integration && KUBESCHED_INTEGRATION_CACHE=$(INTEGRATION_CACHE) KUBESCHED_BENCH=1 KUBESCHED_BENCH_ONLY=$(BENCH_ONLY) KUBESCHED_BENCH_SCALE=$(BENCH_SCALE) KUBESCHED_BENCH_PROFILE=$(BENCH_PROFILE) \
		KUBESCHED_BENCH_SCHEDULERS=$(BENCH_SCHEDULERS) KUBESCHED_BENCH_ENV="$(BENCH_ENV)" \
		$(GO) test -count=1 -run '^TestBenchmarkAgainstKubeScheduler$$' -timeout 120m -v ./ 2>&1 | grep -v '^=== \|^    ---\|^--- '

## bench-planner: the planner peer benchmark (issue 43): Karpenter
## v1.15.0's provisioning scheduler, run in process (test/plannerbench,
## its own module: Karpenter needs Go 1.26.9, which GOTOOLCHAIN=auto
## fetches), and capacity --node-types on the same inputs from
## hack/genplanner (1,000 and 5,000 pending pods, and 1,000 with
## DaemonSets, greenfield, 9 AWS types in 3 zones); each plan placed by
## kubesched simulate (kube-scheduler's rules), with the fractional lower
## bound; prints a markdown table, kept in PLANNER_BENCH_DIR/table.md.
## Not part of test: the Karpenter module's first build takes ~15 min on
## 2 cores, and kubesched's search minutes per input.
## PLANNER_BENCH_FLAGS= adds flags (-kubesched-runs 3, -karpenter-runs N,
## -timeout 30m, -tools karpenter).
PLANNER_BENCH_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/kubesched-planner-bench
PLANNER_SEED ?= 1
PLANNER_GOTOOLCHAIN ?= auto
PLANNER_BENCH_FLAGS ?=
bench-planner: build
	@echo "==> $(NOW) bench-planner: inputs into $(PLANNER_BENCH_DIR)"
	mkdir -p $(PLANNER_BENCH_DIR)
	$(GO) build -o $(PLANNER_BENCH_DIR)/genplanner ./hack/genplanner
	$(PLANNER_BENCH_DIR)/genplanner -pods 1000 -seed $(PLANNER_SEED) -o $(PLANNER_BENCH_DIR)/1000
	$(PLANNER_BENCH_DIR)/genplanner -pods 5000 -seed $(PLANNER_SEED) -o $(PLANNER_BENCH_DIR)/5000
	$(PLANNER_BENCH_DIR)/genplanner -pods 1000 -daemonsets -seed $(PLANNER_SEED) -o $(PLANNER_BENCH_DIR)/1000-daemonsets
	@echo "==> $(NOW) bench-planner: go vet and build of test/plannerbench with Karpenter (GOTOOLCHAIN=$(PLANNER_GOTOOLCHAIN); cold: ~15 min on 2 cores, silent; warm: seconds)"
	cd test/plannerbench && GOTOOLCHAIN=$(PLANNER_GOTOOLCHAIN) $(GO) vet . && GOTOOLCHAIN=$(PLANNER_GOTOOLCHAIN) $(GO) build -o $(PLANNER_BENCH_DIR)/plannerbench .
	@echo "==> $(NOW) bench-planner: the plans (kubesched's search: minutes per input; a progress line per step)"
	$(PLANNER_BENCH_DIR)/plannerbench -kubesched bin/kubesched $(PLANNER_BENCH_FLAGS) \
		$(PLANNER_BENCH_DIR)/1000 $(PLANNER_BENCH_DIR)/5000 $(PLANNER_BENCH_DIR)/1000-daemonsets > $(PLANNER_BENCH_DIR)/table.md; \
		rc=$$?; cat $(PLANNER_BENCH_DIR)/table.md; exit $$rc

## bench: Go benchmarks of the hot paths.
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

## conformance: compare explain with upstream's answers (scenarios copied in testdata).
conformance: build
	bash ../shared/conformance/compare.sh -s internal/simulator/questions/testdata/conformance -s internal/simulator/questions/testdata/conformance-storage \
		-s internal/simulator/questions/testdata/conformance-dra -s internal/simulator/questions/testdata/conformance-edge -s internal/simulator/questions/testdata/conformance-fuzz 'bin/kubesched explain -f {} -o json'

## example: simulate the bundled example.
example:
	$(GO) run ./cmd/kubesched simulate -f examples/cluster.yaml

clean:
	rm -rf bin
