#!/usr/bin/env python3
"""Prints criterion results as a markdown table of medians per item.

Usage: criterion_table.py GROUP_PREFIX [CRITERION_DIR]

Reads target/criterion/<group>/<function>/<n>/new/estimates.json and
benchmark.json for every group whose name starts with GROUP_PREFIX, and
prints, for each group and N, the median ns per item of each function and its
ratio to the first function (the batch).
"""
import json
import os
import sys


def load(root):
    rows = {}
    for dirpath, _dirs, files in os.walk(root):
        if "benchmark.json" not in files or not dirpath.endswith("new"):
            continue
        with open(os.path.join(dirpath, "benchmark.json")) as f:
            bench = json.load(f)
        with open(os.path.join(dirpath, "estimates.json")) as f:
            est = json.load(f)
        group = bench["group_id"]
        function = bench.get("function_id") or ""
        value = bench.get("value_str") or ""
        n = int(value) if value.isdigit() else 1
        throughput = bench.get("throughput") or {}
        items = throughput.get("Elements", n)
        median = est["median"]["point_estimate"] / items
        lo = est["median"]["confidence_interval"]["lower_bound"] / items
        hi = est["median"]["confidence_interval"]["upper_bound"] / items
        rows.setdefault(group, {}).setdefault(value, {})[function] = (median, lo, hi)
    return rows


def main():
    prefix = sys.argv[1] if len(sys.argv) > 1 else ""
    root = sys.argv[2] if len(sys.argv) > 2 else "target/criterion"
    rows = load(root)
    for group in sorted(g for g in rows if g.startswith(prefix)):
        by_n = rows[group]
        functions = []
        for per in by_n.values():
            for f in per:
                if f not in functions:
                    functions.append(f)
        order = ["batch"] + sorted(f for f in functions if f != "batch")
        functions = [f for f in order if f in functions]
        print(f"\n{group} (median ns per item)\n")
        print("| N | " + " | ".join(functions) + " | " +
              " | ".join(f"{f} / batch" for f in functions[1:]) + " |")
        print("|---:|" + "---:|" * (2 * len(functions) - 1))
        for value in sorted(by_n, key=lambda v: int(v) if v.isdigit() else 0):
            per = by_n[value]
            cells = [f"{per[f][0]:.2f}" if f in per else "" for f in functions]
            base = per.get("batch", (None,))[0]
            ratios = [f"{per[f][0] / base:.2f}x" if base and f in per else ""
                      for f in functions[1:]]
            print(f"| {value} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")


if __name__ == "__main__":
    main()
