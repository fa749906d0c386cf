#!/usr/bin/env python3
"""The layer rule of docs/architecture.md, checked on src/.

    python3 scripts/check-layers.py        (run by `make lint`)

Each module under src/ belongs to a layer, named by the first segment of its
path (`src/checks/nat/ovn.rs` is `checks`); the crate root (lib.rs) is above
them all. A module may use modules of its own layer or of layers below it,
never one above it; and no two modules may use each other, directly or
through others (the module graph has no cycle). A module's own test file
(`x/tests.rs`) and inline `mod tests` count as part of the module.

Uses are found as text: `use crate::…`, `crate::…` paths in code, and
`super::…` resolved against the file's module path. Comments are skipped.

And docs/architecture.md's layer table names every module: a file under
src/ (tests.rs aside) is named by its path in backticks in a row of that
table (`checks/nat/ovn.rs`, `checks/nat/{gateway,iptables,ovn}`), or by its
own name in backticks after its parent's path in the same row
(`checks/static_ip` (… `network`, `conflicts` …)). A module missing from
the table fails, as does a path in the table that names no module.

And the code speaks with one voice: src/checks.rs's table links every module
under src/checks/ (`[`static_ip::landing`]`); every `I<n>` a file under src/
names is in checks.rs's legend and has its `**I<n>` entry in
docs/differences.md; no comment cites a file outside this repository (the
contract the team works from is not shipped with it: cite docs/ instead).
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
CHECKS = SRC / "checks.rs"
DIFFERENCES = ROOT / "docs" / "differences.md"
ITEM = re.compile(r"\bI(\d{1,2})\b")
OUTSIDE = re.compile(r"\bCONTRACT\b|\.\./shared\b|\bshared/(?:CONTRACT|reference|conformance)")

# Highest first. Each layer may use only itself and the layers after it.
LAYERS = ["lib", "checks", "admission", "settings", "k8s", "upstream"]
# Layers that sit side by side: neither may use the other.
PEERS = [{"admission", "settings"}]

PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}")


def module_of(path: Path) -> list[str]:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts == ["lib"]:
        return []
    if parts[-1] == "mod":
        parts.pop()
    return parts


def owner(parts: list[str], modules: set[tuple[str, ...]]) -> tuple[str, ...]:
    """The longest prefix of a path that is a module with its own file."""
    for n in range(len(parts), -1, -1):
        if tuple(parts[:n]) in modules:
            return tuple(parts[:n])
    return ()


def unit(module: tuple[str, ...]) -> tuple[str, ...]:
    """A module's test file belongs to the module it tests."""
    return module[:-1] if module and module[-1] == "tests" else module


def layer(module: tuple[str, ...]) -> str:
    return module[0] if module else "lib"


