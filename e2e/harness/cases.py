"""Conformance cases (tests/conformance, tests/cases): their files, their
expected answers compared with an answer, and the records of upstream's
own answers that `make oracle` and `make controller-oracle` write into them."""

import hashlib
import json
from pathlib import Path

from . import ROOT

# Every case, where no other folder is named.
CASE_DIRS = [ROOT / "tests/conformance", ROOT / "tests/cases"]
# The Kube-OVN commit whose programs (kube-ovn-webhook, kube-ovn-controller,
# built by hand outside this repository) the records were made with.
UPSTREAM_COMMIT = "1533681d7a6b"
# The Kube-OVN releases users run, judged beside the pin (docs/compatibility.md): each tag's commit.
# Their records are kept apart from the cases, one file per release (RELEASES_DIR/<tag>.json).
RELEASES = {"v1.16.2": "12506be4b99b", "v1.15.24": "c95b7e889c6c"}
RELEASES_DIR = ROOT / "tests/releases"


def case_files(paths):
    """The case files of these files and folders (a folder's *.json, sorted)."""
    files = []
    for p in map(Path, paths):
        files += sorted(p.glob("*.json")) if p.is_dir() else [p]
    return files


def compare(expect, response):
    """Differences between a case's expected answer and an AdmissionResponse."""
    problems = []
    allowed = bool(response.get("allowed"))
    status = response.get("status") or {}
    message = status.get("message")
    if allowed != expect["allowed"]:
        problems.append(f"allowed {allowed}, expected {expect['allowed']}")
    elif not allowed:
        if status.get("code") != expect.get("code"):
            problems.append(f"code {status.get('code')}, expected {expect.get('code')}")
        if expect.get("message") is not None:
            if message != expect["message"]:
                problems.append(f"message {message!r}, expected {expect['message']!r}")
        elif expect.get("message_contains") is not None and expect["message_contains"] not in (message or ""):
            problems.append(f"message {message!r} lacks {expect['message_contains']!r}")
    if "warnings" in expect:
        warnings = response.get("warnings") or []
        if warnings != expect["warnings"]:
            problems.append(f"warnings {warnings!r}, expected {expect['warnings']!r}")
    if message is not None and "Stack backtrace" in message:
        problems.append("the message carries the host's backtrace")
    return problems


def case_input(case):
    """What upstream's answer depends on, hashed: a record is stale when the case changed."""
    key = {k: case.get(k) for k in ("request", "cluster", "settings", "forbidden")}
    text = json.dumps(key, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def record_of(case, result, commit=UPSTREAM_COMMIT):
    """A record of upstream's outcome for a case: the commit, the case's input, then `result`."""
    return {"commit": commit, "input": case_input(case), **result}


def case_key(path):
    """A case's key in a release's records: its folder and file name without `.json` (`cases/274-…`)."""
    path = Path(path)
    return f"{path.parent.name}/{path.stem}"


def release_path(release):
    if release not in RELEASES:
        raise SystemExit(f"unknown release {release!r}: one of {', '.join(RELEASES)} (e2e/harness/cases.py)")
    return RELEASES_DIR / f"{release}.json"


def load_release(release):
    """A release's records: {"release", "commit", "upstream": {key: record}, "controller": {key: record}}."""
    path = release_path(release)
    data = json.loads(path.read_text()) if path.exists() else {}
    return {"release": release, "commit": RELEASES[release],
            "upstream": data.get("upstream", {}), "controller": data.get("controller", {})}


def write_release_records(release, field, records):
    """Records (key -> record) merged into a release's `field` (`upstream`, `controller`), keys sorted."""
    data = load_release(release)
    data[field] = dict(sorted({**data[field], **records}.items()))
    path = release_path(release)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def write_record(path, case, record, field="upstream", after="expect"):
    """The case file with its record `field` set right after `after` (key order kept)."""
    out = {}
    for key, value in case.items():
        if key == field:
            continue
        out[key] = value
        if key == after:
            out[field] = record
    if field not in out:
        out[field] = record
    path.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")


def case_name(path):
    """A case file's path as printed: relative to the repository where it is inside it."""
    path = Path(path)
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
