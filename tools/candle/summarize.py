#!/usr/bin/env python3
"""Pass/fail lists of candle-core's test binaries as tools/candle/device.sh ran them.

    python3 tools/candle/summarize.py LOGS [--json F]

LOGS holds one folder per build (i, a, b), each with `<binary>.log`: libtest's output and the
`exit=N` line device.sh appends. Prints per build the totals, then every test whose outcome is
not the same in every build (and every binary that did not finish), so that "the same tests pass
in (ii) as in (i)" is a diff of this output, not a reading of logs.
"""
import argparse
import json
import pathlib
import re
import sys

TEST = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)")
EXIT = re.compile(r"^exit=(\d+)$")


def read(folder):
    """{binary: {"tests": {name: outcome}, "exit": int or None}} for one build."""
    out = {}
    for log in sorted(folder.glob("*.log")):
        tests, code = {}, None
        for line in log.read_text(errors="replace").splitlines():
            if m := TEST.match(line):
                tests[m[1]] = m[2]
            elif m := EXIT.match(line.strip()):
                code = int(m[1])
        out[log.stem] = {"tests": tests, "exit": code}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("logs", type=pathlib.Path)
    ap.add_argument("--json", type=pathlib.Path)
    a = ap.parse_args()
    builds = {d.name: read(d) for d in sorted(a.logs.iterdir()) if d.is_dir()}
    if not builds:
        sys.exit(f"{a.logs}: no build folders (i, a, b)")
    summary = {"builds": {}, "differ": [], "unfinished": []}
    for b, bins in builds.items():
        counts = {"ok": 0, "FAILED": 0, "ignored": 0}
        for name, r in bins.items():
            for outcome in r["tests"].values():
                counts[outcome] += 1
            if r["exit"] not in (0, 101):
                summary["unfinished"].append(f"{b}/{name}: exit={r['exit']}")
        summary["builds"][b] = {"binaries": len(bins), **counts,
                                "failed": sorted(f"{n}::{t}" for n, r in bins.items()
                                                 for t, o in r["tests"].items() if o == "FAILED")}
    names = sorted({(n, t) for bins in builds.values() for n, r in bins.items() for t in r["tests"]})
    for n, t in names:
        seen = {b: bins.get(n, {"tests": {}})["tests"].get(t, "absent") for b, bins in builds.items()}
        if len(set(seen.values())) > 1:
            summary["differ"].append({"test": f"{n}::{t}", **seen})
    for b, s in summary["builds"].items():
        print(f"{b}: {s['binaries']} binaries, {s['ok']} passed, {s['FAILED']} failed, {s['ignored']} ignored")
        for f in s["failed"]:
            print(f"  failed: {f}")
    print(f"tests whose outcome differs between builds: {len(summary['differ'])}")
    for d in summary["differ"]:
        print("  " + d["test"] + ": " + ", ".join(f"{b} {d[b]}" for b in builds))
    for u in summary["unfinished"]:
        print(f"  did not finish: {u}")
    if a.json:
        a.json.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
