#!/usr/bin/env python3
"""Writes docs/benchmarks.md and docs/img/*.png from a suite run.

    report.py RESULTS_JSON [--doc docs/benchmarks.md] [--img docs/img]

RESULTS_JSON is target/suite/<run>/results.json (written by suite.py) or a
copy of it; the report keeps a copy next to itself (docs/benchmarks.json),
so `benches/suite/run.sh --report-only docs/benchmarks.json` rewrites it.
It writes the page and the charts whole and touches no other file (the
README links to the page, it carries no figures). Needs matplotlib for the
charts; suite.py provides it.
"""
import argparse
import json
import os
import shutil
import statistics
import sys

STRATEGIES = [
    ("batch-glibc", "#[batch_alloc], BatchAlloc<System>"),
    ("batch-mimalloc", "#[batch_alloc], BatchAlloc<MiMalloc>"),
    ("box-glibc", "Box::new, glibc"),
    ("box-mimalloc", "Box::new, mimalloc"),
    ("box-jemalloc", "Box::new, jemalloc"),
    ("jemalloc-batch", "jemalloc experimental.batch_alloc"),
    ("bumpalo", "bumpalo, arena per loop"),
    ("bumpalo-reset", "bumpalo, one arena reset per loop"),
    ("typed-arena", "typed-arena, arena per loop"),
    ("vec", "Vec::with_capacity (the limit)"),
]
NAME = dict(STRATEGIES)
ORDER = [s for s, _ in STRATEGIES]
STYLE = {
    "batch-glibc": ("#d62728", "-", "o", 2.4),
    "batch-mimalloc": ("#ff7f0e", "-", "s", 2.4),
    "box-glibc": ("#1f77b4", "--", "o", 1.4),
    "box-mimalloc": ("#17becf", "--", "s", 1.4),
    "box-jemalloc": ("#9467bd", "--", "^", 1.4),
    "jemalloc-batch": ("#8c564b", ":", "^", 1.4),
    "bumpalo": ("#2ca02c", "-.", "D", 1.4),
    "bumpalo-reset": ("#98df8a", "-.", "d", 1.4),
    "typed-arena": ("#bcbd22", "-.", "v", 1.4),
    "vec": ("#7f7f7f", ":", "x", 1.6),
}
ALLOCATOR_OF_BINARY = {"system": "glibc", "mimalloc": "mimalloc", "jemalloc": "jemalloc",
                       "batch_system": "batch-glibc", "batch_mimalloc": "batch-mimalloc"}
ALLOCATORS = [
    ("glibc", "glibc (System)"),
    ("mimalloc", "mimalloc"),
    ("jemalloc", "jemalloc"),
    ("batch-glibc", "BatchAlloc<System>"),
    ("batch-mimalloc", "BatchAlloc<MiMalloc>"),
]
SCENARIOS = [
    ("alloc_drop", "Allocate then drop"),
    ("alloc_only", "Allocate only"),
    ("cross_thread", "Allocate here, drop on another thread (round trip)"),
    ("remote_drop", "Drop on another thread (the drop alone)"),
]
ISSUE_ANCHORS = {"box-glibc": 207, "box-mimalloc": 101, "box-jemalloc": 180, "bumpalo": 28,
                 "vec": 15}
PROGRAM_TEXT = {
    "binary_trees": "binary-trees, depth 14, trees built by loops (16-byte nodes)",
    "json": "serde_json: 20,000 records into `Vec<Box<Record>>` (48-byte records)",
    "expr": "expression parser: 1,000 generated statements into `Box<Expr>` trees",
}


# ----------------------------------------------------------------------------
# Figures


class Data:
    def __init__(self, results):
        self.r = results
        self.crit = results.get("criterion") or {}

    def rounds(self, scenario_size, strategy, n):
        entry = self.crit.get(f"{scenario_size}/{strategy}/{n}")
        return entry["rounds"] if entry else None

    def median(self, scenario_size, strategy, n):
        rounds = self.rounds(scenario_size, strategy, n)
        return statistics.median(rounds) if rounds else None

    def counts(self, scenario_size):
        prefix = scenario_size + "/"
        ns = set()
        for key, entry in self.crit.items():
            if key.startswith(prefix) and entry["value"].isdigit():
                ns.add(int(entry["value"]))
        return sorted(ns)

    def ratio(self, a, b):
        """Median over rounds of a/b, and the min and max of the per-round
        ratios (rounds pair up: both figures come from the same round)."""
        ra, rb = self.rounds(*a), self.rounds(*b)
        if not ra or not rb:
            return None
        per = [x / y for x, y in zip(ra, rb)]
        return statistics.median(ra) / statistics.median(rb), min(per), max(per)


def fmt_ns(ns):
    if ns is None:
        return "–"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    if ns >= 100:
        return f"{ns:.0f} ns"
    if ns >= 10:
        return f"{ns:.1f} ns"
    if ns >= 0.1:
        return f"{ns:.2f} ns"
    return f"{ns:.3f} ns"


def fmt_bench(ns):
    """benchstat's compact style."""
    if ns >= 1e3:
        return f"{ns / 1e3:.2f}µs"
    if ns >= 100:
        return f"{ns:.0f}ns"
    if ns >= 10:
        return f"{ns:.1f}ns"
    return f"{ns:.2f}ns"


def spread(values):
    """benchstat's ±: the largest distance from the centre, relative."""
    m = statistics.median(values)
    return max(abs(v - m) for v in values) / m if m else 0.0


