"""What the e2e suites share, and nothing of any one suite's own tests.

- paths: `ROOT`, `DEPLOY`, `POLICY_FILES`, `SHARED` (below);
- `processes`: free ports, children that die with their parent, stopping,
  waiting for a condition, a log's last lines;
- `controlplane`: etcd and kube-apiserver on 127.0.0.1, kubectl against them;
- `kubeapi`: an API client from a kubeconfig;
- `apiserver`: the API server stand-in (`python3 -m e2e.harness.apiserver`);
- `kube_apiserver`: a generated cluster written through a real
  kube-apiserver, and its audit log counted;
- `replay`: a conformance case's cluster and request as real objects;
- `cases`: case files, expected answers compared, upstream's records;
- `webhooks`: deploy/'s policies as Kubewarden's controller renders them
  (`python3 -m e2e.harness.webhooks`);
- `certificates`: throwaway certificates made with openssl;
- `servers`: policy-server (or kop-serve) serving deploy/'s policies;
- `upstream`: kube-ovn-webhook, asked as the API server asks it;
- `kubeovn`: OVN's databases and kube-ovn-controller out of cluster;
- `kubewarden`: Kubewarden's controller out of cluster, and what the
  kubelet would write for its policy-server Deployments;
- `cluster`: deploy/ on a real control plane behind its webhooks, the base of
  the suites that need it;
- `guard`, `adversary`, `scaffold`: checks run by more than one suite, or
  long enough to keep out of the suite that runs them;
- `checks`: a suite's checks, counted (e2e/conftest.py prints the closing
  `N passed, N failed` line from them).
"""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
# The ClusterAdmissionPolicies of deploy/.
POLICY_FILES = [DEPLOY / "cluster-admission-policies.yaml", DEPLOY / "ip-objects-policy.yaml"]
# The other projects' files (CRDs, schemas), read in place.
SHARED = Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared"))
