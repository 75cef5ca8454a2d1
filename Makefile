# PlacementManifestWork controller-manager.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

IMG ?= placement-manifestwork:dev
CONTROLLER_GEN := go tool controller-gen

.PHONY: all
all: build

##@ Development

.PHONY: manifests
manifests: ## Generate the CRD and the two ClusterRoles from markers: the manager's (config/rbac/role.yaml) and transparent mode's (config/rbac/fleet/role.yaml).
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd:allowDangerousTypes=false paths="./api/..." paths="./controllers/..." output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) rbac:roleName=fleet-role paths="./internal/fleet/..." output:rbac:artifacts:config=config/rbac/fleet

.PHONY: generate
generate: ## Generate deepcopy code.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: verify
verify: ## Fail when generated files, go.mod or formatting are stale (regenerates them), or go vet or make lint complain.
	hack/verify.sh

.PHONY: lint
lint: ## Run golangci-lint with .golangci.yml on every package, the e2e suite's too (built once into bin/golangci-lint/).
	lint="$$(hack/golangci-lint.sh)/golangci-lint" && "$$lint" run ./...

.PHONY: envtest
envtest: ## Build kube-apiserver and etcd from Go modules into bin/ (once) and print their directory.
	@hack/kube-binaries.sh

##@ Test

# Extra go test flags for test-unit and test-integration (make test passes -race and a coverage profile).
GOTEST_FLAGS ?=

.PHONY: test
test: verify ## Everything CI runs: verify, test-unit and test-integration (race detector on, coverage in cover.out; the sandbox smoke test is test/sandbox), bench-smoke and test-e2e.
	mkdir -p bin/cover
	$(MAKE) --no-print-directory test-unit GOTEST_FLAGS="-race -timeout 30m -coverprofile bin/cover/unit.out"
	$(MAKE) --no-print-directory test-integration GOTEST_FLAGS="-race -timeout 30m -coverprofile bin/cover/integration.out"
	awk 'FNR == 1 && NR != 1 { next } { print }' bin/cover/unit.out bin/cover/integration.out >cover.out
	$(MAKE) --no-print-directory bench-smoke
	$(MAKE) --no-print-directory test-e2e

.PHONY: test-unit
test-unit: ## Run the Go tests that need no API server: api, pkg, controllers' pure steps, internal, cmd, fuzz corpora (hack/test-packages.sh unit).
	go test $(GOTEST_FLAGS) $$(hack/test-packages.sh unit)

.PHONY: test-integration
test-integration: ## Run the envtest suites on a real kube-apiserver: test/{integration,faults,policies,gitops,deploy,sandbox} (hack/test-packages.sh integration).
	assets="$$(hack/kube-binaries.sh)" && helm="$$(hack/helm-binary.sh)/helm" && pkgs="$$(hack/test-packages.sh integration)" && \
	KUBEBUILDER_ASSETS="$$assets" HELM="$$helm" go test $(GOTEST_FLAGS) $$pkgs

.PHONY: test-e2e
test-e2e: ## Run the end-to-end suite: a real OCM hub and three spokes, all local processes (docs/e2e.md).
	hack/kube-binaries.sh --all >/dev/null
	hack/ocm-binaries.sh >/dev/null
	hack/kwok-binary.sh >/dev/null
	hack/helm-binary.sh >/dev/null
	go test ./test/e2e/... -tags e2e -v -timeout 30m

##@ Build

# VERSION stamps kubectl-pmw (kubectl pmw version) and names the krew manifest's archives.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
PLUGIN_LDFLAGS = -s -w -X $(shell go list -m)/internal/kubectlpmw.version=$(VERSION)
# PREFIX, when set, makes install-plugin copy kubectl-pmw to $(PREFIX)/bin.
PREFIX ?=

.PHONY: build
build: ## Build the manager, the kubectl plugin and the score agent: bin/manager, bin/kubectl-pmw and bin/score-agent.
	CGO_ENABLED=0 go build -trimpath -o bin/manager ./cmd
	CGO_ENABLED=0 go build -trimpath -ldflags "$(PLUGIN_LDFLAGS)" -o bin/kubectl-pmw ./cmd/kubectl-pmw
	CGO_ENABLED=0 go build -trimpath -o bin/score-agent ./cmd/score-agent

.PHONY: install-plugin
install-plugin: ## Build kubectl-pmw and copy it, with kubectl_complete-pmw for kubectl's completion, to $(PREFIX)/bin, else $GOBIN, else ~/.local/bin when it exists, else $(go env GOPATH)/bin.
	CGO_ENABLED=0 go build -trimpath -ldflags "$(PLUGIN_LDFLAGS)" -o bin/kubectl-pmw ./cmd/kubectl-pmw
	if [[ -n "$(PREFIX)" ]]; then dir="$(PREFIX)/bin"; \
	elif [[ -n "$$(go env GOBIN)" ]]; then dir="$$(go env GOBIN)"; \
	elif [[ -d "$$HOME/.local/bin" ]]; then dir="$$HOME/.local/bin"; \
	else dir="$$(go env GOPATH)/bin"; fi; \
	mkdir -p "$$dir" && install -m 0755 bin/kubectl-pmw "$$dir/kubectl-pmw" && \
	printf '#!/bin/sh\n# kubectl (1.26+) completes `kubectl pmw ...` through this.\nexec kubectl-pmw __complete "$$@"\n' >"$$dir/kubectl_complete-pmw" && \
	chmod 0755 "$$dir/kubectl_complete-pmw" && echo "installed $$dir/kubectl-pmw and $$dir/kubectl_complete-pmw" && \
	case ":$$PATH:" in *":$$dir:"*) ;; *) echo "$$dir is not on your PATH: add it, so that kubectl finds the plugin" ;; esac

