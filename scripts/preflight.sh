#!/usr/bin/env bash
# Preflight: may kube-ovn-policy's policy-server make each of its lookups,
# and may Kubewarden's audit scanner list what it replays? Run as a cluster
# admin (kubectl impersonates the ServiceAccounts) after
# `kubectl apply -f deploy/rbac.yaml`, before creating the policies.
#
#   scripts/preflight.sh [KUBEWARDEN_NAMESPACE]      (default: kubewarden)
#
# Prints one line per check and exits 1 if any is not as deploy/rbac.yaml
# grants it (docs/lookups.md, Permissions).
set -u
ns=${1:-kubewarden}
ps=system:serviceaccount:$ns:kube-ovn-policy-server
audit=system:serviceaccount:$ns:audit-scanner
failed=0

check() { # expected verb resource [kubectl flags...]
  local expected=$1; shift
  local got
  got=$(kubectl auth can-i "$@" 2>&1 | tail -n 1)
  printf '%-4s %-3s kubectl auth can-i %s\n' "$([ "$got" = "$expected" ] && echo ok || echo FAIL)" "$got" "$*"
  [ "$got" = "$expected" ] || failed=1
}

for r in vpcs iptables-eips ips; do
  for v in get list watch; do check yes $v $r.kubeovn.io --as=$ps; done
done
for r in subnets ippools iptables-dnat-rules iptables-snat-rules iptables-fip-rules ovn-dnat-rules ovn-snat-rules ovn-fips; do
  for v in list watch; do check yes $v $r.kubeovn.io --as=$ps; done
done
for r in ovn-eips qos-policies; do check yes get $r.kubeovn.io --as=$ps; done
for v in list watch; do check yes $v namespaces --as=$ps; done
check yes get configmaps/ovn-vpc-nat-config -n kube-system --as=$ps
check yes get configmaps/ovn-vpc-nat-gw-config -n kube-system --as=$ps
check yes get services/kubernetes -n default --as=$ps
# Least privilege: no more than that.
check no list configmaps -n kube-system --as=$ps
check no get secrets -n kube-system --as=$ps
for r in subnets vpcs vips ips ippools vpc-nat-gateways iptables-eips iptables-dnat-rules iptables-snat-rules \
  iptables-fip-rules ovn-eips ovn-dnat-rules ovn-snat-rules ovn-fips; do
  check yes list $r.kubeovn.io --as=$audit
done
exit $failed
