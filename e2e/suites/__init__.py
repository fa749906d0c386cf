"""The e2e suites pytest runs (`python3 -m pytest e2e/suites/test_<name>.py`, as the Makefile's
targets do); their fixtures and the closing line are `e2e/conftest.py`'s."""