def mann_whitney_p(a, b):
    """Two-sided p-value of the Mann-Whitney U test, as benchstat reports it
    (exact for the few rounds a run has, when no value is tied)."""
    if not a or not b:
        return 1.0
    try:
        from scipy.stats import mannwhitneyu
    except ImportError:
        sys.exit("benches/suite/report.py needs scipy for its Mann-Whitney test: "
                 "`pip install scipy`, or `apt install python3-scipy` for /usr/bin/python3 "
                 "(benches/suite/run.sh installs it into target/suite/venv)")
    return float(mannwhitneyu(a, b, alternative="two-sided", method="auto").pvalue)


# ----------------------------------------------------------------------------
# Targets


def straddle(rounds, target):
    """A note when single rounds fall on both sides of the target."""
    if rounds and rounds[0] < target <= rounds[1]:
        return f"; single rounds fall on both sides ({rounds[0]:.2f}–{rounds[1]:.2f})"
    return ""


def verdict_at_least(value, target, unit="x", rounds=None):
    if value is None:
        return "not measured"
    note = straddle(rounds, target)
    if value >= target:
        return f"**met**: {value:.2f}{unit} (target ≥ {target:g}{unit}; {100 * (value / target - 1):.0f}% above{note})"
    return f"**missed**: {value:.2f}{unit} (target ≥ {target:g}{unit}; {100 * (1 - value / target):.0f}% short{note})"


def verdict_at_most(value, target, unit, rounds=None):
    if value is None:
        return "not measured"
    note = straddle(rounds, target)
    shown = f"{value:.2f}" if unit == "x" else f"{value:.1f}"
    if value <= target:
        return f"**met**: {shown}{unit} (target ≤ {target:g}{unit}; {100 * (1 - value / target):.0f}% below{note})"
    return f"**missed**: {shown}{unit} (target ≤ {target:g}{unit}; {100 * (value / target - 1):.0f}% over{note})"


def ratio_text(r):
    if r is None:
        return "not measured"
    return f"{r[0]:.2f}x (per round {r[1]:.2f}–{r[2]:.2f}x)"


def targets(d, memory, callgrind):
    head = "alloc_drop/64B"
    rows = []

    def speedup(slow, fast, scen=head, n=1024):
        return d.ratio((scen, slow, n), (scen, fast, n))

    r = speedup("box-glibc", "batch-glibc")
    rows.append(("64 B, N = 1024, allocate then drop: ≥ 5x faster than `Box::new` on glibc",
                 f"batch-glibc vs box-glibc: {ratio_text(r)}",
                 verdict_at_least(r and r[0], 5, rounds=r and r[1:])))
    r = speedup("box-mimalloc", "batch-mimalloc")
    r2 = speedup("box-mimalloc", "batch-glibc")
    rows.append(("… ≥ 2x faster than `Box::new` on mimalloc",
                 f"batch-mimalloc vs box-mimalloc: {ratio_text(r)}; batch-glibc vs box-mimalloc: {ratio_text(r2)}",
                 verdict_at_least(r and r[0], 2, rounds=r and r[1:])))
    rb = speedup("bumpalo", "batch-glibc")
    rr = speedup("bumpalo-reset", "batch-glibc")
    worst = min([x for x in (rb, rr) if x], key=lambda x: x[0], default=None)
    if worst is None:
        v = "not measured"
    elif worst[0] >= 1:
        v = f"**met**: batch is {worst[0]:.2f}x the speed of the faster bumpalo"
    else:
        v = f"**missed**: batch takes {1 / worst[0]:.2f}x the time of the faster bumpalo ({100 * (1 / worst[0] - 1):.0f}% slower)"
    detail = (f"bumpalo (arena per loop) / batch-glibc: {ratio_text(rb)}; "
              f"bumpalo (reset) / batch-glibc: {ratio_text(rr)}")
    ab = d.median("alloc_only/64B", "batch-glibc", 1024)
    abump = [x for x in (d.median("alloc_only/64B", "bumpalo", 1024),
                         d.median("alloc_only/64B", "bumpalo-reset", 1024)) if x]
    if ab and abump:
        detail += (f". Allocation alone (N = 1024): batch-glibc {fmt_ns(ab)}, the faster bumpalo "
                   f"{fmt_ns(min(abump))} per object: the difference is in dropping, which an "
                   "arena does not do per object")
    rows.append(("… no slower than bumpalo", detail, v))
    r = d.ratio((head, "batch-glibc", 1024), (head, "vec", 1024))
    rows.append(("… within 2x of the `Vec` limit",
                 f"batch-glibc / vec: {ratio_text(r)}",
                 verdict_at_most(r and r[0], 2, "x", rounds=r and r[1:])))
    if callgrind:
        by = {row["strategy"]: row for row in callgrind
              if not row.get("no_spawn") and row["strategy"] != "box"}
        b = by.get("batch-glibc")
        bm = by.get("batch-mimalloc")
        rows.append(("… at most 40 instructions per object",
                     (f"batch-glibc {b['total']:.1f} (allocating half {b['fill']:.1f}, dropping half {b['release']:.1f})"
                      + (f"; batch-mimalloc {bm['total']:.1f}" if bm else "")) if b else "–",
                     verdict_at_most(b and b["total"], 40, "")))
    r = d.ratio(("remote_drop/64B", "box-mimalloc", 65536), ("remote_drop/64B", "batch-mimalloc", 65536))
    r2 = d.ratio(("cross_thread/64B", "box-mimalloc", 65536), ("cross_thread/64B", "batch-mimalloc", 65536))
    rows.append(("Cross-thread drop of 65,536 boxes: ≥ 4x faster than mimalloc's remote free",
                 f"drop alone, box-mimalloc / batch-mimalloc: {ratio_text(r)}; "
                 f"round trip (allocate here, drop there): {ratio_text(r2)}",
                 verdict_at_least(r and r[0], 4, rounds=r and r[1:]) + "; round trip: "
                 + verdict_at_least(r2 and r2[0], 4, rounds=r2 and r2[1:])))
    if memory:
        glibc = mem_median(memory, "system", "box", 16)
        batch = mem_median(memory, "batch_system", "batch-glibc", 16)
        if glibc and batch:
            frac = 100 * batch["objects"] / glibc["objects"]
            whole = 100 * batch["rss_live"] / glibc["rss_live"]
            rows.append(("1,000,000 live 16-byte boxes: ≤ 60% of the resident memory of `Box::new` on glibc",
                         f"objects: {batch['objects'] / 2**20:.1f} MiB vs {glibc['objects'] / 2**20:.1f} MiB ({frac:.0f}%); "
                         f"whole process: {batch['rss_live'] / 2**20:.1f} vs {glibc['rss_live'] / 2**20:.1f} MiB ({whole:.0f}%)",
                         verdict_at_most(frac, 60, "%")))
    cells = []
    for scen, _ in SCENARIOS:
        for size in (16, 64, 256):
            for n in d.counts(f"{scen}/{size}B"):
                r = d.ratio((f"{scen}/{size}B", "jemalloc-batch", n), (f"{scen}/{size}B", "batch-glibc", n))
                if r:
                    cells.append((r[0], f"{scen}/{size}B/{n}"))
    r = speedup("jemalloc-batch", "batch-glibc")
    faster = sum(1 for x, _ in cells if x > 1)
    slowest = min(cells, default=None)
    detail = f"64 B, N = 1024, allocate then drop: jemalloc-batch / batch-glibc {ratio_text(r)}"
    if cells:
        detail += f"; faster in {faster} of {len(cells)} matrix cells"
        if slowest[0] <= 1:
            detail += f" (worst: {slowest[1]}, {slowest[0]:.2f}x)"
    v = verdict_at_least(r and r[0], 1, rounds=r and r[1:])
    rows.append(("Faster than jemalloc's batch API on the same work", detail, v))
    return rows


