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
HELM_VERSION ?= v3.22.0
KUSTOMIZE_VERSION ?= v5.8.2
KUBECONFORM_VERSION ?= v0.8.0
CRANE_VERSION ?= v0.22.1
KIND_VERSION ?= v0.33.0
GOVULNCHECK_VERSION ?= v1.9.0
GOTPC_VERSION ?= v1.0.7
# The Go vulnerability database as a Go module (vuln.go.dev's data): vulncheck builds it offline
# where vuln.go.dev does not answer. Bump it to check against newer reports.
VULNDB_VERSION ?= v0.0.0-20261105234957-e22db6528018

LOCALBIN ?= $(shell pwd)/bin
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
GOTPC ?= $(LOCALBIN)/go-tpc-$(GOTPC_VERSION)
SETUP_ENVTEST ?= $(LOCALBIN)/setup-envtest-$(SETUP_ENVTEST_VERSION)
HELM ?= $(LOCALBIN)/helm-$(HELM_VERSION)
KUSTOMIZE ?= $(LOCALBIN)/kustomize-$(KUSTOMIZE_VERSION)
KUBECONFORM ?= $(LOCALBIN)/kubeconform-$(KUBECONFORM_VERSION)
CRANE ?= $(LOCALBIN)/crane-$(CRANE_VERSION)
KIND ?= $(LOCALBIN)/kind-$(KIND_VERSION)
GOVULNCHECK ?= $(LOCALBIN)/govulncheck-$(GOVULNCHECK_VERSION)
INDEXDB ?= $(LOCALBIN)/indexdb-$(VULNDB_VERSION)
# test/helm installs the chart and the kustomize build into an envtest API server with these.
export HELM KUSTOMIZE

# The project's Go code is built, vetted and tested as it ships (the manager, its image and the
# plugin): CGO_ENABLED=0 and -trimpath. The tests then run the code users run, and a cold
# machine compiles each package once for the tests, the images and the plugin, not twice.
export CGO_ENABLED = 0
export GOFLAGS := $(strip $(filter-out -trimpath,$(shell go env GOFLAGS)) -trimpath)

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
generate: $(CONTROLLER_GEN) dashboards ## Generate DeepCopy methods and the chart's Grafana dashboards.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./..."

DASHBOARDS_DIR := charts/mysqlbench-operator/files/grafana

.PHONY: dashboards
dashboards: ## Generate the chart's Grafana dashboards (internal/dashboards) into charts/mysqlbench-operator/files/grafana.
	go run ./hack/gen-dashboards -dir $(DASHBOARDS_DIR)

.PHONY: fmt
fmt: ## Run gofmt on the code.
	gofmt -l -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint.
	$(GOLANGCI_LINT) run ./...

.PHONY: vulncheck
vulncheck: $(GOVULNCHECK) $(INDEXDB) ## govulncheck: vulnerabilities the code reaches (vuln.go.dev, else its database offline; ADVISORY=1 reports without failing).
	GOVULNCHECK=$(GOVULNCHECK) INDEXDB=$(INDEXDB) VULNDB_VERSION=$(VULNDB_VERSION) ADVISORY=$(ADVISORY) hack/vulncheck.sh

.PHONY: verify
verify: manifests generate ## Fail when generated files, formatting or go.mod/go.sum are stale (CI).
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: run make fmt"; exit 1; }
	@go mod tidy -diff || { echo "go.mod/go.sum are not tidy (the diff above): run go mod tidy and commit"; exit 1; }
	@git diff --exit-code -- config api || { echo "generated files are stale: run make manifests generate and commit"; exit 1; }
	@test -z "$$(git ls-files --others --exclude-standard config api)" || { git ls-files --others --exclude-standard config api; echo "untracked generated files: commit them"; exit 1; }
	@git diff --exit-code -- $(DASHBOARDS_DIR) || { echo "the chart's Grafana dashboards are stale: run make dashboards and commit"; exit 1; }
	@test -z "$$(git ls-files --others --exclude-standard $(DASHBOARDS_DIR))" || { git ls-files --others --exclude-standard $(DASHBOARDS_DIR); echo "untracked files under $(DASHBOARDS_DIR): run make dashboards and commit them"; exit 1; }

