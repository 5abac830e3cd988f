# mysqlbench-operator Makefile (kubebuilder layout). `make help` lists the targets.

IMG ?= ghcr.io/mysqlbench/mysqlbench-operator:dev
SYSBENCH_IMG ?= ghcr.io/mysqlbench/sysbench:1.0.20

# Kubernetes version of the envtest API server: setup-envtest's pattern, and the exact version the
# offline fallback builds from the Go module proxy (see hack/envtest-assets.sh).
ENVTEST_K8S_VERSION ?= 1.33.x
K8S_BUILD_VERSION ?= v1.33.13
ETCD_BUILD_VERSION ?= v3.5.21

# Pinned tool versions, installed into bin/ from the Go module proxy.
CONTROLLER_TOOLS_VERSION ?= v0.18.0
GOLANGCI_LINT_VERSION ?= v2.15.0
SETUP_ENVTEST_VERSION ?= v0.25.1

LOCALBIN ?= $(shell pwd)/bin
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
SETUP_ENVTEST ?= $(LOCALBIN)/setup-envtest-$(SETUP_ENVTEST_VERSION)

# Packages whose tests need only Go (envtest packages get KUBEBUILDER_ASSETS from test-assets).
GO_TEST_FLAGS ?= -count=1
SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate the CRD and RBAC manifests under config/.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd:allowDangerousTypes=true paths="./..." output:crd:artifacts:config=config/crd/bases

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./..."

.PHONY: fmt
fmt: ## Run gofmt on the code.
	gofmt -l -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint.
	$(GOLANGCI_LINT) run ./...

.PHONY: verify
verify: manifests generate ## Fail when generated files or formatting are stale (CI).
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: run make fmt"; exit 1; }
	@git diff --exit-code -- config api || { echo "generated files are stale: run make manifests generate and commit"; exit 1; }
	@test -z "$$(git ls-files --others --exclude-standard config api)" || { git ls-files --others --exclude-standard config api; echo "untracked generated files: commit them"; exit 1; }

.PHONY: test-assets
test-assets: $(SETUP_ENVTEST) ## Get the envtest API server and etcd (setup-envtest, else built offline).
	@SETUP_ENVTEST=$(SETUP_ENVTEST) ENVTEST_K8S_VERSION=$(ENVTEST_K8S_VERSION) K8S_BUILD_VERSION=$(K8S_BUILD_VERSION) ETCD_BUILD_VERSION=$(ETCD_BUILD_VERSION) hack/envtest-assets.sh >/dev/null

.PHONY: test
test: manifests generate fmt vet test-assets ## Run all tests (envtest against a real API server, real sysbench when installed).
	KUBEBUILDER_ASSETS="$$(SETUP_ENVTEST=$(SETUP_ENVTEST) ENVTEST_K8S_VERSION=$(ENVTEST_K8S_VERSION) K8S_BUILD_VERSION=$(K8S_BUILD_VERSION) ETCD_BUILD_VERSION=$(ETCD_BUILD_VERSION) hack/envtest-assets.sh)" \
		go test $(GO_TEST_FLAGS) ./...

##@ Build

.PHONY: build
build: manifests generate fmt vet ## Build the manager binary into bin/manager.
	CGO_ENABLED=0 go build -trimpath -o bin/manager ./cmd

.PHONY: run
run: manifests generate fmt vet ## Run the manager against the cluster of your kubeconfig.
	go run ./cmd

##@ Tools

$(LOCALBIN):
	mkdir -p $(LOCALBIN)

$(CONTROLLER_GEN): | $(LOCALBIN)
	$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))

$(GOLANGCI_LINT): | $(LOCALBIN)
	$(call go-install-tool,$(GOLANGCI_LINT),github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION))

$(SETUP_ENVTEST): | $(LOCALBIN)
	$(call go-install-tool,$(SETUP_ENVTEST),sigs.k8s.io/controller-runtime/tools/setup-envtest,$(SETUP_ENVTEST_VERSION))

# go-install-tool installs $2@$3 as $1 (a versioned name, so bumping a version re-installs).
define go-install-tool
@[ -f "$(1)" ] || { \
	set -e; \
	pkg=$(2)@$(3); \
	echo "Installing $${pkg}"; \
	GOBIN=$(LOCALBIN) go install $${pkg}; \
	mv "$(LOCALBIN)/$$(basename $(2))" "$(1)"; \
	ln -sf "$$(basename $(1))" "$(LOCALBIN)/$$(basename $(2))"; \
}
endef
