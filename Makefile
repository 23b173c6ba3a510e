# The targets CI runs (.ci/run) and the ones a developer types.
GO ?= go

# bash with pipefail, so that `go test … | tee` fails when go test does.
SHELL := bash
.SHELLFLAGS := -o pipefail -c

# The repository's modules (docs/library.md: "Modules"). `./...` stops at a nested
# go.mod, so every target runs once per module, in the module's directory:
# each module's go.mod must then be complete on its own. GOWORK=off keeps a
# developer's go.work from hiding a missing requirement.
MODULES := . sched sched/quota sched/promobs deploy
export GOWORK := off
# each ARGS: run `go ARGS ./...` in every module, stopping at the first failure
each = for m in $(MODULES); do $(GO) -C $$m $(1) ./... || exit 1; done

# Benchmark runs and length. The scenario figures are deterministic, so one
# run of one iteration decides them; the noisy units (ns/op, B/op,
# allocs/op) need at least 6 runs per side before the gate judges them:
#   make baseline COUNT=6 BENCHTIME=1s && make gate COUNT=6 BENCHTIME=1s
COUNT ?= 1
BENCHTIME ?= 1x
# BenchmarkEngine10M (tier3 at 10,000 agents) takes a minute and a few
# hundred MB: make bench-scale runs it alone. BenchmarkCalibrate writes a
# 200 MB trace to the temporary directory; run it by hand.
BENCHSKIP ?= Engine10M|Calibrate
# Per-package test time limits: generous for a busy 2-core machine, short
# enough that a hang fails the run instead of stalling CI.
TESTTIMEOUT ?= 20m
BENCHTIMEOUT ?= 30m

.PHONY: test test-long deps bench bench-scale gate baseline lint run build

## deps: what the tests need beyond Go, installed when missing: redis-server,
## node with the Node examples' packages (examples/node), Debian's
## python3-httpx for the corpus's Python runtime (examples/corpus/python),
## and nginx (the gateway tests run real ones in front of simbench check)
## with the Express gateway's packages (examples/gateway/express)
deps:
	@./scripts/need-redis
	@./scripts/need-node
	@./scripts/need-python
	@./scripts/need-nginx
	@./scripts/need-express-gateway

## test: every test (the README's test command): the suite with the race
## detector, then the long checks (build tag long) without it
test: deps
	$(call each,test -race -timeout $(TESTTIMEOUT))
	$(MAKE) --no-print-directory test-long

## test-long: the checks too slow for the race detector: full-length
## property soaks, and the tier3 decision docs/decision.md shows, at every default
test-long:
	$(call each,test -timeout $(TESTTIMEOUT) -tags long -run Long)

## bench: every benchmark (COUNT runs of BENCHTIME each) into bench/new.txt
bench: deps
	@mkdir -p bench
	{ $(call each,test -run '^$$' -timeout $(BENCHTIMEOUT) -bench . -skip '$(BENCHSKIP)' -benchmem -benchtime=$(BENCHTIME) -count=$(COUNT)); } | tee bench/new.txt

## bench-scale: BenchmarkEngine10M alone, in a process of its own so that
## its peak-rss-MB is the run's: tier3 at 10,000 agents, some 11 M calls
## (targets: at most 2,000 cpu-ns/call, under 500 peak-rss-MB); it also
## reports gc-cpu-%, peak-heap-MB and peak-live-MB (docs/speed.md: make bench-scale)
bench-scale:
	$(GO) test -run '^$$' -timeout $(BENCHTIMEOUT) -bench '^BenchmarkEngine10M$$' -benchtime 1x ./sim

## gate: bench, then compare bench/new.txt with bench/baseline.txt (exit 1: regression, 2: missing data)
gate: bench
	$(GO) run . gate --baseline bench/baseline.txt bench/new.txt

## baseline: bench, then make bench/new.txt the baseline; commit it and say why
baseline: bench
	cp bench/new.txt bench/baseline.txt

## lint: gofmt, every module's go.mod and go.sum tidy, then go vet and
## staticcheck in every module, with and without the long tag; staticcheck
## is the version the root go.mod's tool directive pins (honnef.co/go/tools),
## built once and run in each module
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	for m in $(MODULES); do $(GO) -C $$m mod tidy -diff || exit 1; done
	$(call each,vet)
	$(call each,vet -tags long)
	@sc=$$($(GO) tool -n staticcheck) && for m in $(MODULES); do echo "staticcheck $$m"; (cd $$m && $$sc ./... && $$sc -tags long ./...) || exit 1; done

## run: the main job on the embedded tier3 scenario
run:
	$(GO) run . run tier3

## build: the simbench binary in the repository root
build:
	$(GO) build -o simbench .