.PHONY: host-deps-test host-deps-cluster
host-deps-test: ## Install (as root) the Debian packages of the real sysbench tests; warn otherwise.
	@hack/host-deps.sh --optional test
host-deps-cluster: ## Install (as root) the Debian packages of the local cluster, or name what is missing.
	@hack/host-deps.sh cluster

.PHONY: test-assets
test-assets: $(SETUP_ENVTEST) ## Get the envtest API server and etcd (setup-envtest, else built offline).
	@SETUP_ENVTEST=$(SETUP_ENVTEST) ENVTEST_K8S_VERSION=$(ENVTEST_K8S_VERSION) K8S_BUILD_VERSION=$(K8S_BUILD_VERSION) ETCD_BUILD_VERSION=$(ETCD_BUILD_VERSION) hack/envtest-assets.sh >/dev/null

.PHONY: test
test: host-deps-test manifests generate fmt vet test-assets $(HELM) $(KUSTOMIZE) $(GOTPC) ## Run all tests (envtest against a real API server, real sysbench and go-tpc against MariaDB).
	KUBEBUILDER_ASSETS="$$(SETUP_ENVTEST=$(SETUP_ENVTEST) ENVTEST_K8S_VERSION=$(ENVTEST_K8S_VERSION) K8S_BUILD_VERSION=$(K8S_BUILD_VERSION) ETCD_BUILD_VERSION=$(ETCD_BUILD_VERSION) hack/envtest-assets.sh)" \
		GOTPC=$(abspath $(GOTPC)) go test $(GO_TEST_FLAGS) ./...

.PHONY: test-e2e test-e2e-local test-chaos test-multinode test-cluster-ci test-cluster-all prove-verdicts test-e2e-gotpc bench-fidelity bench-fidelity-gotpc bench-fidelity-suite prove-suite measure-replication
test-e2e: ## Run test/e2e against the cluster of your kubeconfig (operator installed; E2E_IMAGES, E2E_SYSBENCH_IMAGE; E2E_RUN picks cases).
	go test -tags e2e -count=1 -v -run "$${E2E_RUN:-^Test}" -timeout 60m ./test/e2e/...

test-e2e-local: host-deps-cluster $(HELM) ## Local cluster + operator by Helm + test/e2e, then stop the cluster (needs root; KEEP_CLUSTER=1 keeps it).
	HELM=$(HELM) K8S_BUILD_VERSION=$(K8S_BUILD_VERSION) hack/e2e-local.sh

test-chaos: host-deps-cluster $(HELM) ## Local cluster + operator by Helm + test/chaos (manager, server, sysbench pod and API server broken under real runs), then stop the cluster (root).
	HELM=$(HELM) K8S_BUILD_VERSION=$(K8S_BUILD_VERSION) hack/e2e-local.sh chaos

test-multinode: host-deps-cluster $(HELM) ## Local cluster with 2 database nodes + operator: parallel targets vs sequential wall time, 3 runs from 2 namespaces sharing the pool, a server killed on one node (root; MULTINODE_CASES=ci: the first only).
	HELM=$(HELM) K8S_BUILD_VERSION=$(K8S_BUILD_VERSION) hack/e2e-local.sh multinode

test-cluster-ci: host-deps-cluster $(HELM) ## CI's cluster phase: one case per capability of test/e2e, test/chaos and the multi-node cases, on one cluster with two database nodes (one bring-up; root).
	HELM=$(HELM) K8S_BUILD_VERSION=$(K8S_BUILD_VERSION) hack/e2e-local.sh ci

test-cluster-all: host-deps-cluster $(HELM) ## Every case of test/e2e, test/chaos and the multi-node cases (what test-cluster-ci leaves out too) on one cluster with two database nodes (root; about an hour).
	HELM=$(HELM) K8S_BUILD_VERSION=$(K8S_BUILD_VERSION) hack/e2e-local.sh all

prove-verdicts: ## A schedule's nights of one spec, then a my.cnf change flagged and confirmed (about 100 min on the local cluster; cluster of your kubeconfig).
	E2E_VERDICT=1 go test -tags e2e -count=1 -v -run '^TestScheduleVerdictOnARealCluster$$' -timeout 120m ./test/e2e/...

