#!/usr/bin/env python3
"""The policy's answers held against kube-ovn-webhook's recorded ones (`make fidelity`).

    python3 scripts/fidelity.py ANSWERS [--shared DIR] [--update-doc]

ANSWERS is what `conformance --answers` wrote: the policy's answer to every
case (one JSON object a line, with the case's file). Each case carries
upstream's answer to the same request and cluster in `upstream`, recorded by
`make oracle` from kube-ovn-webhook itself (tests/README.md). A case agrees
when the policy answers as upstream did (decision, code, message,
warnings); it differs as documented when it does not, and the case names a
contract item that docs/differences.md lists (`contract: I<n>`, or
`difference: §5` where a public case says `upstream` but the policy words a
bad-input rejection its own way); anything else is unexplained. A record whose `input` no longer matches the case's
request and cluster is stale: upstream was asked something else.

docs/differences.md is checked against the records: every item it lists
has a case, and its table of the cases where upstream answers otherwise
(between the `fidelity` markers) is the one these records give
(`--update-doc` writes it).

Cases of --shared (the public set, read in place) are the copies in
tests/conformance when their content is the same; a shared case without a
recorded copy is counted as unrecorded.

The allocator column: a case about a Pod or a workload also carries
`controller`, what kube-ovn-controller itself did with the same request over
the same cluster (`make controller-oracle`, e2e/tools/controller_oracle.py):
allocated, refused, waiting or double (an address with a second holder); for
a workload, the worst of its pods' (kube-controller-manager made them), each
in `pods`. A case the policy admits agrees when the controller allocated it
(every pod) with no second holder; a case the policy refuses agrees when the
controller refused it (one pod is enough), left it waiting or gave an
address a second holder. An IPPool case's: `ready` (the controller's IPAM
took it) agrees with an admission, `failed` (its Ready condition False, the
error) or `waiting` with a refusal. Otherwise the case differs as documented when
docs/fidelity.md lists the case itself (a known finding), or `upstream` and
kube-ovn-webhook gave the very same answer (§1 keeps upstream's), or
the item (`contract`, else `difference`) by which the policy departs from
upstream as a place where the allocator and the policy differ on purpose; it
is unexplained when not.
docs/fidelity.md's table of those cases (between the `allocator` markers) is
the one the records give. A case without a record, or one the controller
could not be asked, is counted as not asked; a stale record fails.
`allocator: N cases, N agree, N differ as documented, N unexplained, N not asked`
is printed before the last line.

The Kube-OVN releases users run (tests/releases/<tag>.json, written by
`make oracle ORACLE_RELEASE=<tag>` and `make controller-oracle
ORACLE_RELEASE=<tag>`: records keyed by case, each with the case's `input`)
are judged beside the pin, one line each before the last:
`fidelity <tag>: N cases, N agree, N differ as documented, N unexplained`
(and `allocator <tag>: …` where its controller was recorded). A release's
answer that is the pin's is judged as the pin's is; one that differs from the
pin's must be a row of docs/compatibility.md's table (between the
`compatibility` markers, written by `--update-doc`, which keeps each row's
verdict) whose verdict says `stricter` or `wrong`; anything else is
unexplained. A release's unexplained, unrecorded or stale cases are printed
and counted but do not fail the run yet (issue 47).

The last line: `fidelity: N cases, N agree, N differ as documented, N unexplained`.
Exits 1 when a case is unexplained or stale, or a document disagrees.
"""

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs/differences.md"
BEGIN, END = "<!-- fidelity:begin -->", "<!-- fidelity:end -->"
ALLOCATOR_DOC = ROOT / "docs/fidelity.md"
ALLOCATOR_BEGIN, ALLOCATOR_END = "<!-- allocator:begin -->", "<!-- allocator:end -->"
RELEASES_DIR = ROOT / "tests/releases"
COMPAT_DOC = ROOT / "docs/compatibility.md"
COMPAT_BEGIN, COMPAT_END = "<!-- compatibility:begin -->", "<!-- compatibility:end -->"
# A compatibility row's verdict that explains it: the policy is stricter than the release there
# (harmless: the pod could not have worked, or the pin's webhook refuses it too), or wrong on it.
VERDICTS = ("stricter", "wrong", "same")
UNJUDGED = "unjudged"
# What the controller did that counts as not giving the pod an address cleanly.
NOT_ALLOCATED = ("refused", "waiting", "double")
# The kinds whose cases the allocator judges: pods, and the workloads that make them.
ALLOCATED_KINDS = ("Pod", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "IPPool")
# An IPPool's: the controller's IPAM took it (`ready`), or not (`failed`, its condition; `waiting`).
POOL_OUTCOMES = {"ready": True, "failed": False, "waiting": False}
ITEM = re.compile(r"^(I\d+|§\d+)$")
# What a case adds to its copy of a shared case: the recorded answers (upstream's, the
# controller's), and the item it differs by.
ADDED = ("upstream", "difference", "controller")


