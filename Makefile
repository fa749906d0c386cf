# kube-ovn-policy: build, test and package the Kubewarden policy.
#
#   make policy.wasm        build the policy (wasm32-wasip1, release profile)
#   make run-example        build it and evaluate test_data/pod-static-ip-conflict.json
#   make test               fmt + lint + unit tests + the compiled policy in a waPC host
#   make conformance CASES=<dir>   run conformance case files through policy.wasm
#   make annotated-policy.wasm     needs kwctl (not in any registry; see README)
#   make e2e-tests          needs kwctl and bats; skipped with a message without kwctl

CARGO        ?= cargo
CARGO_FLAGS  ?= --locked
HOST_PROFILE := --profile host
CASES        ?= tests/conformance
EXAMPLE      ?= test_data/pod-static-ip-conflict.json
WASM_TARGET  := wasm32-wasip1
SOURCES      := $(shell find src -name '*.rs') Cargo.toml Cargo.lock

.PHONY: all run-example test unit-tests host-tests fmt lint conformance e2e-tests clean

all: policy.wasm

policy.wasm: $(SOURCES)
	$(CARGO) build $(CARGO_FLAGS) --target=$(WASM_TARGET) --release -p kube-ovn-policy
	cp target/$(WASM_TARGET)/release/kube_ovn_policy.wasm policy.wasm
	@echo "policy.wasm: $$(wc -c < policy.wasm) bytes"

run-example: policy.wasm
	$(CARGO) run $(CARGO_FLAGS) $(HOST_PROFILE) -q -p testhost --bin kop-run -- policy.wasm $(EXAMPLE)

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

conformance: policy.wasm
	$(CARGO) run $(CARGO_FLAGS) $(HOST_PROFILE) -q -p testhost --bin conformance -- policy.wasm $(CASES)

annotated-policy.wasm: policy.wasm metadata.yml README.md
	@command -v kwctl >/dev/null || { echo "kwctl is not installed: it is built from Kubewarden's source (see README, 'Tools')"; exit 1; }
	kwctl annotate -m metadata.yml -u README.md -o annotated-policy.wasm policy.wasm

e2e-tests:
	@if command -v kwctl >/dev/null; then \
		$(MAKE) annotated-policy.wasm && bats e2e.bats; \
	else \
		echo "e2e-tests skipped: kwctl is not installed (it is in no package registry; see README)"; \
	fi

clean:
	$(CARGO) clean
	rm -f policy.wasm annotated-policy.wasm
