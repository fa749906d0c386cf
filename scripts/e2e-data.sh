#!/usr/bin/env bash
# Regenerates the e2e requests and replay sessions in test_data/ from
# conformance cases (tests/conformance/, and the project's own tests/cases/): each request is the case's AdmissionRequest, and each
# session holds the host calls the policy really makes for it, answered from
# the case's cluster (recorded by kop-run in kwctl's session format).
#
#   scripts/e2e-data.sh            (after `make policy.wasm`)
#
# The settings_*.yaml files are written by hand and not touched here.
set -euo pipefail
cd "$(dirname "$0")/.."

cases=(
  "pod-static-ip-conflict       240-seed-example-conflict"
  "pod-static-ip-free           004-pod-e2e-static-ip-success"
  "pod-dual-stack-conflict      011-pod-dual-stack-conflict-on-v4"
  "pod-ippool-conflict          037-pod-ippool-single-ip-conflict"
  "pod-ippool-name-missing      035-pod-ippool-name-missing"
  "deployment-ippool-conflict   076-deployment-ippool-conflict"
  "deployment-ippool-free       077-deployment-ippool-free"
  "deployment-ippool-warns      334-i13-deployment-create-replicas-more-than-groups-warns"
  "subnet-overlap               159-subnet-overlap-ovn-default-same-vpc"
  "subnet-adjacent              164-subnet-adjacent-no-overlap-allowed"
  "subnet-apiserver-ip          287-i9-apiserver-ip-from-service-lookup"
  "subnet-delete-in-use         192-subnet-delete-with-v6-ips-in-use"
  "vpc-same-name-as-subnet      194-vpc-create-same-name-as-subnet"
  "vpc-valid                    195-vpc-validate-valid-vpc"
  "vip-not-in-subnet            213-vip-e2e-v4-not-in-subnet"
  "vip-valid                    214-vip-create-valid"
  "ip-unsupported-pod-type      238-ipcr-create-unsupported-podtype"
  "natgw-valid                  218-natgw-create-allowed"
  "natgw-invalid-lan-ip         219-natgw-create-invalid-lanip"
  "dnat-valid                   230-iptables-dnat-min-valid-port"
  "dnat-internal-port-zero      233-iptables-dnat-internal-port-zero-rejected"
  "eip-valid                    ../cases/n01-iptables-eip-create-allowed"
  "eip-outside-external-subnet  ../cases/n02-iptables-eip-create-not-in-external-subnet"
  "snat-valid                   ../cases/n08-iptables-snat-create-allowed"
  "snat-invalid-cidr            ../cases/n09-iptables-snat-create-invalid-cidr"
  "fip-valid                    ../cases/n11-iptables-fip-create-allowed"
  "fip-eip-used-by-dnat         ../cases/n12-iptables-fip-create-eip-used-by-dnat"
  "ovn-eip-valid                ../cases/o01-ovn-eip-create-allowed"
  "ovn-eip-outside-subnet       ../cases/o02-ovn-eip-create-not-in-external-subnet"
  "ovn-dnat-valid               ../cases/o06-ovn-dnat-create-allowed"
  "ovn-dnat-port-not-a-number   ../cases/o07-ovn-dnat-create-port-not-a-number"
  "ovn-snat-valid               ../cases/o11-ovn-snat-create-allowed"
  "ovn-snat-vpc-without-cidr    ../cases/o12-ovn-snat-create-vpc-without-cidr"
  "ovn-fip-valid                ../cases/o13-ovn-fip-create-allowed"
  "ovn-fip-without-ip           ../cases/o14-ovn-fip-create-without-ip"
)

for line in "${cases[@]}"; do
  read -r name case <<<"$line"
  cargo run --locked --profile host -q -p testhost --bin kop-run -- policy.wasm \
    -r "tests/conformance/$case.json" \
    --save-request "test_data/$name.json" \
    --record-host-capabilities-interactions "test_data/session_$name.yml" >/dev/null
  echo "test_data/$name.json, test_data/session_$name.yml"
done

# The seed request again, with the IP list failing as it does when the
# policy-server's ServiceAccount may not list IPs.
cargo run --locked --profile host -q -p testhost --bin kop-run -- policy.wasm \
  -r tests/conformance/240-seed-example-conflict.json \
  --fail 'kubeovn.io/v1/IP=ips.kubeovn.io is forbidden: User "system:serviceaccount:kubewarden:policy-server" cannot list resource "ips" in API group "kubeovn.io" at the cluster scope' \
  --record-host-capabilities-interactions test_data/session_pod-ip-lookup-fails.yml >/dev/null
echo "test_data/session_pod-ip-lookup-fails.yml"