def case_input(case):
    """The hash e2e/harness/cases.py's record_of records: what upstream's answer depends on."""
    key = {k: case.get(k) for k in ("request", "cluster", "settings", "forbidden")}
    text = json.dumps(key, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def answer_of(record):
    """The comparable part of an answer: a denial's code and message, warnings always.

    Upstream joins ValidatePodNetwork's errors (`[a, b]`) in Go's random map
    order, the policy in key order (docs/differences.md): such a message is
    compared as the set of its parts.
    """
    allowed = bool(record["allowed"])
    message = None if allowed else record.get("message")
    if message and message.startswith("[") and message.endswith("]") and ", " in message:
        message = "[" + ", ".join(sorted(message[1:-1].split(", "))) + "]"
    return {
        "allowed": allowed,
        "code": None if allowed else record.get("code"),
        "message": message,
        "warnings": list(record.get("warnings") or []),
    }


def item_order(item):
    return (item[0] != "I", int(item[1:]))


def documented_items(text):
    """The items docs/differences.md lists: its bullets `- **I<n> …**` and `- **§<n> …**`."""
    return sorted(set(re.findall(r"^- \*\*(I\d+|§\d+)\b", text, re.M)), key=item_order)


def table(items, shown, alike):
    """The document's table: per item, the cases where upstream answers otherwise."""
    lines = [BEGIN, "", "| item | cases where kube-ovn-webhook answers otherwise |", "|---|---|"]
    for item in items:
        if shown.get(item):
            cell = ", ".join(f"`{c}`" for c in sorted(shown[item]))
        else:
            cell = "none: upstream answers this item's cases alike (" + \
                ", ".join(f"`{c}`" for c in sorted(alike.get(item, []))) + ")"
        lines.append(f"| {item} | {cell} |")
    return "\n".join(lines + ["", END])


def judge(answers, shared):
    """(results, problems): one result per distinct case, and what is wrong with the records."""
    results, problems, seen = [], [], {}
    copies = {}
    for line in answers:
        path = Path(line["file"])
        case = json.loads(path.read_text())
        if path.resolve().parent == shared:
            continue  # judged through its copy below
        name = path.stem
        if path.parent.name == "conformance":
            copies[path.name] = case
        record = case.get("upstream")
        item = case.get("contract") if ITEM.match(str(case.get("contract"))) else case.get("difference")
        entry = {"case": name, "file": str(path), "item": item, "policy": answer_of(line)}
        if record is None:
            entry["status"] = "unrecorded"
            problems.append(f"{name}: no recorded upstream answer: run make oracle")
        elif record.get("input") != case_input(case):
            entry["status"] = "stale"
            problems.append(f"{name}: the recorded upstream answer is stale (the case changed): run make oracle")
        elif record.get("asked") is False:
            entry["status"] = "not asked"
            entry["why"] = record.get("why", "")
        else:
            entry["upstream"] = answer_of(record)
            if entry["upstream"] == entry["policy"]:
                entry["status"] = "agree"
            elif ITEM.match(str(entry["item"] or "")):
                entry["status"] = "differs"
            else:
                entry["status"] = "unexplained"
        seen[case_input(case)] = name
        results.append(entry)
    if shared:
        for path in sorted(shared.glob("*.json")):
            case = json.loads(path.read_text())
            copy = copies.get(path.name)
            if copy is None or {k: v for k, v in copy.items() if k not in ADDED} != case:
                results.append({"case": f"shared/{path.stem}", "item": case.get("contract"), "status": "unrecorded"})
    return results, problems


def allocator_items(text):
    """What docs/fidelity.md lists as explaining a difference from the allocator, in its allocator
    section: bullets `- **I<n> …**` (an item), `- **upstream …**` (kube-ovn-webhook's own decision,
    kept by §1) and `- **`<case>`**` (one case, a finding not yet resolved)."""
    section = text[text.index("## The allocator"):] if "## The allocator" in text else ""
    return set(re.findall(r"^- \*\*`?(I\d+|§\d+|upstream|[0-9a-z][-0-9a-z]*)\b`?", section, re.M))


def explanation(name, item, answer, case, items):
    """Why the policy may decide otherwise than the allocator did, or None: the case itself
    listed; else kube-ovn-webhook gave the very same answer (its rule, kept by §1: the policy
    claims nothing beyond upstream there); else the item by which the policy departs from upstream."""
    upstream = case.get("upstream") or {}
    if name in items:
        return name
    if "upstream" in items and upstream.get("asked") is not False and "allowed" in upstream \
            and answer_of(upstream) == answer:
        return "upstream"
    if item in items and item != "upstream":
        return item
    return None


def judge_allocator(answers, items):
    """(results, problems): the policy's answer to each case against kube-ovn-controller's recorded outcome."""
    results, problems = [], []
    for line in answers:
        path = Path(line["file"])
        case = json.loads(path.read_text())
        kind = ((case.get("request") or {}).get("kind") or {}).get("kind")
        if kind not in ALLOCATED_KINDS:
            continue  # the controller allocates for pods (and takes IPPools) only
        record = case.get("controller")
        item = case.get("contract") if ITEM.match(str(case.get("contract"))) else case.get("difference") or "upstream"
        admitted = bool(line["allowed"])
        entry = {"case": path.stem, "file": str(path), "item": item, "policy": "admits" if admitted else "refuses"}
        if record is None or record.get("asked") is False:
            entry["status"] = "not asked"
        elif record.get("input") != case_input(case):
            entry["status"] = "stale"
            problems.append(f"{path.stem}: the recorded controller outcome is stale (the case changed): "
                            "run make controller-oracle")
        else:
            entry["controller"] = record.get("outcome")
            entry["detail"] = record.get("event") or record.get("second_holder") or record.get("condition") or (
                "; ".join(record["pods"]) if "pods" in record else json.dumps(record.get("available"))
                if "available" in record else json.dumps(record.get("nics")))
            outcome = record.get("outcome")
            taken = POOL_OUTCOMES.get(outcome) if kind == "IPPool" else \
                {"allocated": True, **{o: False for o in NOT_ALLOCATED}}.get(outcome)
            if taken is not None and taken == admitted:
                entry["status"] = "agree"
            else:
                entry["why"] = explanation(path.stem, item, answer_of(line), case, items)
                entry["status"] = "differs" if entry["why"] else "unexplained"
        results.append(entry)
    return results, problems


def allocator_table(results):
    """docs/fidelity.md's table: every case where the controller did otherwise than the policy decided."""
    lines = [ALLOCATOR_BEGIN, "", "| explained by | case (item) | policy | kube-ovn-controller |", "|---|---|---|---|"]
    differing = [r for r in results if r["status"] == "differs"]
    for r in sorted(differing, key=lambda r: (item_order_any(r["why"]), r["case"])):
        detail = r["detail"].replace("|", "\\|")
        lines.append(f"| {r['why']} | `{r['case']}` ({r['item']}) | {r['policy']} | {r['controller']}: {detail} |")
    return "\n".join(lines + ["", ALLOCATOR_END])


def item_order_any(why):
    """Items first in their order, then `upstream`, then single cases."""
    return (0, *item_order(why)) if ITEM.match(why) else (1, 0, 0) if why == "upstream" else (2, 0, 0)


def sync_table(path, doc, begin, end, wanted, update, what):
    """A document's table between its markers against `wanted`: written with `update`, else
    the problems (none when it is the records')."""
    name = path.relative_to(ROOT)
    if begin not in doc or end not in doc:
        return [f"{name} has no table between {begin} and {end}"]
    current = doc[doc.index(begin):doc.index(end) + len(end)]
    if current == wanted:
        return []
    if update:
        path.write_text(doc.replace(current, wanted))
        print(f"fidelity: {name}'s {what} written")
        return []
    return [f"{name}'s {what} is not the records': make fidelity UPDATE=1"]


def check_allocator(answers, update_doc):
    """The allocator column: prints its unexplained cases and its summary line; the problems."""
    doc = ALLOCATOR_DOC.read_text()
    results, problems = judge_allocator(answers, allocator_items(doc))
    problems += sync_table(ALLOCATOR_DOC, doc, ALLOCATOR_BEGIN, ALLOCATOR_END, allocator_table(results), update_doc,
                           "allocator table")
    for r in results:
        if r["status"] == "unexplained":
            print(f"UNEXPLAINED allocator {r['case']} (contract {r['item']}): the policy {r['policy']}, "
                  f"kube-ovn-controller {r['controller']}: {r['detail']}")
    count = {s: sum(1 for r in results if r["status"] == s) for s in ("agree", "differs", "unexplained", "not asked")}
    print(f"allocator: {count['agree'] + count['differs'] + count['unexplained']} cases, {count['agree']} agree, "
          f"{count['differs']} differ as documented, {count['unexplained']} unexplained, "
          f"{count['not asked']} not asked")
    if count["unexplained"]:
        problems.append(f"{count['unexplained']} cases where kube-ovn-controller did otherwise, unexplained")
    return problems, {r["file"]: r["status"] for r in results}


def case_key(path):
    """A case's key in a release's records (e2e/harness/cases.py's case_key)."""
    return f"{Path(path).parent.name}/{Path(path).stem}"


def releases():
    """Each recorded release's records, oldest tag last: [(tag, {"upstream": …, "controller": …})]."""
    def version(path):
        return tuple(int(n) for n in re.findall(r"\d+", path.stem))
    return [(p.stem, json.loads(p.read_text())) for p in sorted(RELEASES_DIR.glob("v*.json"), key=version,
                                                              reverse=True)]


def shown(answer):
    """An answer in a table cell: `admits`, or the code and the message."""
    if answer["allowed"]:
        text = "admits" + (" (warnings: " + "; ".join(answer["warnings"]) + ")" if answer["warnings"] else "")
    else:
        text = f"{answer['code']}: {answer['message']}"
    return text.replace("|", "\\|").replace("\n", " ")


def compat_verdicts(doc):
    """The verdict of each row of docs/compatibility.md's table: (release, case, program) -> verdict."""
    if COMPAT_BEGIN not in doc or COMPAT_END not in doc:
        return {}
    verdicts = {}
    for line in doc[doc.index(COMPAT_BEGIN):doc.index(COMPAT_END)].splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == 7 and cells[1].startswith("`"):
            verdicts[(cells[0], cells[1].strip("`"), cells[2])] = cells[6]
    return verdicts


def explained(verdict):
    return bool(verdict) and verdict.split()[0].strip("*:,.").lower() in VERDICTS


def judge_release(tag, data, answers, pin, verdicts):
    """(results, rows): the policy's answer to every case against the release's webhook, and the
    table rows: every case where the release's webhook answers otherwise than the pin's."""
    results, rows = [], []
    records = data.get("upstream", {})
    for line in answers:
        path = Path(line["file"])
        entry = pin.get(str(path))
        if entry is None:
            continue
        case = json.loads(path.read_text())
        key = case_key(path)
        record = records.get(key)
        result = {"case": key, "item": entry["item"]}
        if record is None:
            result["status"] = "unrecorded"
        elif record.get("input") != case_input(case):
            result["status"] = "stale"
        elif record.get("asked") is False:
            result["status"] = "not asked"
        else:
            mine, policy = answer_of(record), entry["policy"]
            theirs = entry.get("upstream")
            if theirs is not None and mine != theirs:
                verdict = "same as the release" if mine == policy else verdicts.get((tag, key, "webhook"), UNJUDGED)
                rows.append((key, "webhook", shown(mine), shown(theirs), shown(policy), verdict))
            if mine == policy:
                result["status"] = "agree"
            elif theirs is not None and mine == theirs:
                result["status"] = entry["status"]  # the pin's judgement: docs/differences.md's item
            elif explained(verdicts.get((tag, key, "webhook"))):
                result["status"] = "differs"
            else:
                result["status"] = "unexplained"
                result["why"] = f"{tag}: {shown(mine)}; the policy: {shown(policy)}"
        results.append(result)
    return results, rows


def judge_release_allocator(tag, data, answers, pin, verdicts):
    """(results, rows): the policy's decision against the release's controller, where recorded."""
    results, rows = [], []
    records = data.get("controller", {})
    for line in answers:
        path = Path(line["file"])
        key = case_key(path)
        record = records.get(key)
        if record is None:
            continue  # the controller's outcome is recorded for the cases chosen (docs/compatibility.md)
        case = json.loads(path.read_text())
        kind = ((case.get("request") or {}).get("kind") or {}).get("kind")
        admitted = bool(line["allowed"])
        result = {"case": key, "policy": "admits" if admitted else "refuses"}
        if record.get("input") != case_input(case):
            result["status"] = "stale"
        elif record.get("asked") is False:
            result["status"] = "not asked"
        else:
            outcome = record.get("outcome")
            taken = POOL_OUTCOMES.get(outcome) if kind == "IPPool" else \
                {"allocated": True, **{o: False for o in NOT_ALLOCATED}}.get(outcome)
            theirs = case.get("controller") or {}
            pin_outcome = theirs.get("outcome") if theirs.get("input") == case_input(case) else None
            pin_taken = POOL_OUTCOMES.get(pin_outcome) if kind == "IPPool" else \
                {"allocated": True, **{o: False for o in NOT_ALLOCATED}}.get(pin_outcome)
            # Refused, waiting or double are alike to the policy (not served): a row only where the
            # release serves what the pin does not, or the other way round.
            if pin_outcome and taken != pin_taken:
                verdict = "same as the release" if taken == admitted else \
                    verdicts.get((tag, key, "controller"), UNJUDGED)
                rows.append((key, "controller", shown_outcome(record), shown_outcome(theirs), result["policy"],
                             verdict))
            if taken is not None and taken == admitted:
                result["status"] = "agree"
            elif pin_outcome and taken == pin_taken and pin.get(str(path)) in ("differs", "agree"):
                result["status"] = "differs"  # as the pin's controller: docs/fidelity.md
            elif explained(verdicts.get((tag, key, "controller"))):
                result["status"] = "differs"
            else:
                result["status"] = "unexplained"
                result["why"] = f"{tag}'s controller: {outcome}; the policy {result['policy']}"
        results.append(result)
    return results, rows


def shown_outcome(record):
    """A controller's outcome in a table cell: the outcome and its event (a workload's first pod's)."""
    detail = record.get("event") or record.get("condition") or ""
    text = record.get("outcome", "") + (f" ({detail})" if detail else "")
    return text.replace("|", "\\|").replace("\n", " ")


def compat_table(rows):
    """docs/compatibility.md's table: per release, every case where it answers otherwise than the pin."""
    lines = [COMPAT_BEGIN, "", "| release | case | program | release's answer | pin's answer | policy | verdict |",
             "|---|---|---|---|---|---|---|"]
    for tag, key, program, mine, theirs, policy, verdict in rows:
        lines.append(f"| {tag} | `{key}` | {program} | {mine} | {theirs} | {policy} | {verdict} |")
    return "\n".join(lines + ["", COMPAT_END])


def check_releases(answers, results, allocator, update_doc):
    """One line per recorded release (and its allocator's); docs/compatibility.md's table. The problems
    that fail the run: the table not the records' only (a release's own findings do not fail yet)."""
    recorded = releases()
    if not recorded:
        return []
    pin = {r["file"]: r for r in results if "file" in r}
    doc = COMPAT_DOC.read_text() if COMPAT_DOC.exists() else ""
    verdicts = compat_verdicts(doc)
    rows = []
    for tag, data in recorded:
        found, webhook_rows = judge_release(tag, data, answers, pin, verdicts)
        allocated, controller_rows = judge_release_allocator(tag, data, answers, allocator, verdicts)
        rows += [(tag, *r) for r in webhook_rows + controller_rows]
        for r in found + allocated:
            if r["status"] in ("unexplained", "stale"):
                print(f"{r['status'].upper()} {tag} {r['case']}: {r.get('why', 'run make oracle ORACLE_RELEASE=' + tag)}")
        count = {s: sum(1 for r in found if r["status"] == s)
                 for s in ("agree", "differs", "unexplained", "not asked", "unrecorded", "stale")}
        print(f"# {tag}: {count['not asked']} not asked, {count['unrecorded']} unrecorded, {count['stale']} stale")
        if allocated:
            a = {s: sum(1 for r in allocated if r["status"] == s)
                 for s in ("agree", "differs", "unexplained", "not asked", "stale")}
            print(f"allocator {tag}: {a['agree'] + a['differs'] + a['unexplained']} cases, {a['agree']} agree, "
                  f"{a['differs']} differ as documented, {a['unexplained']} unexplained, {a['not asked']} not asked")
        print(f"fidelity {tag}: {count['agree'] + count['differs'] + count['unexplained']} cases, "
              f"{count['agree']} agree, {count['differs']} differ as documented, {count['unexplained']} unexplained")
    if not doc:
        return [f"{COMPAT_DOC.relative_to(ROOT)} is missing"]
    return sync_table(COMPAT_DOC, doc, COMPAT_BEGIN, COMPAT_END, compat_table(rows), update_doc,
                      "compatibility table")


def save_generated(results, folder):
    """Generated cases: print and save the unexplained ones; the count line."""
    folder.mkdir(parents=True, exist_ok=True)
    count = {}
    for r in results:
        u, p = r.get("upstream"), r.get("policy")
        if r["status"] == "unexplained" and u["code"] == p["code"] == 400 and \
                (p["message"] or "").startswith("cannot decode "):
            r["status"], r["item"] = "differs", "§5"  # an object that does not decode, in the policy's words
        count[r["status"]] = count.get(r["status"], 0) + 1
        if r["status"] != "unexplained":
            continue
        case = json.loads(Path(r["file"]).read_text())
        case["expect"] = {"allowed": u["allowed"], "code": u["code"], "message": u["message"],
                          "message_contains": None, "warnings": u["warnings"]}
        (folder / Path(r["file"]).name).write_text(json.dumps(case, indent=2, ensure_ascii=False) + "\n")
        print(f"DISAGREE {r['case']} (contract {r['item'] or 'upstream'})\n"
              f"  policy   {json.dumps(r['policy'], ensure_ascii=False)}\n"
              f"  upstream {json.dumps(u, ensure_ascii=False)}")
    judged = sum(count.get(s, 0) for s in ("agree", "differs", "unexplained"))
    print(f"generated: {judged} cases, {count.get('agree', 0)} agree, {count.get('differs', 0)} differ under "
          f"their item, {count.get('unexplained', 0)} disagree (saved in {folder}), "
          f"{count.get('not asked', 0)} not asked")
    return 1 if count.get("unexplained") else 0


def self_test(answers):
    """The judge can fail: a tampered record, a changed case and an undocumented item are caught."""
    import copy
    import tempfile
    def usable(a, controller):
        case = json.loads(Path(a["file"]).read_text())
        return case.get("contract") == "upstream" and case.get("upstream", {}).get("asked") is not False \
            and (not controller or case.get("controller", {}).get("outcome"))
    line = next((a for a in answers if usable(a, True)), None) or next(a for a in answers if usable(a, False))
    case = json.loads(Path(line["file"]).read_text())
    with tempfile.TemporaryDirectory() as folder:
        def judged(mutate):
            c = copy.deepcopy(case)
            mutate(c)
            path = Path(folder) / "cases" / "x-self-test.json"
            path.parent.mkdir(exist_ok=True)
            path.write_text(json.dumps(c, ensure_ascii=False))
            results, problems = judge([dict(line, file=str(path))], None)
            return results[0]["status"], problems
        tampered = judged(lambda c: c["upstream"].update(allowed=not c["upstream"]["allowed"], code=400, message="x"))
        stale = judged(lambda c: c["request"].update(uid="changed"))
        unrecorded = judged(lambda c: c.pop("upstream"))
        same = judged(lambda c: None)
        allocator = None
        if case.get("controller", {}).get("outcome"):
            path = Path(folder) / "cases" / "x-self-test.json"
            c = copy.deepcopy(case)
            c["controller"]["outcome"] = "allocated" if c["controller"]["outcome"] != "allocated" else "refused"
            path.write_text(json.dumps(c, ensure_ascii=False))
            flipped = judge_allocator([dict(line, file=str(path))], set())[0][0]["status"]
            c["request"]["uid"] = "changed"
            path.write_text(json.dumps(c, ensure_ascii=False))
            stale_allocator = judge_allocator([dict(line, file=str(path))], set())[1]
            allocator = flipped == "unexplained" and stale_allocator != []
    # A release: its answer unlike the pin's and the policy's is unexplained without a verdict, documented
    # with one, judged as the pin's when it is the pin's; a stale one is stale.
    pin_results, _ = judge([line], None)
    pin = {r["file"]: r for r in pin_results}
    key = case_key(line["file"])
    base = {"upstream": {key: dict(case["upstream"])}}
    other = {"upstream": {key: dict(case["upstream"], allowed=False, code=400, message="x")}}
    changed = {"upstream": {key: dict(case["upstream"], input="0")}}
    verdict = {("vX", key, "webhook"): "stricter: self-test"}
    release = [judge_release("vX", base, [line], pin, {})[0][0]["status"],
               judge_release("vX", other, [line], pin, {}),
               judge_release("vX", other, [line], pin, verdict)[0][0]["status"],
               judge_release("vX", changed, [line], pin, {})[0][0]["status"]]
    checks = [("a record unlike the policy's answer is unexplained", tampered[0] == "unexplained"),
              ("a release's answer: the pin's agrees, another is a table row, unexplained without a verdict, "
               "documented with one, a changed case stale",
               release[0] == "agree" and release[1][0][0]["status"] == "unexplained" and len(release[1][1]) == 1
               and release[2] == "differs" and release[3] == "stale"),
              ("a case changed after its record is stale", stale[0] == "stale" and stale[1]),
              ("a case without a record fails", unrecorded[1] != []),
              ("the case as recorded agrees", same[0] == "agree"),
              ("a controller outcome unlike the policy's answer is unexplained, a stale one fails",
               allocator is not False)]
    for what, ok in checks:
        print(f"{'ok' if ok else 'FAIL'} self-test: {what}")
    return all(ok for _, ok in checks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("answers", help="the file `conformance --answers` wrote")
    parser.add_argument("--shared", help="the public cases read in place (their copies carry the records)")
    parser.add_argument("--update-doc", action="store_true", help="write the table of docs/differences.md")
    parser.add_argument("--verbose", action="store_true", help="one line per case")
    parser.add_argument("--generated", metavar="DIR",
                        help="generated cases (e2e/tools/generate.py): no document check; each unexplained case is "
                             "saved in DIR with upstream's answer as its expected one")
    args = parser.parse_args()
    answers = [json.loads(line) for line in Path(args.answers).read_text().split("\n") if line.strip()]
    shared = Path(args.shared).resolve() if args.shared and Path(args.shared).is_dir() else None
    if not args.generated and not self_test(answers):
        return 1
    results, problems = judge(answers, shared)

    if args.generated:
        return save_generated(results, Path(args.generated))
    doc = DOC.read_text()
    items = documented_items(doc)
    shown, alike = {}, {}
    for r in results:
        if r["status"] == "agree" and r["item"]:
            alike.setdefault(r["item"], []).append(r["case"])
        if r["status"] == "differs":
            if r["item"] in items:
                shown.setdefault(r["item"], []).append(r["case"])
            else:
                r["status"] = "unexplained"
                r["why"] = f"{r['item']} is not in docs/differences.md"
    for item in items:
        if item not in shown and item not in alike:
            problems.append(f"docs/differences.md lists {item}, but no recorded case names it")
    wanted = table(items, shown, alike)
    problems += sync_table(DOC, doc, BEGIN, END, wanted, args.update_doc, "table of cases")

    for r in results:
        if r["status"] == "unexplained":
            print(f"UNEXPLAINED {r['case']} (contract {r['item']}): {r.get('why', '')}\n"
                  f"  policy   {json.dumps(r['policy'], ensure_ascii=False)}\n"
                  f"  upstream {json.dumps(r['upstream'], ensure_ascii=False)}")
        elif args.verbose or r["status"] in ("stale",):
            print(f"{r['status']:<12} {r['case']}")
    own = [a for a in answers if Path(a["file"]).resolve().parent != shared]
    found, allocator = check_allocator(own, args.update_doc)
    problems += found
    problems += check_releases(own, results, allocator, args.update_doc)
    for p in problems:
        print(f"FAIL {p}")
    count = {s: sum(1 for r in results if r["status"] == s)
             for s in ("agree", "differs", "unexplained", "not asked", "unrecorded", "stale")}
    judged = count["agree"] + count["differs"] + count["unexplained"]
    if count["not asked"]:
        print("# not asked of upstream: " + ", ".join(r["case"] for r in results if r["status"] == "not asked"))
    if count["unrecorded"]:
        print(f"# {count['unrecorded']} cases without a recorded upstream answer (make oracle records them): "
              + ", ".join(r["case"] for r in results if r["status"] == "unrecorded")[:2000])
    print(f"fidelity: {judged} cases, {count['agree']} agree, {count['differs']} differ as documented, "
          f"{count['unexplained']} unexplained")
    return 1 if count["unexplained"] or problems else 0


if __name__ == "__main__":
    sys.exit(main())
