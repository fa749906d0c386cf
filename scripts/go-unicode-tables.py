#!/usr/bin/env python3
"""Unicode tables for Go's `strconv.IsPrint` and `unicode.IsUpper`, as Go sees them.

    apt-get install unicode-data        # Debian bookworm: 15.0.0-1
    python3 scripts/go-unicode-tables.py [UCD_DIR] > src/upstream/go_strconv/go_unicode.rs

Kube-OVN is built with Go 1.25 (go.mod `go 1.25.7`), whose `unicode.Version`
is "15.0.0" (Go 1.21 through 1.26 ship Unicode 15.0.0; golang/go#65141 and
#73388 are still open). So the data source must be the Unicode 15.0.0
character database: UCD_DIR (default /usr/share/unicode, Debian's
`unicode-data` package) must hold UnicodeData.txt and DerivedAge.txt, and the
script refuses any other version (DerivedAge.txt names its version in its
first line).

What it writes, and why that shape:
- IS_PRINT16 / IS_NOT_PRINT16 / IS_PRINT32 / IS_NOT_PRINT32: the four tables
  of Go's src/strconv/isprint.go, built by the algorithm of Go's
  src/strconv/makeisprint.go (`scan`): ranges of printable runes, with
  single non-printable runes inside a range listed as exceptions.
  Printable, as `unicode.IsPrint`: general category L*, M*, N*, P*, S*, or
  U+0020.
- UPPER: general category Lu (Go's `unicode.Upper` table, which
  `unicode.IsUpper` reads) as (first, last, stride) runs.

It checks its own output: both tables are decoded back and compared with
the category data for every code point, and the printable set is compared
with Python's own `unicodedata` (whose version is printed): every
difference must be a code point whose age in DerivedAge.txt is newer than
Python's Unicode version, i.e. the gap between the two versions and nothing
else.
"""
import pathlib
import re
import sys
import unicodedata

WANT_VERSION = "15.0.0"
MAX_RUNE = 0x10FFFF


