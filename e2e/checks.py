"""What every e2e suite of this folder keeps: its arguments, control plane,
folder and API client, and its checks, one printed line each (`ok` with a
short detail, or `FAILED` with the whole detail), counted for the closing
`N passed, N failed` line."""

from kubeapi import Api


class Checks:
    # Details longer than this are not printed after `ok`.
    SHOWN = 120

    def __init__(self, args, cp, folder):
        self.args, self.cp, self.folder = args, cp, folder
        self.api = Api(cp.kubeconfig)
        self.passed = self.failed = 0
        self.notes = []

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            shown = f": {detail}" if detail and len(detail) <= self.SHOWN else ""
            print(f"ok      {name}{shown}", flush=True)
        else:
            self.failed += 1
            print(f"FAILED  {name}: {detail}", flush=True)
        return ok
