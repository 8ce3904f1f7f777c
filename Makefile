# kubesched: build, test, benchmark.
GO ?= go
PKGS := ./...

.PHONY: all build test test-unit vet fmt-check bench conformance example clean

all: build

build:
	$(GO) build -o bin/kubesched ./cmd/kubesched

## test: everything CI runs (vet, formatting, unit tests with the race detector).
test: vet fmt-check test-unit

## test-unit: the unit tests alone.
test-unit:
	$(GO) test -race -count=1 $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

## bench: Go benchmarks of the hot paths.
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

## conformance: compare explain with upstream's answers (scenarios copied in testdata).
conformance: build
	bash ../shared/conformance/compare.sh -s internal/simulator/testdata/conformance 'bin/kubesched explain -f {} -o json'

## example: simulate the bundled example.
example:
	$(GO) run ./cmd/kubesched simulate -f examples/cluster.yaml

clean:
	rm -rf bin
