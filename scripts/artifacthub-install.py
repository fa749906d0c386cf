#!/usr/bin/env python3
"""Replaces the `install` text of artifacthub-pkg.yml with docs/artifacthub-install.md.

    python3 scripts/artifacthub-install.py artifacthub-pkg.yml

`kwctl scaffold artifacthub` writes an install text of its own, which tells
users to run `kwctl scaffold manifest` and nothing more; the policy it gives
needs permissions the `default` PolicyServer lacks (docs/artifacthub-install.md
says which, and what is supported instead). `make artifacthub-pkg.yml` runs
this right after kwctl; testhost/tests/metadata.rs checks the result.
`{image}` in the text becomes the package's image (`containersImages[0]`).

kwctl's template also recommends the kubewarden-controller chart, deprecated
since Kubewarden 1.37 for admission-controller (the chart the README
installs): the recommendation is pointed at that one.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXT = ROOT / "docs" / "artifacthub-install.md"
DEPRECATED_CHART = "https://artifacthub.io/packages/helm/kubewarden/kubewarden-controller"
CHART = "https://artifacthub.io/packages/helm/kubewarden/admission-controller"


def main(path):
    lines = Path(path).read_text().splitlines(keepends=True)
    image = next(l.split("image:", 1)[1].strip() for l in lines if l.lstrip().startswith("image:"))
    start = next(i for i, l in enumerate(lines) if l.startswith("install:"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].strip() and not lines[i].startswith(" ")),
               len(lines))
    text = TEXT.read_text().replace("{image}", image)
    block = ["install: |\n"] + [f"  {l}" if l.strip() else "\n" for l in text.splitlines(keepends=True)]
    Path(path).write_text("".join(lines[:start] + block + lines[end:]).replace(DEPRECATED_CHART, CHART))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    main(sys.argv[1])
