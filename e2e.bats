#!/usr/bin/env bats
# End-to-end tests: the annotated policy run by kwctl, every Kubernetes lookup
# answered from a replay session in test_data/ (kwctl's
# --replay-host-capabilities-interactions). Run with `make e2e-tests`; it
# needs kwctl (Kubewarden's releases or Homebrew: docs/testing.md), bats >= 1.5 and jq.
#
# The same cases run in this repository's waPC host in CI, where kwctl is
# absent (testhost/tests/e2e_sessions.rs reads this file). So each @test uses only
# these helpers, one call per line, with single-quoted messages:
#
#   evaluate <request.json> <session.yml> [<settings.yaml>]
#   assert_allowed
#   assert_allowed_with_warnings '<warning>'...   (exactly these, in order)
#   assert_denied <code> '<exact message>'
#   assert_denied_containing <code> '<part of the message>'
#   assert_settings_rejected '<part of kwctl's error>'
#
# Requests and sessions are made from conformance cases by
# scripts/e2e-data.sh (`make e2e-data`): each session was recorded by the real
# kwctl against the API server stand-in serving the case's cluster.

bats_require_minimum_version 1.5.0

setup() {
  if ! command -v kwctl >/dev/null; then
    skip "kwctl is not on PATH (Kubewarden's releases or Homebrew: docs/testing.md)"
  fi
}

evaluate() {
  local args=(run --allow-context-aware -r "test_data/$1"
    --replay-host-capabilities-interactions "test_data/$2")
  if [ -n "${3:-}" ]; then
    args+=(--settings-path "test_data/$3")
  fi
  run --separate-stderr kwctl "${args[@]}" annotated-policy.wasm
  echo "status = ${status}"
  echo "output = ${output}"
  echo "stderr = ${stderr}"
}

assert_allowed() {
  [ "$status" -eq 0 ]
  [ "$(jq -r .allowed <<<"$output")" = true ]
}

assert_allowed_with_warnings() {
  [ "$status" -eq 0 ]
  [ "$(jq -r .allowed <<<"$output")" = true ]
  [ "$(jq -c '.warnings // []' <<<"$output")" = "$(jq -cn '$ARGS.positional' --args "$@")" ]
}

assert_denied() {
  [ "$status" -eq 0 ]
  [ "$(jq -r .allowed <<<"$output")" = false ]
  [ "$(jq -r .status.code <<<"$output")" = "$1" ]
  [ "$(jq -r .status.message <<<"$output")" = "$2" ]
}

assert_denied_containing() {
  [ "$status" -eq 0 ]
  [ "$(jq -r .allowed <<<"$output")" = false ]
  [ "$(jq -r .status.code <<<"$output")" = "$1" ]
  [[ "$(jq -r .status.message <<<"$output")" == *"$2"* ]]
}

assert_settings_rejected() {
  [ "$status" -ne 0 ]
  [[ "$stderr" == *"$1"* ]]
}

@test "pod: a static IP held by another pod's IP CR is denied with upstream's message" {
  evaluate pod-static-ip-conflict.json session_pod-static-ip-conflict.yml
  assert_denied 403 'annotation static-ip 10.16.0.15 is conflict with ip crd static-7584848b74-fw9dm.default, ip 10.16.0.15'
}

@test "pod: a free static IP in its subnet is allowed" {
  evaluate pod-static-ip-free.json session_pod-static-ip-free.yml
  assert_allowed
}

@test "pod: a dual-stack static IP conflicting on its IPv4 half is denied" {
  evaluate pod-dual-stack-conflict.json session_pod-dual-stack-conflict.yml
  assert_denied 403 'annotation static-ip 10.16.0.20 is conflict with ip crd other-7f9c.default, ip 10.16.0.20,fd00:10:16::20'
}

@test "pod: an ip_pool address held by another pod is denied" {
  evaluate pod-ippool-conflict.json session_pod-ippool-conflict.yml
  assert_denied 403 'annotation static-ip 10.16.0.20 is conflict with ip crd other-7f9c.default, ip 10.16.0.20'
}

