"""The policy in Kubernetes' and Kubewarden's real programs: the e2e suites.

Three parts, run from the repository's root: `e2e.harness`, what the suites share and the
only package a suite imports from this repository; the suites, in `e2e/suites/`, which pytest
runs (`python3 -m pytest e2e/suites/test_<name>.py`, with `e2e/conftest.py`); and `e2e.tools`,
what is not a test (oracles, the case generator, benches). The Makefile's targets run them; docs/testing.md
lists them all, and each one's docstring says what it checks.
"""
