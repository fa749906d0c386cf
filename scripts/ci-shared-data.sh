#!/usr/bin/env bash
# The other projects' data that the tests read in place from ../shared on a
# developer's machine, downloaded for CI into DIR (never into the
# repository): Kubewarden 1.37.2's CRDs and chart values schema (helm-charts
# tag admission-controller-6.0.2), Kube-OVN's CRDs (commit 1533681d7a6b,
# the one src/upstream/README.md pins) and Multus' NetworkAttachmentDefinition
# CRD (network-attachment-definition-client v1.7.7, the version Kube-OVN's
# go.mod requires), each checked against its sha256.
#
#   scripts/ci-shared-data.sh DIR
#
# Then SHARED_DIR=DIR (e2e/harness/controlplane.py) and KUBEWARDEN_SCHEMAS=DIR/kubewarden
# (scripts/validate-deploy.py). The report CRDs (wgpolicyk8s.io) are left
# out: only the audit test installs them, and it needs audit-scanner.
# KUBEWARDEN_CHARTS_URL, KUBE_OVN_URL and NAD_CLIENT_URL override where the files come from
# (a mirror, or file:// for a dry run).
set -euo pipefail
dir=${1:?usage: scripts/ci-shared-data.sh DIR}
charts=${KUBEWARDEN_CHARTS_URL:-https://raw.githubusercontent.com/kubewarden/helm-charts/admission-controller-6.0.2/charts/admission-controller}
nad=${NAD_CLIENT_URL:-https://raw.githubusercontent.com/k8snetworkplumbingwg/network-attachment-definition-client/v1.7.7/artifacts}
kubeovn=${KUBE_OVN_URL:-https://raw.githubusercontent.com/kubeovn/kube-ovn/1533681d7a6b3dbdd7e8870fa70f0dc6aa49a82a/charts/kube-ovn-v2/crds}

# sha256 <local path under DIR> <URL>
files=(
  "be51fc0af0106c81920171f79b649fb02368a712a142d57fb4f5a43e808c79b5 kubewarden/crds/policies.kubewarden.io_admissionpolicies.yaml $charts/templates/crds/policies.kubewarden.io_admissionpolicies.yaml"
  "970ba43d7ebe922c443d8384da916df7d0462a0642d8a19a413d0afa7f759e5e kubewarden/crds/policies.kubewarden.io_admissionpolicygroups.yaml $charts/templates/crds/policies.kubewarden.io_admissionpolicygroups.yaml"
  "39fc92f85ec02b9b072313ae1d041ecaafabb074d4e46ae8650f2a2ec6c4b43c kubewarden/crds/policies.kubewarden.io_clusteradmissionpolicies.yaml $charts/templates/crds/policies.kubewarden.io_clusteradmissionpolicies.yaml"
  "d6e81d6f536c00ef27fdac025cdd1fc99e26200e2ea92ffc962050a4e8e04a7c kubewarden/crds/policies.kubewarden.io_clusteradmissionpolicygroups.yaml $charts/templates/crds/policies.kubewarden.io_clusteradmissionpolicygroups.yaml"
  "47ba6a737f0ca79cde5ae3632b85eea2e5ad3244dbb294e650a591cd76c32501 kubewarden/crds/policies.kubewarden.io_policyservers.yaml $charts/templates/crds/policies.kubewarden.io_policyservers.yaml"
  "86d04c3bd73d26ab2397c5ad96652dd043331d80a05eb9f7569f821f60633bbb kubewarden/admission-controller-values.schema.json $charts/values.schema.json"
  "2d6d5d2e89962640b7b5cf1081102c491914b41ad6c95e1018f98e8dba586faa kube-ovn/crds/kube-ovn-crd.yaml $kubeovn/kube-ovn-crd.yaml"
  "2c83987cbc34c16e7b49921237c39151008e9239304ef2dc7163b92931ef1880 multus/crds/network-attachment-definitions.yaml $nad/networks-crd.yaml"
)

for entry in "${files[@]}"; do
  read -r sum path url <<<"$entry"
  mkdir -p "$dir/$(dirname "$path")"
  curl -fsSL --retry 3 "$url" -o "$dir/$path"
  echo "$sum  $dir/$path" | sha256sum --check --quiet || { echo "ci-shared-data: $url: unexpected content" >&2; exit 1; }
done
echo "ci-shared-data: ${#files[@]} files in $dir"