.PHONY: krew-manifest
krew-manifest: ## Build kubectl-pmw's release archives for every platform into bin/krew/ and write the krew manifest bin/krew/pmw.yaml (VERSION=v0.1.0; KREW_BASE_URL= where the archives are uploaded, the GitHub release by default).
	hack/krew-manifest.sh "$(VERSION)" $(KREW_BASE_URL)

.PHONY: run
run: ## Run the manager against the hub of the current kubeconfig.
	go run ./cmd

.PHONY: sandbox
sandbox: ## Run a local hub with simulated clusters, OCM's placement controller, the manager and the samples until Ctrl-C (flags: ARGS="--clusters 8").
	go run ./cmd/sandbox $(ARGS)

.PHONY: install
install: manifests ## Install the CRD into the hub of the current kubeconfig.
	kubectl apply --server-side -f config/crd/bases

.PHONY: docker-build
docker-build: ## Build the container image (needs a Docker engine).
	docker build -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the container image IMG.
	docker push $(IMG)

##@ Deployment

.PHONY: deploy
deploy: ## Install the CRD, RBAC and manager (config/default) with image IMG into the hub of the current kubeconfig.
	kubectl kustomize config/default | sed 's|image: placement-manifestwork:dev$$|image: $(IMG)|' | kubectl apply --server-side --force-conflicts -f -

.PHONY: undeploy
undeploy: ## Delete every PlacementManifestWork (while the manager runs, so their ManifestWorks go), then what make deploy installed.
	-kubectl delete placementmanifestworks --all --all-namespaces --wait --timeout=5m
	kubectl kustomize config/default | kubectl delete --ignore-not-found -f -

.PHONY: chart
chart: manifests ## Copy the CRD and the RBAC rules from config/ into the Helm chart (hack/chart-sync.sh).
	hack/chart-sync.sh

.PHONY: verify-chart
verify-chart: ## Fail when the chart's CRD or RBAC rules differ from config/ (fix: make chart).
	hack/chart-sync.sh --verify

.PHONY: helm
helm: ## Build helm from Go modules into bin/helm/ (once) and print its directory.
	@hack/helm-binary.sh

.PHONY: chart-lint
chart-lint: verify-chart ## Lint the Helm chart and render it with its default values.
	helm="$$(hack/helm-binary.sh)/helm" && "$$helm" lint --strict charts/placement-manifestwork && "$$helm" template placement-manifestwork charts/placement-manifestwork >/dev/null

.PHONY: test-deploy
test-deploy: ## Test the chart, config/, RBAC, Dockerfile and operator docs against an envtest hub (test/deploy).
	KUBEBUILDER_ASSETS="$$(hack/kube-binaries.sh)" HELM="$$(hack/helm-binary.sh)/helm" go test ./test/deploy/... -count=1 -v

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-16s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Benchmarks

BENCH_SIZES ?= 100,1000,5000
BENCH_MANY ?= 500x20
BENCH_STEADY ?= 60s
BENCH_ARGS ?=

.PHONY: bench
bench: ## Benchmark the manager at fleet scale beside the API server's limit and OCM's ManifestWorkReplicaSet controller (about 45 min; BENCH_SIZES=100,1000,5000 BENCH_MANY=500x20); writes bin/bench/results.{md,json} and the plots (bench-plot).
	CGO_ENABLED=0 go build -trimpath -o bin/manager ./cmd
	ocm="$$(hack/ocm-binaries.sh work)" && KUBEBUILDER_ASSETS="$$(hack/kube-binaries.sh)" go run ./test/bench -sizes=$(BENCH_SIZES) -many=$(BENCH_MANY) -steady=$(BENCH_STEADY) -manager=bin/manager -ocm-work="$$ocm/work" -out=bin/bench $(BENCH_ARGS)
	$(MAKE) bench-plot

BENCH_RESULTS ?= bin/bench/results.json

.PHONY: bench-plot
bench-plot: ## Draw docs/performance.png (fan-out), performance-memory.png and performance-update.png from BENCH_RESULTS: results.json files, comma-separated, merged by contender and clusters (the later file wins).
	cd test/bench/plot && go build -o ../../../bin/bench-plot .
	bin/bench-plot -in $(BENCH_RESULTS) -dir docs

.PHONY: bench-smoke
bench-smoke: ## The benchmark's smallest rows only (100 clusters, 20 PMWs x 5 with a restart each, a concurrent rollout of 5 PMWs x 20, no peer, 10 s steady state): checks that it completes, not how fast (what CI runs).
	CGO_ENABLED=0 go build -trimpath -o bin/manager ./cmd
	KUBEBUILDER_ASSETS="$$(hack/kube-binaries.sh)" go run ./test/bench -sizes=100 -many=20x5 -concurrent=5x20 -restart -restart-window=5s -steady=10s -peer=false -repeats=1 -manager=bin/manager -out=bin/bench-smoke $(BENCH_ARGS)