@test "pod: an ip_pool naming a missing IPPool is denied" {
  evaluate pod-ippool-name-missing.json session_pod-ippool-name-missing.yml
  assert_denied 403 'ippool "pool-missing" not found'
}

@test "ovn-dnat-rule: a lookup the API server forbids is a 400 rejection that says what could not be read" {
  evaluate ovn-dnat-eip-lookup-forbidden.json session_ovn-dnat-eip-lookup-forbidden.yml
  assert_denied 400 'cannot get kubeovn.io/v1 OvnEip "eip-a": error invoking host capability kubernetes.get_resource: Host error: Callback evaluation failure: ApiError: ovn-eips.kubeovn.io "eip-a" is forbidden: User "system:serviceaccount:kubewarden:policy-server" cannot get resource "ovn-eips" in API group "kubeovn.io" at the cluster scope: Forbidden'
}

@test "deployment: an ip_pool address held by another pod is denied" {
  evaluate deployment-ippool-conflict.json session_deployment-ippool-conflict.yml
  assert_denied 403 'annotation static-ip 10.16.0.40 is conflict with ip crd other-7f9c.default, ip 10.16.0.40'
}

@test "deployment: a free ip_pool is allowed" {
  evaluate deployment-ippool-free.json session_deployment-ippool-free.yml
  assert_allowed
}

@test "deployment: more replicas than ip_pool entries is allowed with a warning" {
  evaluate deployment-ippool-warns.json session_deployment-ippool-warns.yml
  assert_allowed_with_warnings 'ip_pool has 2 entries for 3 replicas'
}

@test "subnet: a CIDR overlapping another subnet of the VPC is a 409" {
  evaluate subnet-overlap.json session_subnet-overlap.yml settings_service-ip.yaml
  assert_denied 409 'subnet app-subnet cidr 10.16.10.0/24 is conflict with subnet ovn-default cidr 10.16.0.0/16'
}

@test "subnet: an adjacent CIDR is allowed" {
  evaluate subnet-adjacent.json session_subnet-adjacent.yml settings_service-ip.yaml
  assert_allowed
}

@test "subnet: a CIDR holding the apiserver ClusterIP of Service default/kubernetes is denied" {
  evaluate subnet-apiserver-ip.json session_subnet-apiserver-ip.yml
  assert_denied 403 'subnet svc-overlap cidr 10.96.0.0/24 conflicts with k8s apiserver svc ip 10.96.0.1'
}

@test "subnet: deleting a subnet whose addresses are in use is denied" {
  evaluate subnet-delete-in-use.json session_subnet-delete-in-use.yml settings_service-ip.yaml
  assert_denied 403 "can't delete subnet when any IPs in Using"
}

@test "vpc: a Vpc named like an existing Subnet is denied" {
  evaluate vpc-same-name-as-subnet.json session_vpc-same-name-as-subnet.yml
  assert_denied 400 'vpc and subnet cannot have the same name'
}

@test "vpc: a valid Vpc is allowed" {
  evaluate vpc-valid.json session_vpc-valid.yml
  assert_allowed
}

@test "vip: an address outside the subnet's CIDR is denied" {
  evaluate vip-not-in-subnet.json session_vip-not-in-subnet.yml
  assert_denied 400 'the V4ip 10.98.1.8 is not in the range of subnet subnet-vip, cidr 10.98.0.0/24'
}

@test "vip: an address inside the subnet is allowed" {
  evaluate vip-valid.json session_vip-valid.yml
  assert_allowed
}

@test "ip: an IP CR with an unknown podType is denied" {
  evaluate ip-unsupported-pod-type.json session_ip-unsupported-pod-type.yml
  assert_denied 400 'podType Pod is not supported'
}

@test "vpc-nat-gateway: a gateway with its LAN address in its subnet is allowed" {
  evaluate natgw-valid.json session_natgw-valid.yml
  assert_allowed
}

@test "vpc-nat-gateway: an invalid LAN address is denied" {
  evaluate natgw-invalid-lan-ip.json session_natgw-invalid-lan-ip.yml
  assert_denied 400 'lanIP invalid-ip is not a valid IP'
}

