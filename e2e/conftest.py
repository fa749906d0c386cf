"""What every e2e suite under pytest shares (`python3 -m pytest e2e/suites/...`).

- The fixture `checks`: a suite's counted checks (`e2e.harness.checks.Checks`): each
  `checks.check(name, ok, detail)` prints one line (`ok` or `FAILED`) and counts; a test
  with a failed check fails at its end, after all of its checks ran.
- The fixture `counted`: `counted(suite)` makes the checks of `suite` (a `Checks` that a
  module's tests share, made by a module-scoped fixture) count as this test's: those made
  since the previous test's were counted (the first test's include the fixture's own).
- The fixture `settings`: `settings(SETTINGS)` is a suite's settings with the command
  line's `--setting NAME=VALUE` over them.
- The fixture `control_plane`: etcd and kube-apiserver for the test (`make cluster-bin`);
  without the binaries the test is skipped with one `SKIPPED:` line.
- The marker `@pytest.mark.requires("kwctl", ...)`: the test runs only where every program
  is on `PATH` (the Makefile puts `KUBEWARDEN_BIN` there); elsewhere it is skipped, with one
  `SKIPPED: <test>: <program> not found` line.
- The marker `incremental` (a module's `pytestmark`): its tests are steps, in order; after
  one stops on an error (not a failed check), the later ones are not run (xfail).
- The closing line `N passed, N failed`, which `scripts/suite.py` reads, as every suite
  printed it before pytest ran them: N counts checks. A test's checks count one each; a
  test without the fixture counts one (its asserts are one check); a test that stops on an
  error outside its checks, or whose fixture fails, counts one failed check more ("the test
  ran to its end", as the suites counted it before pytest).
"""

import shutil

import pytest

from e2e.harness.checks import Checks
from e2e.harness.controlplane import ControlPlane

_TALLY = {"passed": 0, "failed": 0}
_STOPPED = {}  # module: the test of an `incremental` module that stopped on an error
_SKIPPED = {}  # why: the first test skipped for it


def pytest_addoption(parser):
    """The suites' own options."""
    parser.addoption("--setting", action="append", metavar="NAME=VALUE",
                     help="one of a suite's SETTINGS (test_cluster: adversary_requests=2000, keep=true, ...)")
    parser.addoption("--policy", help="the module a suite runs (default: the suite's own, policy.wasm or "
                                      "annotated-policy.wasm)")
    parser.addoption("--cases", nargs="+", help="test_conformance_kwctl: case files or folders of them "
                                                "(default: tests/conformance tests/cases)")
    parser.addoption("--sessions", help="test_conformance_kwctl: keep each case's recorded session here")
    parser.addoption("--jobs", type=int, help="test_conformance_kwctl: workers at once (default: the cores)")
    parser.addoption("--kwctl-timeout", type=float, default=60.0,
                     help="test_conformance_kwctl: seconds for one kwctl run")
    parser.addoption("--long-watch", type=int, default=75,
                     help="test_standin_vs_apiserver: seconds of one watch held open for the bookmarks "
                          "of a long watch (75: one before its end; 130: also the periodic one; 0: none)")


def _missing(item):
    """The first program a `requires` marker names that is not on PATH."""
    for mark in item.iter_markers("requires"):
        for program in mark.args:
            if shutil.which(program) is None:
                return program
    return None


def pytest_runtest_setup(item):
    program = _missing(item)
    if program is not None:
        pytest.skip(f"{program} not found")
    stopped = _STOPPED.get(item.module.__name__)
    if stopped is not None and item.get_closest_marker("incremental"):
        pytest.xfail(f"not run: {stopped} stopped on an error")


@pytest.fixture
def checks(request):
    """The test's counted checks."""
    suite = Checks()
    request.node.kop_checks = suite
    return suite


@pytest.fixture(scope="session")
def settings(pytestconfig):
    """settings(defaults): a suite's settings, `defaults` (a dict) with the command line's
    `--setting NAME=VALUE` over them, each read as its default's type."""

    def read(defaults):
        out = dict(defaults)
        for pair in pytestconfig.getoption("setting") or []:
            name, _, value = pair.partition("=")
            if name not in defaults:
                continue  # another suite's
            kind = type(defaults[name])
            if kind is bool:
                out[name] = value.lower() in ("1", "true", "yes")
            elif kind in (int, float):
                out[name] = kind(value)
            else:
                out[name] = value
        return out

    return read


@pytest.fixture
def counted(request):
    """counted(suite): the checks `suite` makes during the test are the test's."""

    def start(suite):
        # From where the previous test's count ended: the checks the module fixture made
        # while setting up count with the first test.
        request.node.kop_shared = (suite, *getattr(suite, "kop_counted", (0, 0)))
        return suite

    return start


class _Since:
    """The checks a shared suite made since the previous test's count ended."""

    def __init__(self, suite, passed, failed):
        self.passed, self.failed = suite.passed - passed, suite.failed - failed
        suite.kop_counted = (suite.passed, suite.failed)


@pytest.fixture
def control_plane():
    """etcd and kube-apiserver on 127.0.0.1, stopped after the test."""
    cp = ControlPlane()
    if not cp.apiserver_bin.exists():
        pytest.skip("kube-apiserver not found (make cluster-bin)")
    with cp:
        yield cp


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.when == "call" and report.failed and item.get_closest_marker("incremental"):
        _STOPPED.setdefault(item.module.__name__, item.name)
    if hasattr(report, "wasxfail"):
        return  # a step after one that stopped: counted with that one
    if report.skipped:
        why = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _SKIPPED.setdefault(why.removeprefix("Skipped: "), item.nodeid)
        return
    if call.when == "setup" and report.failed:
        _TALLY["failed"] += 1
    if call.when != "call":
        return
    suite = getattr(item, "kop_checks", None)
    if suite is None and hasattr(item, "kop_shared"):
        suite = _Since(*item.kop_shared)
    if suite is None:
        _TALLY["passed" if report.passed else "failed"] += 1
        return
    _TALLY["passed"] += suite.passed
    _TALLY["failed"] += suite.failed
    if report.failed:
        _TALLY["failed"] += 1  # stopped outside its checks
    elif suite.failed:
        report.outcome = "failed"
        report.longrepr = f"{suite.failed} of {suite.passed + suite.failed} checks failed (the FAILED lines above)"


def pytest_terminal_summary(terminalreporter):
    for why, test in _SKIPPED.items():
        terminalreporter.write_line(f"SKIPPED: {test}: {why}")
    terminalreporter.write_line(f"{_TALLY['passed']} passed, {_TALLY['failed']} failed")
