"""A suite's checks, one printed line each (`ok` with a short detail, or
`FAILED` with the whole detail), counted: e2e/conftest.py adds them up into
the closing line `N passed, N failed` (scripts/suite.py reads it)."""

import json
import os
import subprocess
import sys
import time

from . import DEPLOY
from .kubeapi import Api
from .processes import die_with_parent, log_tail, stop_process, wait_for


def short(value, limit=160):
    """A value as JSON (keys sorted), cut after `limit` characters."""
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + "…"


class Checks:
    """What every e2e suite keeps: its arguments, control plane, folder and
    API client (`cp` and `folder` may be None), its checks and notes."""

    # Details longer than this are not printed after `ok`.
    SHOWN = 120

    def __init__(self, args=None, cp=None, folder=None):
        self.args, self.cp, self.folder = args, cp, folder
        self.api = Api(cp.kubeconfig) if cp is not None else None
        self.passed = self.failed = 0
        self.notes = []
        self.procs = {}  # name: (process, log file), stopped by stop() in reverse order

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            shown = f": {detail}" if detail and len(detail) <= self.SHOWN else ""
            print(f"ok      {name}{shown}", flush=True)
        else:
            self.failed += 1
            print(f"FAILED  {name}: {detail}", flush=True)
        return ok

    def kubectl(self, *args, user=None, input=None, cwd=None, timeout=60):
        """kubectl as the admin (or impersonating `user`): the CompletedProcess, whatever its exit status."""
        return self.cp.kubectl(*args, input=input, as_user=user, check=False, cwd=cwd, timeout=timeout)

    def apply(self, *objs):
        """kubectl apply --server-side of these objects; RuntimeError when it fails."""
        done = self.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-",
                            input=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objs)}))
        if done.returncode != 0:
            raise RuntimeError(f"kubectl apply: {done.stderr.strip()}")

    def apply_deploy(self, kustomization=DEPLOY, retry_s=0, ip_objects=True):
        """deploy/ as an operator applies it: `kubectl apply --server-side -k` of the kustomization
        (deploy/, or an overlay), then the optional ip-objects-policy.yaml with -f (unless
        `ip_objects` is false); retried for `retry_s` seconds (while a webhook configuration is not
        in effect yet): the first failed CompletedProcess, else the last."""
        deadline = time.monotonic() + retry_s
        while True:
            done = self.kubectl("apply", "--server-side", "-k", str(kustomization))
            if done.returncode == 0 and ip_objects:
                done = self.kubectl("apply", "--server-side", "-f", str(DEPLOY / "ip-objects-policy.yaml"))
            if done.returncode == 0 or time.monotonic() > deadline:
                return done
            time.sleep(0.5)

    def kubectl_file(self, verb, obj, user=None):
        """kubectl <verb> -f of an object written to a file of the folder: (CompletedProcess, milliseconds)."""
        meta = obj["metadata"]
        path = self.folder / f"{obj['kind']}-{meta.get('namespace', '')}-{meta['name']}.json"
        path.write_text(json.dumps(obj))
        started = time.monotonic()
        done = self.kubectl(verb, "-f", str(path), user=user)
        return done, (time.monotonic() - started) * 1000

    def get(self, path):
        """The object at an API path, or None."""
        code, body, _ = self.api.request("GET", path)
        return body if code == 200 else None

    # --- the suite's own processes -------------------------------------------

    def start(self, name, args, env=None):
        """A process in the folder, admin's KUBECONFIG and `env` in its environment, its output in
        <name>.log; killed if the thread that started it dies; stopped by stop()."""
        log = self.folder / f"{name}.log"
        with open(log, "a") as out:
            proc = subprocess.Popen([str(a) for a in args], stdout=out, stderr=subprocess.STDOUT, cwd=self.folder,
                                    env=dict(os.environ, KUBECONFIG=str(self.cp.kubeconfig), **(env or {})),
                                    preexec_fn=die_with_parent)
        self.procs[name] = (proc, log)
        return proc

    def stop_process(self, name):
        stop_process(self.procs.pop(name, (None, None))[0], 15)

    def wait(self, what, probe, timeout=60):
        """probe() until it returns something true, which is returned; RuntimeError after
        `timeout` seconds, or at once when one of the suite's processes exits."""
        return wait_for(what, probe, timeout, self.procs)

    def log_tail(self, name, lines=25):
        return log_tail(self.procs[name][1] if name in self.procs else self.folder / f"{name}.log", lines)

    def failure_logs(self):
        """What to print when the suite stops on an error: its processes' logs."""
        for name in self.procs:
            print(f"--- {name}\n{self.log_tail(name, 15)}", file=sys.stderr)

    def stop(self):
        """Stops what the suite started."""
        for name in list(self.procs)[::-1]:
            self.stop_process(name)
