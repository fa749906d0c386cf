#!/usr/bin/env python3
"""Every link between this repository's Markdown files lands: the file exists
and, where the link names an anchor, one of its headings has that anchor.

    python3 scripts/check-doc-links.py [--self-test]     (make lint)

Reads every tracked *.md. A relative link resolves against its file's folder;
README.md's links are absolute (scripts/check-readme.py) and those into this
repository's main branch (https://github.com/kube-ovn-policy/kube-ovn-policy/
blob/main/<path>) are checked as the relative ones. Anchors are GitHub's:
a heading's text lowercased, every character but letters, digits, spaces,
`-` and `_` dropped, spaces made `-`, a repeat given `-1`, `-2`, ...
Code blocks and spans are not links. Prints one line per broken link and
exits 1, or one summary line and 0.
"""

import re
import subprocess
import sys
from pathlib import Path

from verdict import verdict

ROOT = Path(__file__).resolve().parent.parent
OWN = "https://github.com/kube-ovn-policy/kube-ovn-policy/blob/main/"
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def unfenced(text):
    """The text with code blocks blanked, lines kept."""
    return re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)


def prose(text):
    """The text with code blocks and spans blanked, lines kept."""
    return re.sub(r"`[^`\n]*`", "``", unfenced(text))


def slug(heading):
    """GitHub's anchor of a heading's text (inline code and links as their text)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text):
    """Every heading's anchor in a Markdown text, repeats numbered."""
    seen, found = {}, set()
    for m in HEADING.finditer(unfenced(text)):
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def broken(files, read):
    """(file, line, target, why) of every link among `files` that does not land."""
    out, cache = [], {}

    def anchors_of(path):
        if path not in cache:
            cache[path] = anchors(read(path)) if path in files else None
        return cache[path]

    count = 0
    for name in sorted(files):
        text = prose(read(name))
        for m in LINK.finditer(text):
            target = m.group(1)
            if target.startswith(OWN):
                path_part = target[len(OWN):]
                base = Path(".")
            elif EXTERNAL.match(target):
                continue
            else:
                path_part = target
                base = Path(name).parent
            count += 1
            path, _, anchor = path_part.partition("#")
            line = text.count("\n", 0, m.start()) + 1
            resolved = name if not path else _normal(base / path)
            if resolved is None or (resolved not in files and not (ROOT / resolved).exists()):
                out.append((name, line, target, "no such file"))
                continue
            if anchor and resolved.endswith(".md"):
                known = anchors_of(resolved)
                if known is not None and anchor not in known:
                    out.append((name, line, target, f"no heading #{anchor} in {resolved}"))
    return out, count


def _normal(path):
    parts = []
    for part in path.parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def self_test():
    docs = {
        "a.md": "# Top\n## Who may use `x`?\n## Top\n[ok](b.md#b-c) [ok](#top-1) [bad](b.md#nope)\n"
                "[gone](c.md) [own](" + OWN + "a.md#who-may-use-x) `[code](c.md)`\n",
        "b.md": "## B: c\n[up](../x.md)\n",
    }
    problems, count = broken(set(docs), docs.__getitem__)
    want = [("a.md", 4, "b.md#nope", "no heading #nope in b.md"),
            ("a.md", 5, "c.md", "no such file"),
            ("b.md", 2, "../x.md", "no such file")]
    if problems != want or count != 6:
        print(f"check-doc-links self-test: {problems} ({count} links), wanted {want} (6)")
        return 1
    print("ok self-test: a missing file, a missing anchor and one outside the tree are found")
    return 0


def main():
    if "--self-test" in sys.argv[1:]:
        return self_test()
    tracked = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    files = set(tracked)
    problems, count = broken(files, lambda p: (ROOT / p).read_text())
    lines = [f"{f}:{line}: {target}: {why}" for f, line, target, why in problems]
    return verdict(lines, f"check-doc-links: {count} links among {len(files)} files, {len(lines)} broken")


if __name__ == "__main__":
    sys.exit(main())