# ----------------------------------------------------------------------------
# Memory


def mem_rows(memory, binary, strategy, size):
    return [m for m in memory if m["binary"] == binary and m["strategy"] == strategy and m["size"] == size]


def mem_median(memory, binary, strategy, size):
    rows = mem_rows(memory, binary, strategy, size)
    if not rows:
        return None
    med = lambda f: statistics.median(f(m) for m in rows)
    return {
        "objects": med(lambda m: m["rss_live"] - m["rss_before"]),
        "per_object": med(lambda m: (m["rss_live"] - m["rss_before"]) / m["n"]),
        "rss_live": med(lambda m: m["rss_live"]),
        "hwm": med(lambda m: m["hwm"]),
        "rss_after": med(lambda m: m["rss_after"]),
        "rss_start": med(lambda m: m["rss_start"]),
        "cached_after": med(lambda m: m["cached_bytes_after"]),
        "n": rows[0]["n"],
        "reps": len(rows),
        "range": (min((m["rss_live"] - m["rss_before"]) / m["n"] for m in rows),
                  max((m["rss_live"] - m["rss_before"]) / m["n"] for m in rows)),
    }


MEMORY_LABEL = {
    ("system", "box"): "Box::new, glibc",
    ("mimalloc", "box"): "Box::new, mimalloc",
    ("jemalloc", "box"): "Box::new, jemalloc",
    ("jemalloc", "jemalloc-batch"): "jemalloc experimental.batch_alloc",
    ("batch_system", "box"): "Box::new through BatchAlloc<System>",
    ("batch_system", "batch-glibc"): "#[batch_alloc], BatchAlloc<System>",
    ("batch_mimalloc", "box"): "Box::new through BatchAlloc<MiMalloc>",
    ("batch_mimalloc", "batch-mimalloc"): "#[batch_alloc], BatchAlloc<MiMalloc>",
}


# ----------------------------------------------------------------------------
# Charts


