# PlacementManifestWork controller-manager.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

IMG ?= placement-manifestwork:dev
CONTROLLER_GEN := go tool controller-gen

.PHONY: all
all: build

##@ Development

.PHONY: manifests
manifests: ## Generate the CRD and RBAC from markers.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd:allowDangerousTypes=false paths="./api/..." paths="./controllers/..." output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac

.PHONY: generate
generate: ## Generate deepcopy code.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: verify
verify: ## Fail when generated files, go.mod or formatting are stale (regenerates them), or go vet complains.
	hack/verify.sh

.PHONY: envtest
envtest: ## Build kube-apiserver and etcd from Go modules into bin/ (once) and print their directory.
	@hack/kube-binaries.sh

.PHONY: test
test: verify ## Run every test: unit and envtest integration suites against a real kube-apiserver.
	KUBEBUILDER_ASSETS="$$(hack/kube-binaries.sh)" go test ./... -race -coverprofile cover.out

.PHONY: test-unit
test-unit: ## Run the unit tests only (no API server).
	go test ./api/... ./pkg/... ./cmd/...

##@ Build

.PHONY: build
build: ## Build the manager binary.
	CGO_ENABLED=0 go build -trimpath -o bin/manager ./cmd

.PHONY: run
run: ## Run the manager against the hub of the current kubeconfig.
	go run ./cmd

.PHONY: install
install: manifests ## Install the CRD into the hub of the current kubeconfig.
	kubectl apply --server-side -f config/crd/bases

.PHONY: docker-build
docker-build: ## Build the container image (needs a Docker engine).
	docker build -t $(IMG) .

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-16s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)