@test "iptables-eip: an EIP inside the external subnet is allowed" {
  evaluate eip-valid.json session_eip-valid.yml
  assert_allowed
}

@test "iptables-eip: an EIP outside the external subnet is denied" {
  evaluate eip-outside-external-subnet.json session_eip-outside-external-subnet.yml
  assert_denied 400 'the vip 10.5.205.10 is not in the range of subnet "ovn-vpc-external-network", cidr 10.5.204.0/24'
}

@test "iptables-dnat-rule: the lowest valid ports are allowed" {
  evaluate dnat-valid.json session_dnat-valid.yml
  assert_allowed
}

@test "iptables-dnat-rule: internal port 0 is denied" {
  evaluate dnat-internal-port-zero.json session_dnat-internal-port-zero.yml
  assert_denied 400 'internalPort 0 is not a valid port: must be between 1 and 65535'
}

@test "iptables-snat-rule: an SNAT rule for a CIDR is allowed" {
  evaluate snat-valid.json session_snat-valid.yml
  assert_allowed
}

@test "iptables-snat-rule: an internal CIDR that is no CIDR is denied" {
  evaluate snat-invalid-cidr.json session_snat-invalid-cidr.yml
  assert_denied 400 'invalid cidr 10.0.1.0'
}

@test "iptables-fip-rule: a FIP on an unused EIP is allowed" {
  evaluate fip-valid.json session_fip-valid.yml
  assert_allowed
}

@test "iptables-fip-rule: a FIP on an EIP a DNAT rule uses is denied" {
  evaluate fip-eip-used-by-dnat.json session_fip-eip-used-by-dnat.yml
  assert_denied 400 'EIP "eip-a" is already used by DNAT rule "dnat-a"; floating IP requires exclusive use of the EIP (FIP matches all traffic, shadowing port-specific DNAT rules)'
}

@test "ovn-eip: an OvnEip inside the external subnet is allowed" {
  evaluate ovn-eip-valid.json session_ovn-eip-valid.yml
  assert_allowed
}

@test "ovn-eip: an OvnEip outside the external subnet is denied" {
  evaluate ovn-eip-outside-subnet.json session_ovn-eip-outside-subnet.yml
  assert_denied 400 'the vip 10.5.205.10 is not in the range of subnet ovn-vpc-external-network, cidr 10.5.204.0/24'
}

@test "ovn-dnat-rule: a DNAT rule of an existing OvnEip is allowed" {
  evaluate ovn-dnat-valid.json session_ovn-dnat-valid.yml
  assert_allowed
}

@test "ovn-dnat-rule: a port that is no number is denied with Go's strconv error" {
  evaluate ovn-dnat-port-not-a-number.json session_ovn-dnat-port-not-a-number.yml
  assert_denied 400 'failed to parse spec externalPort http: strconv.Atoi: parsing "http": invalid syntax'
}

@test "ovn-snat-rule: an SNAT rule for a VPC subnet is allowed" {
  evaluate ovn-snat-valid.json session_ovn-snat-valid.yml
  assert_allowed
}

@test "ovn-snat-rule: a vpc without an IpCidr is denied" {
  evaluate ovn-snat-vpc-without-cidr.json session_ovn-snat-vpc-without-cidr.yml
  assert_denied 400 'should set spec v4 or v6 IpCidr (subnet cidr or ip address) when spec vpc is set'
}

@test "ovn-fip: a FIP of an existing OvnEip is allowed" {
  evaluate ovn-fip-valid.json session_ovn-fip-valid.yml
  assert_allowed
}

@test "ovn-fip: a FIP without an address is denied" {
  evaluate ovn-fip-without-ip.json session_ovn-fip-without-ip.yml
  assert_denied 400 'should set spec ipName or ip'
}

@test "settings: an invalid defaultVpc is refused, naming the field" {
  evaluate pod-static-ip-conflict.json session_pod-static-ip-conflict.yml settings_invalid.yaml
  assert_settings_rejected 'Provided settings are not valid: defaultVpc: "Not_A_Vpc" is not a valid Vpc name'
}
