#!/usr/bin/env python3
"""README.md's links work where Kubewarden shows it, not only in a clone.

    python3 scripts/check-readme.py        (make shipped-paths)

`kwctl annotate` embeds README.md in the module (`kwctl inspect` prints it)
and Artifact Hub shows it from the `artifacthub` branch: a relative link
resolves against neither. Every link, image and reference definition must
be absolute (https://...) or an anchor in the README itself. Prints one line
per relative link and exits 1, or one summary line and 0.
"""

import re
import sys
from pathlib import Path

from verdict import verdict

ROOT = Path(__file__).resolve().parent.parent
LINKS = [
    re.compile(r"\]\(\s*<?([^)\s>]+)"),             # [text](target), ![alt](target)
    re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?\s*$", re.M),  # [ref]: target
    re.compile(r"""(?:href|src)\s*=\s*["']([^"']+)"""),   # HTML
]
ABSOLUTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|#)", re.I)


def main():
    text = (ROOT / "README.md").read_text()
    # Code blocks and spans are shown as written, never resolved.
    prose = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    prose = re.sub(r"`[^`\n]*`", "``", prose)
    found, relative = 0, []
    for rule in LINKS:
        for m in rule.finditer(prose):
            found += 1
            if not ABSOLUTE.match(m.group(1)):
                line = prose.count("\n", 0, m.start()) + 1
                relative.append(f"README.md:{line}: relative link {m.group(1)!r}")
    return verdict(relative, f"check-readme: {found} links, {len(relative)} relative")


if __name__ == "__main__":
    sys.exit(main())
