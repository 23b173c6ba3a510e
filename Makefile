# The targets CI runs (.ci/run) and the ones a developer types.
GO ?= go

# bash with pipefail, so that `go test … | tee` fails when go test does.
SHELL := bash
.SHELLFLAGS := -o pipefail -c

# Benchmark runs and length. The scenario figures are deterministic, so one
# run of one iteration decides them; the noisy units (ns/op, B/op,
# allocs/op) need at least 6 runs per side before the gate judges them:
#   make baseline COUNT=6 BENCHTIME=1s && make gate COUNT=6 BENCHTIME=1s
COUNT ?= 1
BENCHTIME ?= 1x
# BenchmarkEngine10M takes tens of seconds and gigabytes, BenchmarkCalibrate
# writes a 200 MB trace to the temporary directory; run them by hand.
BENCHSKIP ?= Engine10M|Calibrate

.PHONY: test test-long deps bench gate baseline lint run build

## deps: what the tests need beyond Go: redis-server (installed when missing)
deps:
	@./scripts/need-redis

## test: every test (the README's test command): the suite with the race
## detector, then the long checks (build tag long) without it
test: deps
	$(GO) test -race ./...
	$(MAKE) --no-print-directory test-long

## test-long: the checks too slow for the race detector: full-length
## property soaks, and the README's tier3 decision at every default
test-long:
	$(GO) test -tags long -run Long ./...

## bench: every benchmark (COUNT runs of BENCHTIME each) into bench/new.txt
bench: deps
	@mkdir -p bench
	$(GO) test -run '^$$' -bench . -skip '$(BENCHSKIP)' -benchmem -benchtime=$(BENCHTIME) -count=$(COUNT) ./... | tee bench/new.txt

## gate: bench, then compare bench/new.txt with bench/baseline.txt (exit 1: regression, 2: missing data)
gate: bench
	$(GO) run . gate --baseline bench/baseline.txt bench/new.txt

## baseline: bench, then make bench/new.txt the baseline; commit it and say why
baseline: bench
	cp bench/new.txt bench/baseline.txt

## lint: formatting and vet
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## run: the main job on the embedded tier3 scenario
run:
	$(GO) run . run tier3

## build: the simbench binary in the repository root
build:
	$(GO) build -o simbench .