def strip_comments(text: str) -> str:
    """The code without comments, string and character literals."""
    text = re.sub(r'r(#+)".*?"\1', '""', text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text, flags=re.S)
    text = re.sub(r"'(?:\\.|[^'\\])'", "' '", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def inline_modules(text: str) -> list[tuple[int, int, str]]:
    """The `mod name { … }` blocks of a file: start, end and name."""
    found, stack = [], []
    opening = {m.end() - 1: m.group(1) for m in re.finditer(r"\bmod\s+(\w+)\s*\{", text)}
    for i, c in enumerate(text):
        if c == "{":
            stack.append((i, opening.get(i)))
        elif c == "}" and stack:
            start, name = stack.pop()
            if name:
                found.append((start, i, name))
    return found


def uses(text: str, here: list[str]) -> list[list[str]]:
    found = []
    blocks = inline_modules(text)

    def absolute(root: str, rest: str, at: int) -> list[str]:
        segs = [s for s in rest.split("::") if s]
        if root == "crate":
            return segs
        inner = [name for start, end, name in sorted(blocks) if start < at < end]
        base = here + inner
        base = base[:-1]
        while segs and segs[0] == "super":
            segs.pop(0)
            base = base[:-1]
        return base + segs

    for m in GROUP.finditer(text):
        prefix = absolute(m.group(1), m.group(2), m.start())
        for item in re.split(r",", re.sub(r"\{[^{}]*\}", "", m.group(3))):
            item = item.strip().split(" as ")[0].strip()
            segs = [s for s in item.split("::") if s and s not in ("self", "*")]
            found.append(prefix + segs)
        found.append(prefix)
    for m in PATH.finditer(GROUP.sub(lambda g: " " * len(g.group(0)), text)):
        found.append(absolute(m.group(1), m.group(2), m.start()))
    return found


def main() -> int:
    files = sorted(SRC.rglob("*.rs"))
    modules = {tuple(module_of(f)) for f in files}
    rank = {name: i for i, name in enumerate(LAYERS)}
    errors = []
    graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    for f in files:
        here = module_of(f)
        me = unit(tuple(here))
        if layer(me) not in rank:
            errors.append(f"{f.relative_to(ROOT)}: module `{layer(me)}` is in no layer (LAYERS in {Path(__file__).name})")
        for path in uses(strip_comments(f.read_text()), here):
            target = unit(owner(path, modules))
            if target == me:
                continue
            graph.setdefault(me, set()).add(target)
            a, b = layer(me), layer(target)
            if a not in rank or b not in rank:
                continue
            if rank[b] < rank[a] or any({a, b} == p for p in PEERS if a != b):
                errors.append(
                    f"{f.relative_to(ROOT)}: `{'::'.join(['crate'] + path)}` is in layer `{b}`, "
                    f"which `{a}` may not use"
                )
    errors += cycles(graph)
    errors += unnamed(modules)
    errors += one_voice(modules, {f: f.read_text() for f in files}, CHECKS.read_text(), DIFFERENCES.read_text())
    for e in sorted(set(errors)):
        print(e)
    if errors:
        print(f"check-layers: {len(set(errors))} problem(s); layers, highest first: {' > '.join(LAYERS)}")
        return 1
    print(f"check-layers: {len(files)} files, {sum(len(v) for v in graph.values())} module uses, "
          f"layers {' > '.join(LAYERS)}: no upward use, no cycle")
    return 0


def expand(token: str) -> list[str]:
    """`a/{b,c}` as `a/b`, `a/c`; `x.rs` and `x/` as `x`."""
    m = re.fullmatch(r"(.*)\{([^{}]*)\}(.*)", token)
    if m:
        return [t for part in m.group(2).split(",") for t in expand(m.group(1) + part.strip() + m.group(3))]
    return [re.sub(r"(\.rs|/)$", "", token)]


def unnamed(modules: set[tuple[str, ...]]) -> list[str]:
    """The modules docs/architecture.md's layer table leaves out, and the paths it names in vain."""
    text = ARCHITECTURE.read_text()
    start = text.find("| layer | modules |")
    rows = [line for line in text[start:].splitlines() if line.startswith("|")] if start >= 0 else []
    if not rows:
        return [f"{ARCHITECTURE.relative_to(ROOT)}: no layer table (`| layer | modules | may use |`)"]
    named: set[str] = set()
    paths: set[str] = set()
    for row in rows:
        cells = row.split("|")
        modules_cell = cells[2] if len(cells) > 2 else ""
        parents: list[str] = []
        for token in re.findall(r"`([^`]+)`", modules_cell):
            for name in expand(token.strip().removeprefix("src/")):
                if re.search(r"\.\w+$", name):
                    continue  # upstream/README.md: a file, not a module
                if name.split("/")[0] in LAYERS:
                    parents = [name]
                    paths.add(name)
                    # A module's parents are named with it (`checks/nat/ovn`: `checks/nat`, `checks`).
                    named.update("/".join(name.split("/")[:n]) for n in range(1, name.count("/") + 2))
                elif re.fullmatch(r"[a-z_]+", name):
                    named.update(f"{p}/{name}" for p in parents)
    files = {"/".join(m) for m in modules if m and m[-1] != "tests"} | {"lib"}
    where = ARCHITECTURE.relative_to(ROOT)
    out = [f"{where}: module src/{m}.rs is not named in the layer table" for m in sorted(files - named)]
    out += [f"{where}: the layer table names `{p}`, which is no module under src/" for p in sorted(paths - files)]
    return out


def one_voice(modules, texts, checks, differences):
    """checks.rs's table and legend, docs/differences.md's items and the citations, against src/."""
    out = []
    doc = "\n".join(line for line in checks.splitlines() if line.startswith("//!"))
    linked = set(re.findall(r"\[`([a-z_:]+)`\]", doc))
    for m in sorted(modules):
        if len(m) > 1 and m[0] == "checks" and m[-1] != "tests":
            name = "::".join(m[1:])
            if name not in linked and not any(l.startswith(name + "::") for l in linked):
                out.append(f"src/checks.rs: module src/{'/'.join(m)}.rs is not in the table of checks (`[`{name}`]`)")
    legend = doc[doc.find("`I<n>`"):] if "`I<n>`" in doc else ""
    in_legend = set(ITEM.findall(legend))
    documented = set(re.findall(r"\*\*I(\d{1,2})\b", differences))
    used: dict[str, str] = {}
    for f, text in sorted(texts.items(), key=lambda kv: str(kv[0])):
        where = str(f.relative_to(ROOT)) if isinstance(f, Path) and f.is_absolute() else str(f)
        for line_no, line in enumerate(text.splitlines(), 1):
            comment = line.split("//", 1)[1] if "//" in line else ""
            for n in ITEM.findall(comment):
                used.setdefault(n, where)
            if OUTSIDE.search(comment):
                out.append(f"{where}:{line_no}: cites a file outside the repository: {comment.strip()[:80]}")
    for n, where in sorted(used.items(), key=lambda kv: int(kv[0])):
        if n not in in_legend:
            out.append(f"src/checks.rs: I{n} (named in {where}) is not in the `I<n>` legend")
        if n not in documented:
            out.append(f"docs/differences.md: I{n} (named in {where}) has no `**I{n}` entry")
    return out


def cycles(graph: dict[tuple[str, ...], set[tuple[str, ...]]]) -> list[str]:
    """Every strongly connected component of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                names = sorted("crate" + "".join("::" + s for s in c) for c in comp)
                out.append("modules use each other (a cycle): " + ", ".join(names))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def self_test() -> int:
    """The table check finds a module left out and a row naming nothing."""
    modules = {tuple(module_of(f)) for f in SRC.rglob("*.rs")}
    base = set(unnamed(modules))
    extra = set(unnamed(modules | {("checks", "made_up")})) - base
    fails = [] if any("src/checks/made_up.rs is not named" in e for e in extra) else ["a module left out is not found"]
    checks = "//! | Pod | [`static_ip`] ([`static_ip::landing`]) |\n//! `I<n>` in comments: I1 values; I2 owners.\n"
    differences = "- **I1 values.**\n- **I2 owners.**\n"
    voice_cases = [
        ("one voice", {("checks",), ("checks", "static_ip"), ("checks", "static_ip", "landing")},
         {"a.rs": "// I1 and I2\n"}, 0),
        ("a module missing from checks.rs's table", {("checks", "static_ip"), ("checks", "static_ip", "lifecycle")},
         {}, 1),
        ("an item missing from the legend and from differences.md", {("checks", "static_ip")},
         {"a.rs": "// I3\n"}, 2),
        ("a comment citing a file outside the repository", {("checks", "static_ip")},
         {"a.rs": "let x = 1; // bounded (CONTRACT §4)\n"}, 1),
    ]
    for name, mods, texts, want in voice_cases:
        got = one_voice(mods, texts, checks, differences)
        if len(got) != want:
            fails.append(f"{name}: {len(got)} problems, want {want}: {got}")
    print(f"check-layers self-test: {1 + len(voice_cases) - len(fails)} passed, {len(fails)} failed")
    for f in fails:
        print(f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(self_test() if sys.argv[1:] == ["--self-test"] else main())
