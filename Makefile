# provider-eventing-auth
SHELL := /usr/bin/env bash
GO ?= go
# kube-apiserver, etcd and kubectl built from the Go module proxy (see hack/envtest-assets.sh).
ENVTEST_ASSETS = $(shell hack/envtest-assets.sh)

.PHONY: all build generate vet test reviewable local-run envtest-assets clean

all: build

build: ## Build the provider and the IAS simulator into bin/.
	$(GO) build -o bin/provider ./cmd/provider
	$(GO) build -o bin/ias-simulator ./cmd/ias-simulator

generate: ## Regenerate the IAS client, deepcopy, managed method sets and CRDs.
	$(GO) generate ./...

vet:
	$(GO) vet ./...

envtest-assets: ## Build the local control plane binaries (cached outside the repo).
	@hack/envtest-assets.sh

test: ## Unit tests, then integration tests against a real kube-apiserver + etcd and the IAS simulator.
	@assets="$$(hack/envtest-assets.sh)" && \
	KUBEBUILDER_ASSETS="$$assets" $(GO) test ./... -count=1 -timeout 20m

reviewable: generate vet test ## What a change must pass before review.
	@git diff --exit-code -- apis package internal/clients/ias/api || { echo "generated files are stale: commit the output of 'make generate'"; exit 1; }

local-run: ## Run the provider end to end on this machine: local management cluster and runtime, IAS simulator, an IASApplication and a RuntimeSecret.
	@assets="$$(hack/envtest-assets.sh)" && \
	KUBEBUILDER_ASSETS="$$assets" $(GO) run ./cluster/local

clean:
	rm -rf bin