def charts(d, memory, img, doc_dir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no charts", file=sys.stderr)
        return []
    os.makedirs(img, exist_ok=True)
    made = []

    def line_chart(ax, scen_size, title):
        for s in ORDER:
            xs, ys, lo, hi = [], [], [], []
            for n in d.counts(scen_size):
                rounds = d.rounds(scen_size, s, n)
                if rounds:
                    xs.append(n)
                    ys.append(statistics.median(rounds))
                    lo.append(min(rounds))
                    hi.append(max(rounds))
            if not xs:
                continue
            color, ls, marker, lw = STYLE[s]
            ax.plot(xs, ys, color=color, linestyle=ls, marker=marker, linewidth=lw, markersize=4,
                    label=NAME[s])
            ax.fill_between(xs, lo, hi, color=color, alpha=0.12, linewidth=0)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("N (objects per loop)")
        ax.set_ylabel("ns per object (median; band: min–max over rounds)")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)

    fig, ax = plt.subplots(figsize=(9, 5.5))
    line_chart(ax, "alloc_drop/64B", "64-byte objects: allocate N, then drop them")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    path = os.path.join(img, "alloc_drop_64B.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    made.append(path)

    scen = [(s, t) for s, t in SCENARIOS[:3] if d.counts(f"{s}/64B")]
    if scen:
        fig, axes = plt.subplots(1, len(scen), figsize=(5 * len(scen), 4.6), sharey=True)
        if len(scen) == 1:
            axes = [axes]
        for ax, (s, t) in zip(axes, scen):
            line_chart(ax, f"{s}/64B", t.split(" (")[0])
            if ax is not axes[0]:
                ax.set_ylabel("")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=7)
        fig.tight_layout(rect=(0, 0.1, 1, 1))
        path = os.path.join(img, "scenarios_64B.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        made.append(path)

    if memory:
        keys = [k for k in MEMORY_LABEL if any(mem_rows(memory, k[0], k[1], s) for s in (16, 64))]
        fig, ax = plt.subplots(figsize=(9, 0.55 * len(keys) + 1.6))
        height = 0.38
        colors = ("#1f77b4", "#ff7f0e")
        for i, size in enumerate((16, 64)):
            vals = [(mem_median(memory, b, s, size) or {}).get("per_object", 0) for b, s in keys]
            ys = [k + (i - 0.5) * height for k in range(len(keys))]
            ax.barh(ys, vals, height, label=f"{size}-byte objects", color=colors[i])
            for y, v in zip(ys, vals):
                ax.text(v + 0.5, y, f"{v:.1f}", va="center", fontsize=7)
            ax.axvline(size, color=colors[i], linestyle=":", linewidth=1)
        top = max((mem_median(memory, b, s, size) or {}).get("per_object", 0)
                  for b, s in keys for size in (16, 64))
        ax.set_xlim(0, top * 1.12)
        ax.set_yticks(range(len(keys)))
        ax.set_yticklabels([MEMORY_LABEL[k] for k in keys], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("resident bytes per live object (dotted: the object's size)")
        ax.set_title("1,000,000 live objects: resident memory per object")
        ax.legend(fontsize=8, loc="lower right")
        fig.tight_layout()
        path = os.path.join(img, "memory.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        made.append(path)

    programs = [p for p in PROGRAM_TEXT if any(k.startswith(f"programs/{p}/") for k in d.crit)]
    if programs:
        fig, axes = plt.subplots(1, len(programs), figsize=(4.2 * len(programs), 4.2))
        if len(programs) == 1:
            axes = [axes]
        for ax, p in zip(axes, programs):
            labels, bars = [], {"plain": [], "attr": []}
            for a, _ in ALLOCATORS:
                x = d.rounds(f"programs/{p}", a, "plain")
                y = d.rounds(f"programs/{p}", a, "attr")
                if not x or not y:
                    continue
                labels.append(a)
                bars["plain"].append(x)
                bars["attr"].append(y)
            xs = range(len(labels))
            for off, key, text, color in ((-0.2, "plain", "as written", "#1f77b4"),
                                          (0.2, "attr", "#[batch_alloc]", "#d62728")):
                meds = [statistics.median(r) for r in bars[key]]
                err = [[m - min(r) for m, r in zip(meds, bars[key])],
                       [max(r) - m for m, r in zip(meds, bars[key])]]
                ax.bar([x + off for x in xs], meds, 0.4, yerr=err, capsize=2, label=text,
                       color=color, error_kw={"elinewidth": 0.8, "ecolor": "#333333"})
            ax.set_xticks(list(xs))
            ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
            ax.set_title(p.replace("_", "-"))
            ax.set_ylabel("ns per box made (median; whiskers: min–max)")
            ax.grid(True, axis="y", alpha=0.3)
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        path = os.path.join(img, "programs.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        made.append(path)
    return [os.path.relpath(p, doc_dir) for p in made]


# ----------------------------------------------------------------------------
# The document


def table(header, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def benchstat(d, old, new, limit, title):
    """A benchstat-style block: name, old, new, delta, and the limit."""
    scen = "alloc_drop/64B"
    lines = []
    rows = []
    for n in d.counts(scen):
        a, b = d.rounds(scen, old, n), d.rounds(scen, new, n)
        if not a or not b:
            continue
        c = d.rounds(scen, limit, n)
        ma, mb = statistics.median(a), statistics.median(b)
        p = mann_whitney_p(a, b)
        if p <= 0.05:
            delta = f"{100 * (mb / ma - 1):+.2f}%"
        else:
            delta = "~"
        lim = f"{fmt_bench(statistics.median(c))} ± {100 * spread(c):.0f}%" if c else "–"
        vs = f"{mb / statistics.median(c):.2f}x" if c else "–"
        rows.append((f"AllocDrop64B/N={n}", f"{fmt_bench(ma)} ± {100 * spread(a):.0f}%",
                     f"{fmt_bench(mb)} ± {100 * spread(b):.0f}%", delta,
                     f"(p={p:.3f} n={len(a)}+{len(b)})", lim, vs))
    if not rows:
        return ""
    header = ("name", "old time/op", "new time/op", "delta", "", "limit time/op", "new/limit")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    fmt = lambda r: "  ".join(
        (r[i].ljust(widths[i]) if i == 0 else r[i].rjust(widths[i]) if i != 4 else r[i].ljust(widths[i]))
        for i in range(len(r))).rstrip()
    lines.append(f"{title}")
    lines.append("")
    lines.append("```text")
    lines.append(fmt(header))
    lines += [fmt(r) for r in rows]
    lines.append("```")
    return "\n".join(lines)


def matrix_section(d, scen, title):
    parts = []
    sizes = [s for s in (16, 64, 256) if d.counts(f"{scen}/{s}B")]
    if not sizes:
        return ""
    present = [s for s in ORDER if any(
        d.rounds(f"{scen}/{size}B", s, n) for size in sizes for n in d.counts(f"{scen}/{size}B"))]
    parts.append(f"### {title}\n")
    header = ["size", "N"] + [f"`{s}`" for s in present]
    rows = []
    for size in sizes:
        counts = d.counts(f"{scen}/{size}B")
        if scen == "alloc_drop" and size == 64:
            counts = [n for n in counts if n in (1, 8, 64, 1024, 65536)] or counts
        for n in counts:
            vals = {s: d.median(f"{scen}/{size}B", s, n) for s in present}
            best = min((v for v in vals.values() if v), default=None)
            cells = []
            for s in present:
                v = vals[s]
                text = fmt_ns(v)
                if v is not None and v == best:
                    text = f"**{text}**"
                cells.append(text)
            rows.append([f"{size} B", f"{n:,}"] + cells)
    parts.append(table(header, rows, ["---", "---:"] + ["---:"] * len(present)))
    return "\n".join(parts)


HEADLINE_HEADER = ["strategy", "ns per object", "range over rounds", "time vs batch-glibc",
                   "instructions per object"]


def headline_rows(d, callgrind):
    """64-byte objects, N = 1024, allocate then drop: one row per strategy."""
    head = "alloc_drop/64B"
    cg = {row["strategy"]: row for row in (callgrind or [])
          if not row.get("no_spawn") and row["strategy"] != "box"}
    base = d.median(head, "batch-glibc", 1024)
    rows = []
    for s in ORDER:
        rounds = d.rounds(head, s, 1024)
        if not rounds:
            continue
        med = statistics.median(rounds)
        ins = cg.get(s)
        rows.append([NAME[s].replace("<", "&lt;"), fmt_ns(med),
                     f"{fmt_ns(min(rounds))} – {fmt_ns(max(rounds))}",
                     f"{med / base:.2f}x" if base else "–",
                     f"{ins['total']:.1f}" if ins else "–"])
    return rows


def write(results, doc, img):
    d = Data(results)
    memory = results.get("memory")
    callgrind = results.get("callgrind")
    doc_dir = os.path.dirname(os.path.abspath(doc))
    pngs = charts(d, memory, img, doc_dir)
    m = results["machine"]
    cfg = results["config"]
    out = []
    w = out.append
    w("# Benchmarks")
    w("")
    w("<!-- Generated by benches/suite/report.py; do not edit: rerun the command below. -->")
    w("")
    def minutes(seconds):
        return f"{seconds} s" if seconds < 90 else f"{seconds / 60:.0f} minutes"

    if "build_seconds" in results:
        took = (f"{minutes(results['seconds'] - results['build_seconds'])} measuring after "
                f"{minutes(results['build_seconds'])} building")
    else:
        took = f"{minutes(results['seconds'])} including the build"
    if results.get("resumed"):
        took = ("criterion rounds from an earlier start, then " + took
                + " for memory and instruction counts (`--resume`)")
    w(f"Generated by **`{results['command']}`** ({results['mode']} run, {cfg['rounds']} rounds, "
      f"{took}, started {results['started']}, commit {m['git']}). "
      "`benches/suite/run.sh` runs everything (about 40 minutes on this machine, plus the "
      "build), `benches/suite/run.sh --quick` a subset (about 8 minutes); both rewrite this page "
      "and its charts. The raw figures are in [`benchmarks.json`](benchmarks.json); "
      "`benches/suite/run.sh --report-only docs/benchmarks.json` rewrites the page from them.")
    w("")
    w("All times are per object (per box made, for the programs): criterion's median time per "
      "iteration divided by the objects the iteration makes, then the median over rounds. "
      "Ranges are the lowest and highest round.")
    w("")

    w("## Targets")
    w("")
    w("From issue 4. Where a target is missed, the row says by how much.")
    w("")
    w(table(["target", "measured", "verdict"], targets(d, memory, callgrind), ["---", "---", "---"]))
    w("")

    head = "alloc_drop/64B"
    w("## Headline: 64-byte objects, N = 1024, allocate then drop")
    w("")
    w(table(HEADLINE_HEADER, headline_rows(d, callgrind)))
    w("")
    for p in pngs:
        if p.endswith("alloc_drop_64B.png"):
            w(f"![ns per object against N, 64-byte objects, allocate then drop]({p})")
            w("")

    w("## The Go proposal's table")
    w("")
    w("N separate `Box::new` (old) against the same loop under `#[batch_alloc]` (new), 64-byte "
      "objects, allocate N then drop them, time per object; and the one-allocation limit, "
      "`Vec::with_capacity(N)` on glibc. Laid out as benchstat prints: ± is the largest "
      "deviation of a round from the median, the delta is shown where a Mann-Whitney U test "
      "over the rounds gives p ≤ 0.05 (else `~`), n counts rounds. "
      "A loop of one or two boxes takes slots from the thread's batch-scope runs, which stay "
      "with the thread between loops.")
    w("")
    w(benchstat(d, "box-glibc", "batch-glibc", "vec",
                "glibc: old = `Box::new` on `System`, new = `#[batch_alloc]` on `BatchAlloc<System>`"))
    w("")
    w(benchstat(d, "box-mimalloc", "batch-mimalloc", "vec",
                "mimalloc: old = `Box::new` on `MiMalloc`, new = `#[batch_alloc]` on `BatchAlloc<MiMalloc>`"))
    w("")

    w("## Matrix")
    w("")
    w("Median ns per object; the fastest of each row in bold. Strategies: "
      + "; ".join(f"`{s}` {NAME[s].replace('<', '&lt;')}" for s in ORDER) + ".")
    w("")
    w("- *Allocate then drop*: the timed iteration allocates N objects, keeping a pointer to each "
      "in a list made beforehand, then drops them all (arenas: drops or resets the arena).")
    w("- *Allocate only*: the timer runs around rounds of allocating N objects (rounds of at least "
      "4096 objects, so reading the clock costs under 0.01 ns per object); the objects are dropped "
      "after the timer stops and before the next rounds. A batch's end (giving back unused slots) "
      "counts as allocating.")
    w("- *Round trip*: allocate N objects, send them to a worker thread that drops them, get the "
      "emptied containers back, in messages of at least 4096 objects; the worker's thread lives for "
      "the whole bench. *Drop alone*: the same exchange, timing only the worker's dropping.")
    w("- Arenas cannot free objects one by one: they are sent whole, and dropped or reset by the "
      "worker. The `Vec` limit is one allocation per loop.")
    w("- glibc gives the top of its heap back to the OS when more than 128 KiB is free there "
      "(`M_TRIM_THRESHOLD`), so a loop that frees more than that at once (256-byte objects from "
      "N = 1024, larger N at any size) page-faults its memory in again on the next round: the "
      "large 256-byte figures of glibc-backed strategies. That is glibc's default behaviour and "
      "is left in.")
    w("")
    for scen, title in SCENARIOS:
        section = matrix_section(d, scen, title)
        if section:
            w(section)
            w("")
    for p in pngs:
        if p.endswith("scenarios_64B.png"):
            w(f"![ns per object against N, 64-byte objects, three scenarios]({p})")
            w("")

    if memory:
        w("## Memory")
        w("")
        w("1,000,000 live objects, one process per row (median of "
          f"{max(len(mem_rows(memory, b, s, 16)) for b, s in MEMORY_LABEL) or 0} processes). "
          "*Per object*: resident memory the objects added, divided by their number (the list of "
          "pointers to them is made and touched before the first reading). *Process*: `VmRSS` with "
          "the objects alive; *peak*: `VmHWM`; *after drop*: `VmRSS` once the objects and the list "
          "are dropped, with the process's start-up resident size beside it. A batch slot has no "
          "per-object header: glibc adds 8 bytes to each block and rounds to 16.")
        w("")
        rows = []
        for size in MEMORY_SIZES_REPORT:
            glibc = mem_median(memory, "system", "box", size)
            for key, label in MEMORY_LABEL.items():
                mm = mem_median(memory, key[0], key[1], size)
                if not mm:
                    continue
                rel = f"{100 * mm['objects'] / glibc['objects']:.0f}%" if glibc else "–"
                rows.append([f"{size} B", label.replace("<", "&lt;"), f"{mm['per_object']:.1f}", rel,
                             f"{mm['rss_live'] / 2**20:.1f} MiB", f"{mm['hwm'] / 2**20:.1f} MiB",
                             f"{mm['rss_after'] / 2**20:.1f} MiB (start {mm['rss_start'] / 2**20:.1f})"])
        w(table(["size", "allocation", "bytes per object", "objects vs glibc Box::new", "process",
                 "peak", "after drop"], rows, ["---", "---"] + ["---:"] * 5))
        w("")
        for p in pngs:
            if p.endswith("memory.png"):
                w(f"![resident bytes per live object]({p})")
                w("")

    if callgrind:
        lo, hi = callgrind[0]["reps"]
        w("## Instructions per object (callgrind)")
        w("")
        w(f"The headline case (64-byte objects, N = {callgrind[0]['n']}, allocate then drop), the "
          "same code as the bench, run under `valgrind --tool=callgrind` with "
          f"{lo} and {hi} repetitions; the difference divided by the objects added is the cost per "
          "object, free of start-up. The halves come from the same runs with "
          "`--toggle-collect` on the strategy's `fill` (allocating, including making the value and "
          "storing the pointer) and `release` (dropping). *Issue anchor*: the figure issue 4 "
          "quotes for this machine. The harness's own share is what the `Vec` row costs: "
          "one 64-byte value written and stored per object.")
        w("")
        rows = []
        for row in callgrind:
            s = row["strategy"]
            anchor = ISSUE_ANCHORS.get(s)
            if s == "box":
                inner = {"batch_system": "BatchAlloc<System>",
                         "batch_mimalloc": "BatchAlloc<MiMalloc>"}.get(row["binary"], row["binary"])
                name = f"`Box::new` through `{inner}`"
            else:
                name = f"`{s}`"
            name += ", no thread ever spawned" if row.get("no_spawn") else ""
            rows.append([name, f"{row['total']:.1f}", f"{row['fill']:.1f}", f"{row['release']:.1f}",
                         str(anchor) if anchor else "–",
                         f"{row['total'] - anchor:+.1f}" if anchor else "–"])
        w(table(["strategy", "instructions per object", "allocating", "dropping", "issue anchor",
                 "vs anchor"], rows))
        w("")
        by = {row["strategy"]: row for row in callgrind
              if not row.get("no_spawn") and row["strategy"] != "box"}
        alone = {row["strategy"]: row for row in callgrind if row.get("no_spawn")}
        b, v = by.get("batch-glibc"), by.get("vec")
        if b and v:
            w(f"Where the batch's instructions go: allocating costs {b['fill'] - v['fill']:.1f} per object "
              f"more than the `Vec` limit's loop (which is the harness: making the value and storing "
              f"it), and dropping costs {b['release']:.1f} per object (the `Vec` limit frees one block "
              f"for all of them). To reach 40 in total with this harness, dropping would have to cost "
              f"at most {40 - b['fill']:.1f}.")
            w("")
        through = {row["binary"]: row for row in callgrind if row["strategy"] == "box"}
        g, gm = by.get("box-glibc"), by.get("box-mimalloc")
        if g and "batch_system" in through:
            t = through["batch_system"]
            text = (f"The wrapper on what it does not batch: `Box::new` through "
                    f"`BatchAlloc<System>` costs {t['total']:.1f} per object against "
                    f"{g['total']:.1f} on `System` ({t['total'] - g['total']:+.1f}: allocating "
                    f"{t['fill'] - g['fill']:+.1f}, dropping {t['release'] - g['release']:+.1f})")
            if gm and "batch_mimalloc" in through:
                tm = through["batch_mimalloc"]
                text += (f"; through `BatchAlloc<MiMalloc>` {tm['total']:.1f} against "
                         f"{gm['total']:.1f} ({tm['total'] - gm['total']:+.1f})")
            w(text + ".")
            w("")
        ga = alone.get("box-glibc")
        if g and ga:
            w(f"Harness against the issue's anchors: every suite binary spawns a thread before "
              f"measuring (see the noise section); in a process that never had one, glibc's "
              f"`Box::new` costs {ga['total']:.1f} instead of {g['total']:.1f} per object"
              + (f" (the `Vec` loop: {alone['vec']['total']:.1f} against {v['total']:.1f})"
                 if v and "vec" in alone else "")
              + ", so the issue's anchors were measured without a second thread. The rest of the "
              "difference to the anchors is this harness's loop (the `vec` row against its anchor "
              "of 15).")
            w("")

    progs = [p for p in PROGRAM_TEXT if any(k.startswith(f"programs/{p}/") for k in d.crit)]
    cg_programs = {(r["program"], ALLOCATOR_OF_BINARY[r["binary"]], r["variant"]): r
                   for r in (results.get("callgrind_programs") or [])}
    cg_program_reps = (1, 3)
    if progs:
        w("## Real programs")
        w("")
        w("Each program is compiled twice from one source, as written and under `#[batch_alloc]`, "
          "and runs in every binary. Median ns per box the program makes (the run's time divided by "
          "its boxes), and the run's time. Where `BatchAlloc` is not installed the attribute's "
          "boxes are plain `Box::new`: those rows show what the attribute costs when it cannot "
          "help.")
        w("")
        for p in progs:
            w(f"**{PROGRAM_TEXT[p]}**")
            w("")
            rows = []
            ref = d.median(f"programs/{p}", "glibc", "plain")
            for a, label in ALLOCATORS:
                x = d.rounds(f"programs/{p}", a, "plain")
                y = d.rounds(f"programs/{p}", a, "attr")
                if not x or not y:
                    continue
                items = d.crit[f"programs/{p}/{a}/plain"]["items"]
                mx, my = statistics.median(x), statistics.median(y)
                pval = mann_whitney_p(x, y)
                delta = f"{100 * (my / mx - 1):+.1f}%" + ("" if pval <= 0.05 else " (~)")
                ip, ia = cg_programs.get((p, a, "plain")), cg_programs.get((p, a, "attr"))
                ins = f"{ip['per_box']:.0f} → {ia['per_box']:.0f}" if ip and ia else "–"
                share = "–"
                # Runs before batch scopes counted batched boxes only.
                served = ia and ia.get("served", ia.get("batched_boxes"))
                if served:
                    runs = cg_program_reps[1]
                    share = f"{served / (runs * ia['boxes_per_run']):.2f}"
                rows.append([label.replace("<", "&lt;"), fmt_ns(mx), fmt_ns(my), delta,
                             f"{fmt_ns(mx * items)} → {fmt_ns(my * items)}",
                             f"{ref / my:.2f}x" if ref else "–", ins, share])
            w(table(["allocator", "as written", "#[batch_alloc]", "delta", "run time",
                     "speed-up over glibc as written", "instructions per box", "served per box"],
                    rows, ["---"] + ["---:"] * 7))
            w("")
        odd = []
        for p in progs:
            for a in ("glibc", "mimalloc", "jemalloc"):
                x = d.rounds(f"programs/{p}", a, "plain")
                y = d.rounds(f"programs/{p}", a, "attr")
                ip, ia = cg_programs.get((p, a, "plain")), cg_programs.get((p, a, "attr"))
                if x and y and ip and ia and mann_whitney_p(x, y) <= 0.05:
                    dt = statistics.median(y) / statistics.median(x) - 1
                    di = ia["per_box"] / ip["per_box"] - 1
                    if dt < 0 <= di or dt > 0 >= di:
                        odd.append(f"{p} on {a} ({100 * dt:+.0f}% time, {100 * di:+.0f}% instructions)")
        if odd:
            w("Where `BatchAlloc` is not installed, the attribute changes only the code around "
              "each `Box::new`, yet these rows differ in time, against the direction of their "
              "instruction counts: " + "; ".join(odd) + ". The allocations are the same, so "
              "this is the generated code on this CPU (its layout, or effects a simulator does "
              "not model); read the rows with `BatchAlloc` against both columns.")
            w("")
        w("(~): a Mann-Whitney U test over the rounds does not separate the two (p > 0.05). "
          "*Instructions per box*: callgrind, the program's instructions divided by its boxes, "
          "as written → under the attribute, at a smaller size ("
          + ", ".join(f"{r['program']} {r['size']}" for r in
                      {r["program"]: r for r in (results.get("callgrind_programs") or [])}.values())
          + "; tree depth, records, statements). *Served per box*: the allocations batch-alloc "
          "served under the attribute (batched boxes, and everything a batch scope served: "
          "boxes, strings, vectors), per box the program makes; from 0 to 1 where only boxes "
          "are served, above 1 where a scope serves the program's other allocations too.")
        w("")
        for p in pngs:
            if p.endswith("programs.png"):
                w(f"![ns per box, as written and under #[batch_alloc]]({p})")
                w("")

    w("## Machine, toolchain and noise")
    w("")
    criterion = ["criterion", f"{cfg['samples']} samples, {cfg['warm_up']} s warm-up, "
                              f"{cfg['measure']} s measurement per bench, {cfg['rounds']} rounds"]
    w(table(["", ""], machine_rows(results, [criterion]), ["---", "---"]))
    w("")
    w("The machine has 2 cores shared with other work, so times are noisy. The suite fights that "
      "three ways: every figure is the median of rounds; in each round every chunk of benches (one "
      "object size and count of one scenario, or one program) runs in all five binaries back to "
      "back, in an order that rotates each round, so figures compared across binaries are "
      "measured close together; and the headline instruction counts, which noise does not move, "
      "stand beside the times. Every binary spawns and joins a thread before measuring, since "
      "glibc runs slower once a process has had a second thread and the cross-thread benches "
      "need one.")
    w("")
    spreads = spread_text({key: entry["rounds"] for key, entry in d.crit.items()}, "benches")
    if spreads:
        w(spreads)
    loads = [l for l in (results.get("load_during") or []) if l]
    if loads:
        ones = sorted(l[0] for l in loads)
        w(f"Load average (1 min) during the rounds: min {ones[0]:.1f}, median "
          f"{statistics.median(ones):.1f}, max {ones[-1]:.1f}; at the start "
          f"{results['load_start'][0]:.1f}, at the end {results['load_end'][0]:.1f}.")
    w("")
    text = "\n".join(out).rstrip() + "\n"
    with open(doc, "w") as f:
        f.write(text)


MEMORY_SIZES_REPORT = (16, 64)


def machine_rows(results, extra=()):
    """The machine, toolchain and binaries of a run, as rows of a
    two-column table; `extra` rows go after the toolchain's."""
    m = results["machine"]
    rows = [
        ["CPU", f"{m['cpu']} ({m['cpus']} CPUs visible), {m.get('memory_gib', '?')} GiB"],
        ["kernel", m["kernel"]],
        ["toolchain", f"{m['rustc']}; {m['cargo']}"],
        ["profile", "`bench` (inherits `release`); Cargo.toml: " + m.get("profile", "not recorded")],
        ["valgrind", m.get("valgrind") or "–"],
        *extra,
    ]
    for b, info in results["binaries"].items():
        rows.append([f"`suite_{b}`", info["version"]])
    crates = ", ".join(f"{k} {v}" for k, v in sorted(m.get("crates", {}).items()))
    rows.append(["crates", crates])
    return rows


def spread_text(rounds_by_name, what):
    """How far rounds spread ((max − min) / median) over every figure of
    `rounds_by_name` with two rounds or more: median, 90th percentile and
    widest, in a sentence; None without such figures."""
    spreads = sorted(((max(r) - min(r)) / statistics.median(r), key)
                     for key, r in rounds_by_name.items() if len(r) >= 2)
    if not spreads:
        return None
    q = lambda f: spreads[min(len(spreads) - 1, int(f * len(spreads)))][0] * 100
    return (f"Spread over rounds ((max − min) / median) across {len(spreads)} {what}: median "
            f"{q(0.5):.0f}%, 90th percentile {q(0.9):.0f}%, widest {spreads[-1][0] * 100:.0f}% "
            f"(`{spreads[-1][1]}`).")


def load_results(path, doc, keep_name):
    """The results of a run (a results.json, or a run directory holding
    one), after keeping a copy named `keep_name` beside `doc`, from which
    --report-only rewrites the page later."""
    if os.path.isdir(path):
        path = os.path.join(path, "results.json")
    with open(path) as f:
        results = json.load(f)
    os.makedirs(os.path.dirname(os.path.abspath(doc)), exist_ok=True)
    keep = os.path.join(os.path.dirname(os.path.abspath(doc)), keep_name)
    if os.path.abspath(path) != keep:
        shutil.copyfile(path, keep)
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--doc", default="docs/benchmarks.md")
    ap.add_argument("--img", default="docs/img")
    args = ap.parse_args()
    results = load_results(args.results, args.doc, "benchmarks.json")
    write(results, args.doc, args.img)


if __name__ == "__main__":
    main()
