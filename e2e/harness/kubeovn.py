"""Kube-OVN's own kube-ovn-controller out of cluster (on PATH, built by hand
outside this repository), against a control plane and OVN's northbound and
southbound databases in Debian's ovsdb-server (schemas from
../shared/kube-ovn/ovsdb)."""

import json
import os
import shutil
import subprocess
import time

from . import SHARED
from .controlplane import SERVICE_CIDR
from .processes import die_with_parent, free_port, log_tail, stop_process

NB_SCHEMA = SHARED / "kube-ovn/ovsdb/ovn-nb.ovsschema"
SB_SCHEMA = SHARED / "kube-ovn/ovsdb/ovn-sb.ovsschema"
NAD_CRD = SHARED / "multus/crds/network-attachment-definitions.yaml"
# Debian's openvswitch-common (scripts/install-deps.sh) puts ovsdb-server in
# /usr/sbin, which a user's PATH may lack.
OVSDB_SERVER = shutil.which("ovsdb-server") or "/usr/sbin/ovsdb-server"
# kube-ovn-controller's flags for the default network, as Kube-OVN's install
# sets them (the chart's defaults).
DEFAULT_CIDR = "10.16.0.0/16"
JOIN_CIDR = "100.64.0.0/16"
DEFAULT_SUBNET = "ovn-default"
# kube-ovn-controller's identity: Kube-OVN's ServiceAccount, in its namespace.
CONTROLLER_NAMESPACE, CONTROLLER_ACCOUNT = "kube-system", "ovn"
CONTROLLER_POD = "kube-ovn-controller-e2e"
CONTROLLER_NODE = "kube-ovn-e2e"
ALLOCATED = "ovn.kubernetes.io/allocated"
IP_ADDRESS = "ovn.kubernetes.io/ip_address"
KUBE_OVN_SA = f"system:serviceaccount:{CONTROLLER_NAMESPACE}:{CONTROLLER_ACCOUNT}"


class Ovsdb:
    """ovsdb-server with OVN's northbound and southbound databases on 127.0.0.1, in `folder`.

    `nb` and `sb` are the controller's addresses (tcp:127.0.0.1:PORT). The
    NB_Global row that ovn-northd would write is inserted: the controller
    sets its options at start and exits when there is none.
    """

    def __init__(self, folder):
        self.folder = folder
        self.procs = {}
        self.nb = self.sb = None

    def start(self):
        for name, schema, database in (("nb", NB_SCHEMA, "OVN_Northbound"), ("sb", SB_SCHEMA, "OVN_Southbound")):
            if not schema.exists():
                raise RuntimeError(f"{schema} not found (SHARED_DIR names the shared folder)")
            db = self.folder / f"{name}.db"
            subprocess.run(["ovsdb-tool", "create", str(db), str(schema)], check=True, capture_output=True, text=True)
            setattr(self, name, self._serve(name, db, database))
        self.client("transact", self.nb, json.dumps(["OVN_Northbound", {"op": "insert", "table": "NB_Global", "row": {}}]))
        return self

    def _serve(self, name, db, database):
        """ovsdb-server for one database on a free port: its address once it lists the database."""
        for attempt in range(3):  # a port picked free may be taken before it is bound
            port = free_port()
            address = f"tcp:127.0.0.1:{port}"
            log = self.folder / f"ovsdb-{name}.log"
            proc = subprocess.Popen(
                [OVSDB_SERVER, f"--remote=ptcp:{port}:127.0.0.1",
                 f"--unixctl={self.folder / f'{name}.ctl'}", "--no-chdir", f"--log-file={log}",
                 "-vconsole:off", str(db)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                cwd=self.folder, start_new_session=True, preexec_fn=die_with_parent,
            )
            self.procs[name] = proc
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and proc.poll() is None:
                listed = subprocess.run(["ovsdb-client", "--timeout=2", "list-dbs", address], capture_output=True, text=True)
                if database in listed.stdout.split():
                    return address
                time.sleep(0.05)
            stop_process(self.procs.pop(name))
        raise RuntimeError(f"ovsdb-server for {database} did not start: {log_tail(log)}")

    def client(self, *args):
        done = subprocess.run(["ovsdb-client", "--timeout=10", *args], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"ovsdb-client {' '.join(args[:2])}: {done.stderr.strip()}")
        return done.stdout

    def stop(self):
        for name in list(self.procs):
            stop_process(self.procs.pop(name))


class Controller:
    """kube-ovn-controller out of cluster, in a private mount namespace where /var/log is `folder`/var-log."""

    def __init__(self, binary, folder, kubeconfig, ovsdb, default_cidr=DEFAULT_CIDR, join_cidr=JOIN_CIDR):
        self.binary, self.folder, self.kubeconfig, self.ovsdb = binary, folder, kubeconfig, ovsdb
        self.default_cidr, self.join_cidr = default_cidr, join_cidr
        self.proc = None
        self.log = folder / "kube-ovn-controller.log"

    def command(self):
        var_log = self.folder / "var-log"
        (var_log / "kube-ovn").mkdir(parents=True, exist_ok=True)
        # argv[0] must be named kube-ovn-controller (cmd/controller dispatches on it).
        flags = [
            f"--kubeconfig={self.kubeconfig}",
            f"--ovn-nb-addr={self.ovsdb.nb}", f"--ovn-sb-addr={self.ovsdb.sb}",
            f"--default-cidr={self.default_cidr}", f"--node-switch-cidr={self.join_cidr}",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            f"--pprof-port={free_port()}",
        ]
        # Root needs only a mount namespace; anyone else maps itself to root in a user namespace.
        user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
        return ["unshare", *user, "--mount", "--propagation", "private", "--",
                "sh", "-c", 'mount --bind "$0" /var/log && exec "$@"', str(var_log), str(self.binary), *flags]

    def start(self):
        env = dict(
            os.environ, KUBECONFIG=str(self.kubeconfig),  # one of its client libraries reads only the variable
            POD_NAME=CONTROLLER_POD, POD_NAMESPACE=CONTROLLER_NAMESPACE,
            NODE_NAME=CONTROLLER_NODE, KUBE_NODE_NAME=CONTROLLER_NODE,
            # Its metrics and health servers on loopback only.
            ENABLE_BIND_LOCAL_IP="true", POD_IPS="127.0.0.1", POD_IP="127.0.0.1",
        )
        self.out = open(self.log, "ab")
        self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=self.out,
                                     stderr=subprocess.STDOUT, env=env, cwd=self.folder,
                                     start_new_session=True, preexec_fn=die_with_parent)
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def tail(self, lines=30):
        return log_tail(self.log, lines)

    def stop(self):
        stop_process(self.proc, timeout=15)
        self.proc = None
