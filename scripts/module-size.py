#!/usr/bin/env python3
"""What a wasm module's code is made of: the size of each function body in the code
section, summed by what its name says it belongs to (the crate, our modules two levels
deep, serde's derived decoders apart). Needs a module that keeps its `name` section:
build one without stripping (docs/measurements/2026-12-07-module-size.md):

    CARGO_PROFILE_RELEASE_STRIP=false cargo build --locked --target=wasm32-wasip1 \
        --release -p kube-ovn-policy
    python3 scripts/module-size.py target/wasm32-wasip1/release/kube_ovn_policy.wasm [--functions N]
"""

import argparse
import collections
import re
import sys

from e2e_harness import harness

wasm = harness("wasm")
leb = wasm.leb128


def skip_limits(body, at):
    flags, at = leb(body, at)
    _, at = leb(body, at)
    if flags & 1:
        _, at = leb(body, at)
    return at


def functions(data):
    """[(body size, name)] of the module's own functions, in index order."""
    imported, sizes, names = 0, [], {}
    for kind, body in wasm.sections(data):
        if kind == 2:  # imports: functions imported come first in the index space
            count, at = leb(body, 0)
            for _ in range(count):
                for _ in range(2):
                    length, at = leb(body, at)
                    at += length
                what, at = body[at], at + 1
                if what == 0:
                    _, at = leb(body, at)
                    imported += 1
                elif what == 1:
                    at = skip_limits(body, at + 1)
                elif what == 2:
                    at = skip_limits(body, at)
                else:
                    at += 2
        elif kind == 10:
            count, at = leb(body, 0)
            for _ in range(count):
                size, at = leb(body, at)
                sizes.append(size)
                at += size
        elif kind == 0:
            length, at = leb(body, 0)
            if body[at:at + length] != b"name":
                continue
            at += length
            while at < len(body):
                sub = body[at]
                size, at = leb(body, at + 1)
                end = at + size
                if sub == 1:
                    count, at = leb(body, at)
                    for _ in range(count):
                        index, at = leb(body, at)
                        length, at = leb(body, at)
                        names[index] = body[at:at + length].decode("utf-8", "replace")
                        at += length
                at = end
    return [(size, names.get(imported + i, "?")) for i, size in enumerate(sizes)]


def path_of(name):
    """The path components of a legacy-mangled Rust name (`_ZN…E`)."""
    parts, at = [], 3
    while at < len(name) and name[at].isdigit():
        end = at
        while name[end].isdigit():
            end += 1
        length = int(name[at:end])
        parts.append(name[end:end + length])
        at = end + length
    return parts


def part_of(name):
    """What a function belongs to, from its (mangled) name."""
    if re.search(r"serde|Deserializ|Visitor", name):
        return "serde: derived decoders and serde_json"
    crate = name.split("::")[0]
    if name.startswith("_ZN"):
        parts = path_of(name)
        crate = parts[0] if parts else name
        if crate.startswith(("_$LT$", "$LT$")):  # <Type as Trait>: the type's crate
            inner = re.sub(r"^(\$RF\$|\$BP\$|mut\$u20\$|\$u5b\$|\$LP\$)+", "", crate.split("$LT$", 1)[1])
            crate = re.split(r"\.\.|\$", inner)[0] or inner
        elif crate == "kube_ovn_policy" and len(parts) > 3:
            return "kube_ovn_policy::" + "::".join(parts[1:3])
    else:
        v0 = re.search(r"C[sS][0-9A-Za-z]*_(\d+)([a-z_][a-z0-9_]*)", name)
        if v0:
            crate = v0.group(2)[:int(v0.group(1))]
    if crate == "core":
        for module in ("slice", "cell", "fmt", "num", "str"):
            if re.search(rf"4core{len(module)}{module}", name):
                return f"core::{module}"
        return "core (else)"
    return crate


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module")
    parser.add_argument("--functions", type=int, default=0, help="also the N largest functions")
    args = parser.parse_args()
    data = open(args.module, "rb").read()
    found = functions(data)
    if not any(name != "?" for _, name in found):
        sys.exit(f"{args.module}: no name section (build it without stripping)")
    code = sum(size for size, _ in found)
    print(f"{args.module}: {len(data)} bytes, code {code} bytes in {len(found)} functions")
    parts = collections.Counter()
    for size, name in found:
        parts[part_of(name)] += size
    for part, size in parts.most_common():
        print(f"{size:9d} {100 * size / code:5.1f} %  {part}")
    for size, name in sorted(found, reverse=True)[:args.functions]:
        print(f"{size:9d}  {name[:160]}")


if __name__ == "__main__":
    main()
