# sluice Makefile. Everything the project needs is built from the Go module
# proxy: tools into ./bin, the local control plane into $(SLUICE_CACHE).

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN := $(CURDIR)/bin
SLUICE_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/sluice
export SLUICE_CACHE
CLUSTER_DIR ?= $(SLUICE_CACHE)/cluster

CONTROLLER_GEN_VERSION := v0.23.0
GOLANGCI_LINT_VERSION := v2.15.0
CONTROLLER_GEN := $(BIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
GOLANGCI_LINT := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
HELM_VERSION := v3.22.0
HELM := $(BIN)/helm-$(HELM_VERSION)

# Packages of the main module (the wrapper modules under hack/ are separate).
PKGS := ./...
TEST_TIMEOUT ?= 30m

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-z-]+:.*##/ {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ Build and generate

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code and the API reference (docs/api-reference.md) from the API types.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	go run ./hack/apidocs docs/api-reference.md $$(go list -f '{{.Dir}}' ./api/... | sed "s|^$(CURDIR)/||" | sort -r)

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs, RBAC and webhook manifests under config/.
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=sluice paths="{./controllers/...,./web/...,./traffic/providers/...}" output:rbac:artifacts:config=config/rbac
	go run ./hack/webhookgen config/webhook/manifests.yaml
	rm -f charts/sluice/crds/*.yaml && cp config/crd/bases/*.yaml charts/sluice/crds/
	cp config/rbac/role.yaml charts/sluice/files/role.yaml

.PHONY: fmt
fmt: ## Format the code.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	go vet $(PKGS)

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint.
	$(GOLANGCI_LINT) run $(PKGS)

.PHONY: build
build: ## Build the sluice manager and tools into ./bin.
	go build -o $(BIN)/sluice ./cmd/sluice
	go build -o $(BIN)/sluice-cluster ./cmd/sluice-cluster
	go build -o $(BIN)/kubectl-sluice ./cmd/kubectl-sluice

##@ Test

.PHONY: controlplane
controlplane: ## Build the local control plane (first run: several minutes).
	hack/controlplane/build.sh >/dev/null

.PHONY: flux
flux: ## Build Flux's source-controller and kustomize-controller, and copy their CRDs, for the GitOps tests (first run: about ten minutes).
	hack/flux/build.sh >/dev/null

.PHONY: dataplane
dataplane: ## Build the data-plane proxy (a reduced Traefik) for test/dataplane (first run: several minutes).
	hack/dataplane/build.sh >/dev/null

.PHONY: gitea
gitea: ## Build Gitea for the Gitea/Forgejo tests (test/gitea) into the cache (first run: many minutes).
	hack/gitea/build.sh >/dev/null

.PHONY: chromium
chromium: ## Install Chromium for the web view's browser tests (apt-get; nothing when on PATH).
	hack/chromium.sh

.PHONY: prometheus
prometheus: ## Install Prometheus for the analysis tests (apt-get; nothing when on PATH).
	hack/prometheus.sh

.PHONY: test
test: controlplane dataplane flux gitea chromium prometheus $(HELM) ## Run every test, the integration tests on a local control plane.
	go test -count=1 -timeout $(TEST_TIMEOUT) $(PKGS)

BENCH_SIZES ?= 10 100 1000
BENCH_IDLE ?= 10m
BENCH_IDLE_ROLLOUTS ?= 1000
BENCH_APPROVAL_SIZES ?= 100 1000
# The manager runs in a process of its own, so that memory and CPU are its alone.
BENCH_FLAGS ?= --manager-process

.PHONY: bench
bench: controlplane ## Run the benchmark scenarios on a local control plane and print docs/performance.md's table (BENCH_SIZES, BENCH_APPROVAL_SIZES, BENCH_IDLE, BENCH_FLAGS; two hours or more at the default sizes: the 1,000-Rollout release alone takes 35 minutes on 2 cores).
	go build -o $(BIN)/bench ./test/bench
	$(BIN)/bench --row-header
	for n in $(BENCH_SIZES); do $(BIN)/bench $(BENCH_FLAGS) --rollouts $$n --replicas 10 --timeout 60m --row; done
	for n in $(BENCH_APPROVAL_SIZES); do $(BIN)/bench $(BENCH_FLAGS) --scenario=approval --rollouts $$n --replicas 10 --timeout 30m; done
	$(BIN)/bench $(BENCH_FLAGS) --scenario=idle --rollouts $(BENCH_IDLE_ROLLOUTS) --replicas 1 --idle $(BENCH_IDLE)
	$(BIN)/bench --scenario=gitops

BENCH_PROFILE_ROLLOUTS ?= 100

.PHONY: bench-profile
bench-profile: controlplane ## Profile a release of BENCH_PROFILE_ROLLOUTS Rollouts x 10 replicas (manager in-process) into docs/performance/ (CPU and heap; read with go tool pprof).
	go build -o $(BIN)/bench ./test/bench
	$(BIN)/bench --rollouts $(BENCH_PROFILE_ROLLOUTS) --replicas 10 --timeout 60m \
		--cpuprofile docs/performance/release-$(BENCH_PROFILE_ROLLOUTS)x10.cpu.pprof \
		--memprofile docs/performance/release-$(BENCH_PROFILE_ROLLOUTS)x10.heap.pprof \
		| tee docs/performance/release-$(BENCH_PROFILE_ROLLOUTS)x10.txt

.PHONY: bench-gitops
bench-gitops: controlplane ## Run only the gitops benchmark: 100 Rollouts bound to one GitGate, webhook approvals and reverts.
	go run ./test/bench --scenario=gitops

CHAOS_TIMEOUT ?= 60m

.PHONY: chaos
chaos: controlplane ## Run the long fault tests (test/chaos): kill storms, leader failover, kube-apiserver restarts and etcd pauses while releases run; CHAOS_KILLS sets the storm's kills (default 50).
	go test -tags chaos -count=1 -timeout $(CHAOS_TIMEOUT) -v ./test/chaos/

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each (default 30s); crashers are kept under testdata/fuzz.
	hack/fuzz.sh

.PHONY: verify
verify: generate manifests fmt ## Regenerate everything and fail if the tree changed.
	go mod tidy
	@if [ -n "$$(git status --porcelain)" ]; then \
		echo "make verify: generated files or formatting are out of date:"; \
		git status --porcelain; git --no-pager diff --stat; exit 1; \
	fi

##@ Run

.PHONY: demo
demo: ## Tell the GitOps story live: real Flux applies a pull request, a label approves, git revert rolls back (first run builds the control plane and Flux).
	go run ./test/demo

.PHONY: demo-basic
demo-basic: ## Run the kubectl-only multi-batch release on a local control plane, live.
	go run ./test/demo --basic

.PHONY: cluster-up
cluster-up: controlplane ## Start a local control plane in the background and print its KUBECONFIG.
	go build -o $(BIN)/sluice-cluster ./cmd/sluice-cluster
	$(BIN)/sluice-cluster up --detach --dir $(CLUSTER_DIR)

.PHONY: cluster-down
cluster-down: ## Stop the local control plane started by cluster-up.
	go build -o $(BIN)/sluice-cluster ./cmd/sluice-cluster
	$(BIN)/sluice-cluster down --dir $(CLUSTER_DIR)

.PHONY: run
run: ## Run the manager against $KUBECONFIG as a local process acting as the user sluice-local (installs the CRDs first).
	go run ./cmd/sluice --local --install-crds --as=sluice-local --as-group=system:masters --metrics-bind-address=127.0.0.1:8080 --health-probe-bind-address=127.0.0.1:8081

##@ Tools

$(CONTROLLER_GEN):
	mkdir -p $(BIN)
	GOBIN=$(BIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(BIN)/controller-gen $@

.PHONY: helm
helm: $(HELM) ## Build helm into ./bin (the chart's tests use it).

$(HELM):
	mkdir -p $(BIN)
	GOBIN=$(BIN) go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
	mv $(BIN)/helm $@

$(GOLANGCI_LINT):
	mkdir -p $(BIN)
	GOBIN=$(BIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(BIN)/golangci-lint $@
