"""The e2e harness (e2e/harness/) for the scripts run as `python3
scripts/<name>.py`, whose import path has scripts/ and not the repository:
the package `e2e` is loaded from its folder, then its modules import as usual."""

import importlib
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def harness(name):
    """The module e2e.harness.<name>."""
    if "e2e" not in sys.modules:
        spec = importlib.util.spec_from_file_location("e2e", ROOT / "e2e/__init__.py",
                                                      submodule_search_locations=[str(ROOT / "e2e")])
        package = importlib.util.module_from_spec(spec)
        sys.modules["e2e"] = package
        spec.loader.exec_module(package)
    return importlib.import_module(f"e2e.harness.{name}")
