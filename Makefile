# The targets CI runs (.ci/run) and the ones a developer types.
GO ?= go

.PHONY: test bench lint run build

## test: every test, with the race detector (the README's test command)
test:
	$(GO) test -race ./...

## bench: every benchmark once, in Go benchmark format
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

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