measure-replication: ## QPS noise within one server instance vs between instances (serverInstance Shared vs PerRepetition; MySQL 9.7 and MariaDB 10.11) on the cluster of your kubeconfig.
	E2E_REPLICATION_FULL=1 E2E_IMAGES=$${E2E_IMAGES:-mysql:9.7,mariadb:10.11} go test -tags e2e -count=1 -v -run '^TestReplicationOnARealCluster$$' -timeout 120m ./test/e2e/...

bench-fidelity: ## QPS through the operator vs the same sysbench by hand on the client node, interleaved, until the ratio's 95 % interval is within ±2 % (cluster of your kubeconfig).
	go test -tags e2e -count=1 -v -run '^$$' -bench '^BenchmarkFidelity$$' -benchtime=1x -timeout 120m ./test/e2e/...

bench-fidelity-suite: ## bench-fidelity for a run of two workloads (oltp_point_select, oltp_read_only): each workload's operator QPS vs the same sysbench by hand (cluster of your kubeconfig).
	go test -tags e2e -count=1 -v -run '^$$' -bench '^BenchmarkSuiteFidelity$$' -benchtime=1x -timeout 120m ./test/e2e/...

prove-suite: ## spec.preset over MySQL 9.7, MariaDB 10.11 and 11.8 end to end, then the same ten workloads as ten one-workload runs: the wall-time ratio (about 40 min; cluster of your kubeconfig).
	E2E_SUITE_RATIO=1 go test -tags e2e -count=1 -v -run '^TestSuiteOnARealCluster$$' -timeout 120m ./test/e2e/...

test-e2e-gotpc: ## go-tpc's TPC-C on MySQL 9.7 and MariaDB 11.8 with the consistency check on both (cluster of your kubeconfig; slow: minutes per check).
	E2E_GOTPC_CHECK=$${E2E_GOTPC_CHECK:-all} go test -tags e2e -count=1 -v -run '^TestGoTPCOnARealCluster$$' -timeout 90m ./test/e2e/...

bench-fidelity-gotpc: ## tpmC through the operator vs the same go-tpc by hand on the client node, interleaved, until the ratio's 95 % interval is within ±2 % (cluster of your kubeconfig).
	go test -tags e2e -count=1 -v -run '^$$' -bench '^BenchmarkGoTPCFidelity$$' -benchtime=1x -timeout 120m ./test/e2e/...

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

.PHONY: controller-gen golangci-lint setup-envtest
controller-gen: $(CONTROLLER_GEN) ## Install controller-gen into bin/.
golangci-lint: $(GOLANGCI_LINT) ## Install golangci-lint into bin/.
setup-envtest: $(SETUP_ENVTEST) ## Install setup-envtest into bin/.

$(CONTROLLER_GEN): | $(LOCALBIN)
	$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))

# go-tpc runs TPC-C in internal/gotpc's real tests (and in the go-tpc client image).
$(GOTPC): | $(LOCALBIN)
	$(call go-install-tool,$(GOTPC),github.com/pingcap/go-tpc/cmd/go-tpc,$(GOTPC_VERSION))

$(GOLANGCI_LINT): | $(LOCALBIN)
	$(call go-install-tool,$(GOLANGCI_LINT),github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION))

$(SETUP_ENVTEST): | $(LOCALBIN)
	$(call go-install-tool,$(SETUP_ENVTEST),sigs.k8s.io/controller-runtime/tools/setup-envtest,$(SETUP_ENVTEST_VERSION))

.PHONY: govulncheck
govulncheck: $(GOVULNCHECK) ## Install govulncheck into bin/.

$(GOVULNCHECK): | $(LOCALBIN)
	$(call go-install-tool,$(GOVULNCHECK),golang.org/x/vuln/cmd/govulncheck,$(GOVULNCHECK_VERSION))

# The vulnerability database's own indexer, at the database's version.
$(INDEXDB): | $(LOCALBIN)
	$(call go-install-tool,$(INDEXDB),golang.org/x/vulndb/cmd/indexdb,$(VULNDB_VERSION))

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

##@ Deployment
# Helm chart (charts/), kustomize (config/default), the manager image and a kind cluster
# (test/kind). kubectl, Docker and kind clusters are the user's; the tools come from bin/.