def read_ucd(ucd):
    head = (ucd / "DerivedAge.txt").read_text(encoding="utf-8").splitlines()[0]
    m = re.match(r"# DerivedAge-(\d+\.\d+\.\d+)\.txt", head)
    if not m or m.group(1) != WANT_VERSION:
        sys.exit(f"{ucd}/DerivedAge.txt is {head!r}; Go's unicode.Version is {WANT_VERSION}")
    category = {}
    first = None
    for line in (ucd / "UnicodeData.txt").read_text(encoding="utf-8").splitlines():
        fields = line.split(";")
        cp, name, gc = int(fields[0], 16), fields[1], fields[2]
        if name.endswith(", First>"):
            first = cp
            continue
        if name.endswith(", Last>"):
            for c in range(first, cp + 1):
                category[c] = gc
            continue
        category[cp] = gc
    age = {}
    for line in (ucd / "DerivedAge.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        span, version = (x.strip() for x in line.split(";"))
        lo, _, hi = span.partition("..")
        for c in range(int(lo, 16), int(hi or lo, 16) + 1):
            age[c] = version
    return category, age


def scan(is_print, lo_rune, hi_rune):
    """Go's makeisprint.go `scan`: ranges, and exceptions that avoid a flip-flop."""
    rang, excep = [], []
    lo = -1
    i = lo_rune
    while True:
        if (i > hi_rune or not is_print(i)) and lo >= 0:
            if i + 1 <= hi_rune and is_print(i + 1):
                excep.append(i)
                i += 1
                continue
            rang += [lo, i - 1]
            lo = -1
        if i > hi_rune:
            break
        if lo < 0 and is_print(i):
            lo = i
        i += 1
    return rang, excep


def bsearch(a, x):
    """Go's bsearch16/bsearch32: the smallest i with a[i] >= x."""
    i, j = 0, len(a)
    while i < j:
        h = (i + j) // 2
        if a[h] < x:
            i = h + 1
        else:
            j = h
    return i


def go_is_print(r, p16, np16, p32, np32):
    """Go's strconv.IsPrint over the four tables (mirrors src/upstream/go_strconv.rs)."""
    if r <= 0xFF:
        if 0x20 <= r <= 0x7E:
            return True
        if 0xA1 <= r <= 0xFF:
            return r != 0xAD
        return False
    if r < 0x10000:
        table, nots, x = p16, np16, r
    else:
        table, nots, x = p32, np32, r
    i = bsearch(table, x)
    if i >= len(table) or x < table[i & ~1] or table[i | 1] < x:
        return False
    if r >= 0x20000:
        return True
    if r >= 0x10000:
        x = r - 0x10000
    j = bsearch(nots, x)
    return j >= len(nots) or nots[j] != x


def stride_runs(points):
    """Sorted code points as disjoint (first, last, stride) runs, greedily."""
    runs, i = [], 0
    while i < len(points):
        if i + 1 == len(points):
            runs.append((points[i], points[i], 1))
            break
        stride = points[i + 1] - points[i]
        j = i + 1
        while j + 1 < len(points) and points[j + 1] - points[j] == stride:
            j += 1
        runs.append((points[i], points[j], stride))
        i = j + 1
    return runs


def in_runs(runs, r):
    for lo, hi, stride in runs:
        if lo <= r <= hi:
            return (r - lo) % stride == 0
    return False


def rows(values, per_line, width):
    out = []
    for k in range(0, len(values), per_line):
        chunk = values[k : k + per_line]
        out.append("    " + " ".join(f"0x{v:0{width}x}," for v in chunk))
    return "\n".join(out)


def main():
    ucd = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/unicode")
    category, age = read_ucd(ucd)

    def is_print(r):
        return r == 0x20 or category.get(r, "Cn")[0] in "LMNPS"

    rang16, excep16 = scan(is_print, 0, 0xFFFF)
    rang32, excep32 = scan(is_print, 0x10000, MAX_RUNE)
    assert all(r < 0x20000 for r in excep32), "an exception too big for isNotPrint32"
    np32 = [r - 0x10000 for r in excep32]

    upper = sorted(c for c, g in category.items() if g == "Lu")
    runs = stride_runs(upper)
    upper_set = set(upper)

    # Decode both tables back for every code point.
    for r in range(MAX_RUNE + 1):
        if 0xD800 <= r <= 0xDFFF:
            continue
        got = go_is_print(r, rang16, excep16, rang32, np32)
        assert got == is_print(r), f"IsPrint table wrong at U+{r:04X}"
    for r in upper:
        assert in_runs(runs, r), f"Upper table misses U+{r:04X}"
    for lo, hi, stride in runs:
        for r in range(lo, hi + 1, stride):
            assert r in upper_set, f"Upper table has U+{r:04X}"

    # Against Python's own (older) database: only the version gap may differ.
    py_version = unicodedata.unidata_version
    newer = lambda c: tuple(map(int, age.get(c, "99.0").split("."))) > tuple(
        map(int, py_version.split(".")[:2])
    )
    diff_print = diff_upper = 0
    for r in range(MAX_RUNE + 1):
        if 0xD800 <= r <= 0xDFFF:
            continue
        py_cat = unicodedata.category(chr(r))
        py_print = r == 0x20 or py_cat[0] in "LMNPS"
        if py_print != is_print(r):
            assert newer(r), f"U+{r:04X}: printable differs from Python's {py_version} without being new"
            diff_print += 1
        if (py_cat == "Lu") != (r in upper_set):
            assert newer(r), f"U+{r:04X}: Lu differs from Python's {py_version} without being new"
            diff_upper += 1
    print(
        f"checked: tables decode to UnicodeData {WANT_VERSION}; against Python's unicodedata "
        f"{py_version}: {diff_print} printable and {diff_upper} Lu differences, all new since {py_version}",
        file=sys.stderr,
    )

    p16_bytes = 2 * (len(rang16) + len(excep16)) + 4 * len(rang32) + 2 * len(np32)
    print(f"""\
//! Unicode {WANT_VERSION} tables for Go's `strconv.IsPrint` and `unicode.IsUpper`.
//!
//! Generated by `python3 scripts/go-unicode-tables.py` from the Unicode
//! Character Database {WANT_VERSION} (UnicodeData.txt, DerivedAge.txt; Debian
//! bookworm package `unicode-data` 15.0.0-1). Do not edit; regenerate.
//! Unicode {WANT_VERSION} is Go's `unicode.Version` from Go 1.21 on, and so the
//! version of the Go 1.25 that Kube-OVN is built with.

/// Go's `isPrint16` (src/strconv/isprint.go): pairs of first and last rune of
/// each printable range below U+10000.
pub(super) static IS_PRINT16: &[u16] = &[
{rows(rang16, 8, 4)}
];

/// Go's `isNotPrint16`: non-printable runes inside the ranges of `IS_PRINT16`.
pub(super) static IS_NOT_PRINT16: &[u16] = &[
{rows(excep16, 8, 4)}
];

/// Go's `isPrint32`: pairs of first and last rune of each printable range
/// from U+10000 on.
pub(super) static IS_PRINT32: &[u32] = &[
{rows(rang32, 6, 6)}
];

/// Go's `isNotPrint32`: non-printable runes (minus 0x10000) inside the
/// ranges of `IS_PRINT32`; all are below U+20000.
pub(super) static IS_NOT_PRINT32: &[u16] = &[
{rows(np32, 8, 4)}
];

/// General category Lu (Go's `unicode.Upper`) as (first, last, stride) runs
/// in order: a rune is upper case when it is `first + k * stride` <= `last`.
pub(super) static UPPER: &[(u32, u32, u32)] = &[""")
    for lo, hi, stride in runs:
        print(f"    (0x{lo:04x}, 0x{hi:04x}, {stride}),")
    print("];")
    print(
        f"tables: IsPrint {len(rang16)}+{len(excep16)} u16, {len(rang32)} u32, {len(np32)} u16 "
        f"({p16_bytes} bytes); Lu {len(upper)} runes in {len(runs)} runs ({12 * len(runs)} bytes)",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
