"""The policy in Kubernetes' and Kubewarden's real programs: the e2e suites.

Each suite is a module of this package, run from the repository's root as
`python3 -m e2e.<suite> ...` (the Makefile's targets do); what the suites
share is the harness, `e2e.harness`, the only package a suite imports from
this repository. docs/testing.md lists both;
each suite's docstring says what it checks.
"""
