"""What the e2e suites are not: oracles that ask Kube-OVN's own programs and record their answers
(`oracle`, `controller_oracle`), the generator of seeded cases (`generate`), and the benches
(`bench_e2e`, `stall_check`). Each is run as `python3 -m e2e.tools.<name>` (the Makefile's
targets do) and, like a suite, imports only `e2e.harness`."""
