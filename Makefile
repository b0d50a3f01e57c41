# provider-eventing-auth
SHELL := /usr/bin/env bash
GO ?= go
# kube-apiserver, etcd and kubectl built from the Go module proxy (see hack/envtest-assets.sh).
ENVTEST_ASSETS = $(shell hack/envtest-assets.sh)

.PHONY: all build generate vet test bench reviewable local-run local-up envtest-assets crossplane-tools xpkg e2e clean

all: build

# Every binary shipped or run against a landscape is built with Go's FIPS 140-3
# module, as the packages are (hack/xpkg.sh).
build: export GOFIPS140 = v1.0.0
build: ## Build the provider, the IAS simulator and the migration command into bin/, with the FIPS 140-3 module.
	$(GO) build -o bin/provider ./cmd/provider
	$(GO) build -o bin/ias-simulator ./cmd/ias-simulator
	$(GO) build -o bin/eventing-auth-migrate ./cmd/migrate

generate: ## Regenerate the IAS client, deepcopy, managed method sets and CRDs.
	$(GO) generate ./...

vet:
	$(GO) vet ./...
	cd cluster/local && GOWORK=off $(GO) vet -tags e2e ./...
	cd function && GOWORK=off $(GO) vet ./...
	cd test/monitoring && GOWORK=off $(GO) vet ./...

envtest-assets: ## Build the local control plane binaries (cached outside the repo).
	@hack/envtest-assets.sh

crossplane-tools: ## Build the Crossplane CLI, core and crane (cached outside the repo).
	@hack/crossplane-tools.sh

xpkg: ## Build the provider, composition function and Configuration packages offline into _output/xpkg.
	@hack/xpkg.sh

test: ## Unit tests (the provider's, the composition function's and the local stack's), integration tests (real kube-apiserver + etcd, the IAS simulator), composition render, validation and package checks, then the alert rules (promtool test rules) and the dashboard's queries (test/monitoring, a module of its own).
	@assets="$$(hack/envtest-assets.sh)" && tools="$$(hack/crossplane-tools.sh)" && xpkg="$$(hack/xpkg.sh)" && promtool="$$(hack/promtool.sh)" && \
	KUBEBUILDER_ASSETS="$$assets" CROSSPLANE_TOOLS="$$tools" XPKG_DIR="$$xpkg" $(GO) test ./... -count=1 -timeout 20m && \
	(cd cluster/local && GOWORK=off $(GO) test ./... -count=1) && \
	(cd function && GOWORK=off $(GO) test ./... -count=1) && \
	cd test/monitoring && PROMTOOL="$$promtool" GOWORK=off $(GO) test ./... -count=1

bench: ## Benchmarks that print figures (BENCH <key> <value> bound <b> ratio <r>): client cache and comparison costs, the in-process load scenarios, then the provider binary at scale (idle, 200 and 1,000 runtimes at once, deletion, new runtimes while 1,000 poll), then what a runtime costs the provider over its life at 200 and 1,000 (CPU against eventing-auth-manager's, measured in the same run when BENCH_OPERATOR names its binary; reconciles, API writes, IAS calls per deletion), then 10,000 Ready runtimes (restart, steady IAS load, drift repair, memory; BENCH_RUNTIMES sets the number), then healthy work beside broken neighbours (a hung tenant, hanging and refusing runtimes, wrong credentials), then 200 platform runtimes beside hostile namespaces (the platform's username guessed under four spellings, 20 users at a large tenant, tenants and runtimes answering 429 for an hour) across a restart, then Kyma CR to runtime Secret through Crossplane core at 200, 1,000 and 3,000 runtimes and their mass deletion, then composed runtimes at rest over a window that holds every periodic cause (intervals scaled down by one factor).
	$(GO) test -run '^$$' -bench . -benchmem ./internal/...
	@assets="$$(hack/envtest-assets.sh)" && \
	KUBEBUILDER_ASSETS="$$assets" $(GO) test -run '^$$' -bench . -benchtime 1x -timeout 20m ./test/integration && \
	KUBEBUILDER_ASSETS="$$assets" $(GO) test -run '^$$' -bench Scale -benchtime 1x -timeout 60m ./test/bench && \
	KUBEBUILDER_ASSETS="$$assets" $(GO) test -run '^$$' -bench Cycle -benchtime 1x -timeout 90m ./test/bench && \
	KUBEBUILDER_ASSETS="$$assets" $(GO) test -run '^$$' -bench Steady -benchtime 1x -timeout 60m ./test/bench && \
	KUBEBUILDER_ASSETS="$$assets" $(GO) test -run '^$$' -bench Isolation -benchtime 1x -timeout 45m ./test/bench && \
	KUBEBUILDER_ASSETS="$$assets" $(GO) test -run '^$$' -bench HostileNeighbours -benchtime 1x -timeout 30m ./test/bench && \
	tools="$$(hack/crossplane-tools.sh)" && \
	cd cluster/local && KUBEBUILDER_ASSETS="$$assets" CROSSPLANE_TOOLS="$$tools" GOWORK=off $(GO) test -tags e2e -run '^$$' -bench Composed -benchtime 1x -timeout 120m ./e2e

e2e: ## The whole flow with Crossplane core, functions, the garbage collector, the provider and the IAS simulator as local processes.
	@hack/local.sh e2e

reviewable: generate vet test ## What a change must pass before review.
	@git diff --exit-code -- apis package internal/clients/ias/api || { echo "generated files are stale: commit the output of 'make generate'"; exit 1; }

local-run: ## The whole flow on this machine: a Kyma CR becomes a Ready EventingAuth, an IAS app and the runtime's Secret; deleting it removes them.
	@hack/local.sh run

local-up: ## The same stack, left running with a runtime ready for a Kyma CR; prints the kubeconfigs, the metrics URL and commands to try; Ctrl-C stops it.
	@hack/local.sh up

clean:
	rm -rf bin
