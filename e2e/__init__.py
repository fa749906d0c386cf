"""The policy in Kubernetes' and Kubewarden's real programs: the e2e suites.

Three parts, run from the repository's root: `e2e.harness`, what the suites share and the
only package a suite imports from this repository; the suites, in `e2e/suites/` under pytest
(`python3 -m pytest e2e/suites/test_<name>.py`, with `e2e/conftest.py`) or, until they move
there, modules of this package (`python3 -m e2e.<suite> ...`); and `e2e.tools`, what is not a
test (oracles, the case generator, benches). The Makefile's targets run them; docs/testing.md
lists them all, and each one's docstring says what it checks.
"""