CHART ?= charts/mysqlbench-operator
RELEASE ?= mysqlbench-operator
NAMESPACE ?= mysqlbench-system
KIND_CLUSTER ?= mysqlbench
KUBECTL ?= kubectl
CONTAINER_TOOL ?= docker
IMAGE_TAR ?= $(LOCALBIN)/images/manager.tar

.PHONY: helm-crds
# The chart's roles are config/rbac's: the generated manager role and the hand-written ones.
CHART_ROLES = role:manager-role manager_cluster_role:manager-cluster-role leader_election_role:leader-election-role \
	metrics_auth_role:metrics-auth-role metrics_reader_role:metrics-reader-role kubelet_stats_role:kubelet-stats-role \
	results_database_role:results-database-role

helm-crds: manifests ## Copy the generated CRDs, the RBAC roles and the admission policy from config/ into the chart.
	rm -f $(CHART)/crds/*.yaml
	cp config/crd/bases/*.yaml $(CHART)/crds/
	@for r in $(CHART_ROLES); do cp config/rbac/$${r%%:*}.yaml $(CHART)/files/$${r#*:}.yaml; done
	cp config/admission/policy.yaml $(CHART)/files/admission-policy.yaml

.PHONY: verify-chart
verify-chart: ## Fail when the chart's CRDs, RBAC rules or admission policy differ from config/ (fix: make helm-crds).
	@stale=0; diff -r config/crd/bases $(CHART)/crds || stale=1; \
	for r in $(CHART_ROLES); do diff config/rbac/$${r%%:*}.yaml $(CHART)/files/$${r#*:}.yaml || stale=1; done; \
	diff config/admission/policy.yaml $(CHART)/files/admission-policy.yaml || stale=1; \
	[ $$stale = 0 ] || { echo "the chart is stale: run make helm-crds and commit"; exit 1; }

.PHONY: lint-chart
lint-chart: verify-chart $(HELM) $(KUBECONFORM) ## helm lint --strict; rendered chart validated against Kubernetes schemas offline.
	$(HELM) lint --strict $(CHART)
	$(HELM) lint --strict $(CHART) --set 'watchNamespaces={team-a,team-b}' --set serviceMonitor.enabled=true --set replicas=2
	$(HELM) lint --strict $(CHART) --set grafana.dashboard.enabled=true
	$(HELM) template $(RELEASE) $(CHART) --namespace $(NAMESPACE) --include-crds \
		| KUBECONFORM=$(KUBECONFORM) hack/validate-manifests.sh
	$(HELM) template $(RELEASE) $(CHART) --namespace $(NAMESPACE) --include-crds \
		--set 'watchNamespaces={team-a,team-b}' --set serviceMonitor.enabled=true --set replicas=2 \
		--set grafana.dashboard.enabled=true \
		| SKIP_KINDS=ServiceMonitor KUBECONFORM=$(KUBECONFORM) hack/validate-manifests.sh

.PHONY: validate-kustomize
validate-kustomize: $(KUSTOMIZE) $(KUBECONFORM) ## kustomize build config/default validated offline (config/prometheus must build).
	$(KUSTOMIZE) build config/default | KUBECONFORM=$(KUBECONFORM) hack/validate-manifests.sh
	$(KUSTOMIZE) build config/prometheus >/dev/null

.PHONY: test-helm
test-helm: test-assets $(HELM) $(KUSTOMIZE) ## helm install and kustomize apply against an envtest API server (test/helm).
	KUBEBUILDER_ASSETS="$$(SETUP_ENVTEST=$(SETUP_ENVTEST) ENVTEST_K8S_VERSION=$(ENVTEST_K8S_VERSION) K8S_BUILD_VERSION=$(K8S_BUILD_VERSION) ETCD_BUILD_VERSION=$(ETCD_BUILD_VERSION) hack/envtest-assets.sh)" \
		go test $(GO_TEST_FLAGS) -v ./test/helm/...

.PHONY: check-deploy
check-deploy: verify-chart lint-chart validate-kustomize test-helm ## Every deployment check (CI).

.PHONY: build-installer
build-installer: manifests $(KUSTOMIZE) ## Write dist/install.yaml (CRDs, RBAC, manager with IMG) for kubectl apply.
	mkdir -p dist
	KUSTOMIZE=$(KUSTOMIZE) IMG=$(IMG) hack/kustomize-build.sh > dist/install.yaml

.PHONY: install
install: manifests $(KUSTOMIZE) ## Install only the CRDs into the cluster of your kubeconfig.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: manifests $(KUSTOMIZE) ## Remove the CRDs (and with them every BenchmarkRun) from the cluster.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: deploy
deploy: manifests $(KUSTOMIZE) ## Deploy the operator with kustomize (IMG) into the cluster of your kubeconfig.
	KUSTOMIZE=$(KUSTOMIZE) IMG=$(IMG) hack/kustomize-build.sh | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: $(KUSTOMIZE) ## Remove what make deploy created, CRDs and BenchmarkRuns included.
	KUSTOMIZE=$(KUSTOMIZE) IMG=$(IMG) hack/kustomize-build.sh | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: pin-images
pin-images: $(CRANE) ## Pin the Dockerfiles' base images to the digests their tags name now (needs the registries; review and commit).
	CRANE=$(CRANE) hack/pin-base-images.sh

.PHONY: docker-build
docker-build: ## Build the manager image IMG with Docker (CONTAINER_TOOL=podman works too).
	$(CONTAINER_TOOL) build -t $(IMG) .

.PHONY: docker-build-sysbench
docker-build-sysbench: ## Build the sysbench image SYSBENCH_IMG.
	$(CONTAINER_TOOL) build -t $(SYSBENCH_IMG) images/sysbench

.PHONY: docker-push
docker-push: ## Push the manager image IMG.
	$(CONTAINER_TOOL) push $(IMG)

.PHONY: gotpc-image
gotpc-image: $(CRANE) ## Build the go-tpc client image (go-tpc and the launcher, static) without Docker into bin/images/go-tpc.tar.
	CRANE=$(CRANE) GOTPC_VERSION=$(GOTPC_VERSION) OUT=$(LOCALBIN)/images/go-tpc.tar hack/build-gotpc-image.sh

.PHONY: image-offline
image-offline: $(CRANE) ## Build the manager image without Docker into IMAGE_TAR (docker load / kind load image-archive).
	CRANE=$(CRANE) IMG=$(IMG) OUT=$(IMAGE_TAR) hack/build-image-offline.sh

# The kind node image built offline (hack/build-kind-node-image.sh); its tarball is cached in
# ~/.cache/mysqlbench-operator/kind-node/$(K8S_BUILD_VERSION)/kind-node.tar.
KIND_OFFLINE_NODE_IMAGE ?= localhost/mysqlbench/kind-node:$(K8S_BUILD_VERSION)
# The node image kind-up starts: empty is kind's own (kindest/node); test-e2e-kind uses the one
# built offline.
KIND_NODE_IMAGE ?=
# What kind-load puts into the nodes: docker builds IMG and SYSBENCH_IMG with CONTAINER_TOOL and
# loads them from there; archives loads KIND_ARCHIVES, the images make cluster-images builds
# offline (manager, sysbench, go-tpc and the SERVER_IMAGES).
KIND_LOAD ?= docker
KIND_ARCHIVES ?= $(foreach i,manager sysbench go-tpc $(subst :,-,$(SERVER_IMAGES)),$(LOCALBIN)/images/$(i).tar)
KIND_ENV = KIND=$(KIND) KIND_CLUSTER=$(KIND_CLUSTER) K8S_BUILD_VERSION=$(K8S_BUILD_VERSION)

.PHONY: kind-node-image
kind-node-image: ## Build the kind node image (KIND_OFFLINE_NODE_IMAGE) offline into podman and the cache (root, podman; first time ~10 min).
	K8S_VERSION=$(K8S_BUILD_VERSION) ETCD_VERSION=$(ETCD_BUILD_VERSION) KIND_NODE_IMAGE=$(or $(KIND_NODE_IMAGE),$(KIND_OFFLINE_NODE_IMAGE)) hack/build-kind-node-image.sh

.PHONY: kind-node-check
kind-node-check: ## Boot the offline kind node image once without a cluster (podman, --network none) and check what kind relies on.
	K8S_VERSION=$(K8S_BUILD_VERSION) KIND_NODE_IMAGE=$(or $(KIND_NODE_IMAGE),$(KIND_OFFLINE_NODE_IMAGE)) hack/check-kind-node-image.sh

.PHONY: kind-up
kind-up: $(KIND) ## Create the kind cluster of test/kind/cluster.yaml: database and client pools (Docker; or KIND_EXPERIMENTAL_PROVIDER=podman, KIND_NODE_IMAGE: first checks that podman can run a container on a network).
	$(KIND_ENV) KIND_NODE_IMAGE=$(KIND_NODE_IMAGE) hack/kind.sh up

.PHONY: kind-load
kind-load: $(KIND) $(if $(filter archives,$(KIND_LOAD)),cluster-images,docker-build docker-build-sysbench) ## Build the manager and sysbench images and load them into kind (KIND_LOAD=archives: all images, built offline).
	$(KIND_ENV) KIND_LOAD=$(KIND_LOAD) KIND_IMAGES="$(IMG) $(SYSBENCH_IMG)" KIND_ARCHIVES="$(KIND_ARCHIVES)" hack/kind.sh load

.PHONY: kind-deploy
kind-deploy: $(HELM) ## helm upgrade --install the chart into kind with the loaded images.
	img='$(IMG)'; $(HELM) upgrade --install $(RELEASE) $(CHART) --kube-context kind-$(KIND_CLUSTER) \
		--namespace $(NAMESPACE) --create-namespace -f test/kind/values.yaml \
		--set image.repository="$${img%:*}" --set image.tag="$${img##*:}" --set image.pullPolicy=IfNotPresent \
		--set sysbenchImage=$(SYSBENCH_IMG) --wait --timeout 5m

.PHONY: kind-down
kind-down: $(KIND) ## Delete the kind cluster (and put back what kind-up changed on the host).
	$(KIND_ENV) hack/kind.sh down

.PHONY: test-e2e-kind
test-e2e-kind: $(KIND) $(HELM) ## From nothing, offline, with podman: node image, kind-up, kind-load, kind-deploy, README's first run, test-e2e, kind-down (root; KEEP_CLUSTER=1 keeps it).
	$(KIND_ENV) KIND_NODE_IMAGE=$(or $(KIND_NODE_IMAGE),$(KIND_OFFLINE_NODE_IMAGE)) hack/kind.sh e2e

.PHONY: helm kustomize kubeconform crane kind
helm: $(HELM) ## Install helm into bin/ (a ~5 min build).
kustomize: $(KUSTOMIZE) ## Install kustomize into bin/.
kubeconform: $(KUBECONFORM) ## Install kubeconform into bin/.
crane: $(CRANE) ## Install crane into bin/.
kind: $(KIND) ## Install kind into bin/.

$(HELM): | $(LOCALBIN)
	$(call go-install-tool,$(HELM),helm.sh/helm/v3/cmd/helm,$(HELM_VERSION))

# go install names kustomize's binary after the module (kustomize), not the package's last element
# (v5), so go-install-tool does not fit.
$(KUSTOMIZE): | $(LOCALBIN)
	@[ -f "$@" ] || { \
		set -e; \
		echo "Installing sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)"; \
		GOBIN=$(LOCALBIN) go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION); \
		mv "$(LOCALBIN)/kustomize" "$@"; \
		ln -sf "$(notdir $@)" "$(LOCALBIN)/kustomize"; \
	}

$(KUBECONFORM): | $(LOCALBIN)
	$(call go-install-tool,$(KUBECONFORM),github.com/yannh/kubeconform/cmd/kubeconform,$(KUBECONFORM_VERSION))

$(CRANE): | $(LOCALBIN)
	$(call go-install-tool,$(CRANE),github.com/google/go-containerregistry/cmd/crane,$(CRANE_VERSION))

$(KIND): | $(LOCALBIN)
	$(call go-install-tool,$(KIND),sigs.k8s.io/kind,$(KIND_VERSION))

##@ Local cluster

LOCALCLUSTER ?= test/localcluster/cluster.sh

.PHONY: cluster-binaries cluster-images cluster-load cluster-up cluster-down cluster-status cluster-check
cluster-binaries: ## Build the local cluster's binaries into ~/.cache/mysqlbench-operator (first time: ~15-25 min).
	hack/build-cluster-binaries.sh

# Server images of the local cluster (hack/build-debian-images.sh knows these four).
SERVER_IMAGES ?= mysql:9.7 mariadb:10.5 mariadb:10.11 mariadb:11.8
cluster-images: $(CRANE) image-offline gotpc-image ## Build the manager, server (SERVER_IMAGES), sysbench and go-tpc images offline into bin/images (debootstrap; first time ~8 min).
	CRANE=$(CRANE) SERVER_IMAGES="$(SERVER_IMAGES)" hack/build-debian-images.sh

cluster-load: $(CRANE) ## Serve the images in bin/images/*.tar to the running local cluster (like kind load).
	CRANE=$(CRANE) $(LOCALCLUSTER) load $(wildcard $(IMAGE_TAR:manager.tar=)*.tar)

cluster-up: host-deps-cluster $(CRANE) ## Start a two-node cluster (database + client pools) in network namespaces; serves bin/images/*.tar.
	CRANE=$(CRANE) $(LOCALCLUSTER) up

cluster-down: ## Stop the local cluster and remove everything cluster-up created (idempotent).
	$(LOCALCLUSTER) down

cluster-status: ## Show the local cluster's processes and nodes.
	$(LOCALCLUSTER) status

cluster-check: ## Prove the local cluster works: pods on both nodes, cross-node traffic, DNS, Services.
	$(LOCALCLUSTER) check

.PHONY: demo demo-down
demo: host-deps-cluster $(HELM) plugin ## See it work: local cluster, the operator by Helm, MySQL 9.7 and MariaDB 10.11/11.8 with performance_schema ON and OFF, the QPS table and the charts as PNG files, then a small suite's relative-QPS table and heat map.
	HELM=$(HELM) K8S_BUILD_VERSION=$(K8S_BUILD_VERSION) hack/demo.sh

demo-down: ## Remove what make demo started (the local cluster with everything in it).
	$(LOCALCLUSTER) down

##@ kubectl plugin

# The plugin's release tag, one name for make, hack/plugin-release.sh and the krew template (krew
# wants semver with a leading v): make plugin-release VERSION=v0.1.0. make plugin without it
# builds v0.0.0-dev; a release refuses to guess. The name it once had fails rather than being
# ignored.
ifdef PLUGIN_VERSION
$(error PLUGIN_VERSION is no longer read: the plugin's version is VERSION, e.g. make plugin-release VERSION=$(PLUGIN_VERSION))
endif
# Stripped (-s -w: no symbol table, no DWARF) and without local paths (-trimpath): the binary
# users download, a third of the unstripped size; panics still print file:line.
PLUGIN_LDFLAGS = -s -w -X github.com/mysqlbench/mysqlbench-operator/internal/plugin.Version=$(or $(VERSION),v0.0.0-dev)

.PHONY: plugin plugin-size plugin-release
plugin: ## Build the kubectl plugin into bin/kubectl-mysqlbench (with bin/ on PATH: kubectl mysqlbench ...; VERSION=vX.Y.Z sets its version).
	CGO_ENABLED=0 go build -trimpath -ldflags "$(PLUGIN_LDFLAGS)" -o $(LOCALBIN)/kubectl-mysqlbench ./cmd/kubectl-mysqlbench

# 31.5 MB for linux/amd64 (2026-11), from 50.8 MB while it linked client-go's every API group:
# docs/plugin.md has every platform's.
plugin-size: plugin ## Build the plugin and fail if it is over 40 MB (hack/plugin-size.sh; plugin-release checks every platform).
	hack/plugin-size.sh $(LOCALBIN)/kubectl-mysqlbench

plugin-release: ## Cross-build the plugin into dist/plugin/ archives (linux/darwin amd64/arm64, windows/amd64), sha256s and the krew manifest: make plugin-release VERSION=vX.Y.Z.
	@test -n "$(VERSION)" || { echo "make plugin-release needs the release's version: make plugin-release VERSION=v0.1.0" >&2; exit 1; }
	VERSION=$(VERSION) hack/plugin-release.sh
