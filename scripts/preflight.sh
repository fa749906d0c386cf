#!/usr/bin/env bash
# Preflight: may kube-ovn-policy's policy-server make each of its lookups,
# and may Kubewarden's audit scanner list what it replays? Run as a cluster
# admin (kubectl impersonates the ServiceAccounts) after
# `kubectl apply -k deploy/`.
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

# The lookups' grants and the audit scanner's (scripts/preflight-list.py,
# from kinds.json and deploy/rbac.yaml; docs/operations.md shows
# the same list).
# preflight-list.py writes the lines below
for r in ips.kubeovn.io vpcs.kubeovn.io iptables-eips.kubeovn.io; do
  for v in get list watch; do check yes $v $r --as=$ps; done
done
for r in subnets.kubeovn.io ippools.kubeovn.io vips.kubeovn.io iptables-dnat-rules.kubeovn.io \
    iptables-snat-rules.kubeovn.io iptables-fip-rules.kubeovn.io ovn-fips.kubeovn.io \
    ovn-snat-rules.kubeovn.io ovn-dnat-rules.kubeovn.io \
    network-attachment-definitions.k8s.cni.cncf.io; do
  for v in list watch; do check yes $v $r --as=$ps; done
done
for r in ovn-eips.kubeovn.io qos-policies.kubeovn.io namespaces; do
  check yes get $r --as=$ps
done
check yes get services/kubernetes -n default --as=$ps
check yes get configmaps/ovn-vpc-nat-config -n kube-system --as=$ps
check yes get configmaps/ovn-vpc-nat-gw-config -n kube-system --as=$ps
for v in list watch; do check yes $v customresourcedefinitions.apiextensions.k8s.io/ippools.kubeovn.io --as=$ps; done
for r in network-attachment-definitions.k8s.cni.cncf.io ippools.kubeovn.io ips.kubeovn.io \
    iptables-dnat-rules.kubeovn.io iptables-eips.kubeovn.io iptables-fip-rules.kubeovn.io \
    iptables-snat-rules.kubeovn.io ovn-dnat-rules.kubeovn.io ovn-eips.kubeovn.io \
    ovn-fips.kubeovn.io ovn-snat-rules.kubeovn.io subnets.kubeovn.io vips.kubeovn.io \
    vpc-nat-gateways.kubeovn.io vpcs.kubeovn.io; do
  check yes list $r --as=$audit
done
# preflight-list.py writes the lines above

# Least privilege: no more than that.
check no list configmaps -n kube-system --as=$ps
check no get secrets -n kube-system --as=$ps
exit $failed
