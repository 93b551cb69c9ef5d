#!/usr/bin/env python3
"""Writes docs/benchmarks.md and its charts from a suite run.

    report.py RESULTS [--doc docs/benchmarks.md] [--img docs/img]

RESULTS is target/suite/<run>/results.json (suite.py's) or a copy; the page
keeps one beside itself (docs/benchmarks.json), from which
`benches/suite/run.sh --report-only docs/benchmarks.json` rewrites it. The
figures are criterion's medians per item, the median over rounds; ratios
pair figures of the same round. Needs matplotlib for the charts.
"""
import argparse
import os
import statistics

from suite import CALLGRIND_PROGRAM_REPS, fmt_ratio, load_results, machine_rows, ratio, spread_text, table, verdict

STRATEGIES = {
    "batch-glibc": "#[batch_alloc], BatchAlloc<System>",
    "batch-mimalloc": "#[batch_alloc], BatchAlloc<MiMalloc>",
    "box-glibc": "Box::new, glibc", "box-mimalloc": "Box::new, mimalloc",
    "box-jemalloc": "Box::new, jemalloc", "jemalloc-batch": "jemalloc experimental.batch_alloc",
    "bumpalo": "bumpalo, arena per loop", "bumpalo-reset": "bumpalo, one arena reset per loop",
    "typed-arena": "typed-arena, arena per loop", "vec": "Vec::with_capacity (the limit)",
}
ALLOCATORS = {"glibc": "glibc (System)", "mimalloc": "mimalloc", "jemalloc": "jemalloc",
              "batch-glibc": "BatchAlloc<System>", "batch-mimalloc": "BatchAlloc<MiMalloc>"}
BINARY_ALLOCATOR = dict(zip(["system", "mimalloc", "jemalloc", "batch_system", "batch_mimalloc"],
                            ALLOCATORS))
SCENARIOS = {"alloc_drop": "Allocate then drop", "alloc_only": "Allocate only",
             "cross_thread": "Allocate here, drop on another thread (round trip)",
             "remote_drop": "Drop on another thread (the drop alone)"}
# The figures issue 4 quotes for this machine (instructions per object).
ANCHORS = {"box-glibc": 207, "box-mimalloc": 101, "box-jemalloc": 180, "bumpalo": 28, "vec": 15}
PROGRAMS = {"binary_trees": "binary-trees, depth 14, trees built by loops (16-byte nodes)",
            "json": "serde_json: 20,000 records into `Vec<Box<Record>>` (48-byte records)",
            "expr": "expression parser: 1,000 generated statements into `Box<Expr>` trees"}
HEAD = "alloc_drop/64B"
MEMORY_LABEL = {
    ("system", "box"): "Box::new, glibc", ("mimalloc", "box"): "Box::new, mimalloc",
    ("jemalloc", "box"): "Box::new, jemalloc",
    ("jemalloc", "jemalloc-batch"): "jemalloc experimental.batch_alloc",
    ("batch_system", "box"): "Box::new through BatchAlloc<System>",
    ("batch_system", "batch-glibc"): "#[batch_alloc], BatchAlloc<System>",
    ("batch_mimalloc", "box"): "Box::new through BatchAlloc<MiMalloc>",
    ("batch_mimalloc", "batch-mimalloc"): "#[batch_alloc], BatchAlloc<MiMalloc>",
}


def html(text):
    return text.replace("<", "&lt;")


def fmt_ns(ns):
    if ns is None:
        return "–"
    for limit, div, unit in ((1e6, 1e6, "ms"), (1e3, 1e3, "µs")):
        if ns >= limit:
            return f"{ns / div:.2f} {unit}"
    return f"{ns:.0f} ns" if ns >= 100 else f"{ns:.1f} ns" if ns >= 10 else \
        f"{ns:.2f} ns" if ns >= 0.1 else f"{ns:.3f} ns"


class Suite:
    def __init__(self, results):
        self.crit = results.get("criterion") or {}

    def rounds(self, group, strategy, n):
        entry = self.crit.get(f"{group}/{strategy}/{n}")
        return entry["rounds"] if entry else None

    def median(self, *key):
        r = self.rounds(*key)
        return statistics.median(r) if r else None

    def ratio(self, a, b, group=HEAD, n=1024):
        return ratio(self.rounds(group, a, n), self.rounds(group, b, n))

    def counts(self, group):
        return sorted({int(k.rsplit("/", 1)[1]) for k in self.crit
                       if k.startswith(group + "/") and k.rsplit("/", 1)[1].isdigit()})

    def strategies(self, group):
        return [s for s in STRATEGIES if any(self.rounds(group, s, n) for n in self.counts(group))]


def mem_median(memory, binary, strategy, size):
    rows = [m for m in memory if (m["binary"], m["strategy"], m["size"]) == (binary, strategy, size)]
    if not rows:
        return None
    med = lambda f: statistics.median(f(m) for m in rows)
    return {"objects": med(lambda m: m["rss_live"] - m["rss_before"]),
            "per_object": med(lambda m: (m["rss_live"] - m["rss_before"]) / m["n"]),
            **{k: med(lambda m: m[k]) for k in ("rss_live", "hwm", "rss_after", "rss_start")},
            "reps": len(rows)}


def targets(d, memory, callgrind):
    """Issue 4's targets: (target, measured, verdict)."""
    rows = []
    r = d.ratio("box-glibc", "batch-glibc")
    rows.append(("64 B, N = 1024, allocate then drop: ≥ 5x faster than `Box::new` on glibc",
                 f"box-glibc / batch-glibc: {fmt_ratio(r)}", verdict(r and r[0], 5)))
    r, r2 = d.ratio("box-mimalloc", "batch-mimalloc"), d.ratio("box-mimalloc", "batch-glibc")
    rows.append(("… ≥ 2x faster than `Box::new` on mimalloc",
                 f"box-mimalloc / batch-mimalloc: {fmt_ratio(r)}; box-mimalloc / batch-glibc: "
                 f"{fmt_ratio(r2)}", verdict(r and r[0], 2)))
    rb, rr = d.ratio("bumpalo", "batch-glibc"), d.ratio("bumpalo-reset", "batch-glibc")
    worst = min([x for x in (rb, rr) if x], default=None)
    bump = min(filter(None, (d.median("alloc_only/64B", s, 1024) for s in ("bumpalo", "bumpalo-reset"))),
               default=None)
    rows.append(("… no slower than bumpalo", f"bumpalo (arena per loop) / batch-glibc: {fmt_ratio(rb)}; "
                 f"bumpalo (reset) / batch-glibc: {fmt_ratio(rr)}. Allocation alone (N = 1024): "
                 f"batch-glibc {fmt_ns(d.median('alloc_only/64B', 'batch-glibc', 1024))}, the faster "
                 f"bumpalo {fmt_ns(bump)} per object: the "
                 "difference is in dropping, which an arena does not do per object",
                 verdict(worst and worst[0], 1)))
    r = d.ratio("batch-glibc", "vec")
    rows.append(("… within 2x of the `Vec` limit", f"batch-glibc / vec: {fmt_ratio(r)}",
                 verdict(r and r[0], 2, at_least=False)))
    b = next((row for row in callgrind or [] if row["strategy"] == "batch-glibc"), None)
    if b:
        rows.append(("… at most 40 instructions per object", f"batch-glibc {b['total']:.1f} "
                     f"(allocating {b['fill']:.1f}, dropping {b['release']:.1f})",
                     verdict(b["total"], 40, at_least=False, unit="")))
    r = d.ratio("box-mimalloc", "batch-mimalloc", "remote_drop/64B", 65536)
    r2 = d.ratio("box-mimalloc", "batch-mimalloc", "cross_thread/64B", 65536)
    rows.append(("Cross-thread drop of 65,536 boxes: ≥ 4x faster than mimalloc's remote free",
                 f"drop alone, box-mimalloc / batch-mimalloc: {fmt_ratio(r)}; round trip "
                 f"(allocate here, drop there): {fmt_ratio(r2)}",
                 f"{verdict(r and r[0], 4)}; round trip: {verdict(r2 and r2[0], 4)}"))
    glibc, batch = (mem_median(memory or [], *k, 16) for k in (("system", "box"),
                                                                  ("batch_system", "batch-glibc")))
    if glibc and batch:
        frac = 100 * batch["objects"] / glibc["objects"]
        rows.append(("1,000,000 live 16-byte boxes: ≤ 60% of the resident memory of `Box::new` on glibc",
                     f"objects: {batch['objects'] / 2**20:.1f} MiB vs {glibc['objects'] / 2**20:.1f} "
                     f"MiB ({frac:.0f}%); whole process: {batch['rss_live'] / 2**20:.1f} vs "
                     f"{glibc['rss_live'] / 2**20:.1f} MiB ({100 * batch['rss_live'] / glibc['rss_live']:.0f}%)",
                     verdict(frac, 60, at_least=False, unit="%")))
    cells = [(r[0], f"{g}/{n}") for g in (f"{s}/{size}B" for s in SCENARIOS for size in (16, 64, 256))
             for n in d.counts(g) if (r := d.ratio("jemalloc-batch", "batch-glibc", g, n))]
    r = d.ratio("jemalloc-batch", "batch-glibc")
    rows.append(("Faster than jemalloc's batch API on the same work",
                 f"jemalloc-batch / batch-glibc: {fmt_ratio(r)}; faster in "
                 f"{sum(x > 1 for x, _ in cells)} of {len(cells)} matrix cells"
                 + (f" (worst: {min(cells)[1]}, {min(cells)[0]:.2f}x)" if cells and min(cells)[0] <= 1 else ""),
                 verdict(r and r[0], 1)))
    return rows


def matrix(d, scen):
    sizes = [s for s in (16, 64, 256) if d.counts(f"{scen}/{s}B")]
    present = [s for s in STRATEGIES if any(s in d.strategies(f"{scen}/{size}B") for size in sizes)]
    rows = []
    for size in sizes:
        group = f"{scen}/{size}B"
        counts = d.counts(group)
        if group == HEAD:  # all its counts are in the table of old and new above
            counts = [n for n in counts if n in (1, 8, 64, 1024, 65536)] or counts
        for n in counts:
            vals = {s: d.median(group, s, n) for s in present}
            best = min((v for v in vals.values() if v), default=None)
            rows.append([f"{size} B", f"{n:,}"] + [f"**{fmt_ns(v)}**" if v == best else fmt_ns(v)
                                                    for v in vals.values()])
    return table(["size", "N"] + [f"`{s}`" for s in present], rows, ["---", "---:"] + ["---:"] * len(present))


def old_and_new(d):
    """Allocate then drop, 64 B, every N: `Box::new` against the attribute on
    glibc and on mimalloc, and the `Vec` limit."""
    rows = []
    for n in d.counts(HEAD):
        cells = [f"{n:,}"]
        for old, new in (("box-glibc", "batch-glibc"), ("box-mimalloc", "batch-mimalloc")):
            cells += [fmt_ns(d.median(HEAD, old, n)), fmt_ns(d.median(HEAD, new, n)),
                      fmt_ratio(d.ratio(old, new, HEAD, n))]
        cells += [fmt_ns(d.median(HEAD, "vec", n)), fmt_ratio(d.ratio("batch-glibc", "vec", HEAD, n))]
        rows.append(cells)
    return table(["N", "glibc: `Box::new`", "`#[batch_alloc]`", "speed-up", "mimalloc: `Box::new`",
                  "`#[batch_alloc]`", "speed-up", "`Vec` limit", "batch-glibc / limit"], rows)


def charts(d, img):
    """ns per object against N, 64-byte objects: allocate then drop, and
    the three scenarios side by side. Returns the files' names."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(img, exist_ok=True)
    colors = dict(zip(STRATEGIES, ["#d62728", "#ff7f0e", "#1f77b4", "#17becf", "#9467bd", "#8c564b",
                                   "#2ca02c", "#98df8a", "#bcbd22", "#7f7f7f"]))
    markers = dict(zip(STRATEGIES, "osos^^Ddvx"))
    lines = {"batc": "-", "box-": "--", "bump": "-.", "type": "-."}

    def plot(ax, group, title):
        for s in d.strategies(group):
            ns = [n for n in d.counts(group) if d.rounds(group, s, n)]
            rs = [d.rounds(group, s, n) for n in ns]
            ax.plot(ns, [statistics.median(r) for r in rs], color=colors[s], marker=markers[s], markersize=4,
                    linestyle=lines.get(s[:4], ":"), linewidth=2.4 if s.startswith("batch") else 1.3,
                    label=STRATEGIES[s])
            ax.fill_between(ns, [min(r) for r in rs], [max(r) for r in rs], color=colors[s], alpha=0.12)
        ax.set(yscale="log", xlabel="N (objects per loop)", title=title,
               ylabel="ns per object (median; band: min–max over rounds)")
        ax.set_xscale("log", base=2)
        ax.grid(True, which="both", alpha=0.3)

    made = []
    scens = [s for s in ("alloc_drop", "alloc_only", "cross_thread") if d.counts(f"{s}/64B")]
    for name, shown in (("alloc_drop_64B", scens[:1]), ("scenarios_64B", scens)):
        if not shown:
            continue
        fig, axes = plt.subplots(1, len(shown), figsize=(11.5, 5.5) if len(shown) == 1 else (15, 4.8),
                                 sharey=True, squeeze=False)
        for ax, s in zip(axes[0], shown):
            plot(ax, f"{s}/64B", "64-byte objects: " + SCENARIOS[s].split(" (")[0].lower())
        if len(shown) == 1:
            axes[0][0].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
            fig.tight_layout()
        else:
            fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=5, fontsize=8)
            fig.tight_layout(rect=(0, 0.1, 1, 1))
        fig.savefig(os.path.join(img, f"{name}.png"), dpi=110)
        plt.close(fig)
        made.append(f"{name}.png")
    return made


def write(results, doc, img):
    d = Suite(results)
    memory, callgrind = results.get("memory"), results.get("callgrind")
    cfg, m = results["config"], results["machine"]
    pngs = charts(d, img) if d.crit else []
    rel = os.path.relpath(img, os.path.dirname(os.path.abspath(doc)))
    out = []
    w = lambda *blocks: out.extend(x for block in blocks for x in (block, ""))
    built = results.get("build_seconds", 0)
    w("# Benchmarks", "<!-- Generated by benches/suite/report.py; do not edit: rerun the command below. -->",
      f"Generated by **`{results['command']}`** ({results['mode']} run, {cfg['rounds']} rounds, "
      f"{(results['seconds'] - built) / 60:.0f} minutes measuring after {built} s building"
      f"{', criterion rounds from an earlier start (--resume)' if results.get('resumed') else ''}, started "
      f"{results['started']}, commit {m['git']}). `benches/suite/run.sh` runs everything (about 40 "
      "minutes on this machine, plus the build), `benches/suite/run.sh --quick` a subset (about 8 "
      "minutes); both rewrite this page and its charts. The raw figures are in "
      "[`benchmarks.json`](benchmarks.json); `benches/suite/run.sh --report-only docs/benchmarks.json` "
      "rewrites the page from them.",
      "All times are per object (per box made, for the programs): criterion's median time per "
      "iteration divided by the objects the iteration makes, then the median over rounds. A ratio "
      "is of two such medians, and in brackets the lowest and highest ratio within one round (the "
      "two figures of a round are measured minutes apart at most). The driver keeps each round as "
      "criterion's baseline `rN` under the run's directory (runs before 2026-12-04 kept a criterion "
      "directory per round and binary): `critcmp --target-dir target/suite/latest r0 r1 "
      "-f 'alloc_drop/64B/.*/1024'` compares rounds, `critcmp --target-dir target/suite/latest r0 "
      "-g '^(alloc_drop/64B/)[^/]+(/.*)'` strategies within one (mean ± standard deviation of "
      "one criterion run, ratio to the fastest).")
    w("## Targets", "From issue 4.", table(["target", "measured", "verdict"], targets(d, memory, callgrind),
                                          ["---"] * 3))
    cg = {row["strategy"]: row for row in callgrind or [] if not row["no_spawn"] and row["strategy"] != "box"}
    base = d.rounds(HEAD, "batch-glibc", 1024)
    w("## Headline: 64-byte objects, N = 1024, allocate then drop",
      table(["strategy", "ns per object", "range over rounds", "time vs batch-glibc",
             "instructions per object"],
            [[html(STRATEGIES[s]), fmt_ns(statistics.median(r)), f"{fmt_ns(min(r))} – {fmt_ns(max(r))}",
              fmt_ratio(ratio(r, base), ranges=False), f"{cg[s]['total']:.1f}" if s in cg else "–"]
             for s in STRATEGIES if (r := d.rounds(HEAD, s, 1024))]))
    if "alloc_drop_64B.png" in pngs:
        w(f"![ns per object against N, 64-byte objects, allocate then drop]({rel}/alloc_drop_64B.png)")
    if d.counts(HEAD):
        w("## Old and new, every N",
          "N separate `Box::new` (old) against the same loop under `#[batch_alloc]` (new), 64-byte "
          "objects, allocate N then drop them, as the Go proposal's table has them; speed-up: old / "
          "new; and the one-allocation limit, `Vec::with_capacity(N)`. A loop of one or two boxes "
          "takes slots from the thread's scope runs, which stay with the thread between loops.",
          old_and_new(d))
    w("## Matrix",
      "Median ns per object; the fastest of each row in bold. Strategies: "
      + "; ".join(f"`{s}` {html(t)}" for s, t in STRATEGIES.items()) + ".",
      "- *Allocate then drop*: the timed iteration allocates N objects, keeping a pointer to each in "
      "a list made beforehand, then drops them all (arenas: drops or resets the arena).\n"
      "- *Allocate only*: the timer runs around rounds of allocating N objects (rounds of at least "
      "4096 objects, so reading the clock costs under 0.01 ns per object); the objects are dropped "
      "after the timer stops. A batch's end (giving back unused slots) counts as allocating.\n"
      "- *Round trip*: allocate N objects, send them to a worker thread that drops them, get the "
      "emptied containers back, in messages of at least 4096 objects. *Drop alone*: the same "
      "exchange, timing only the worker's dropping.\n"
      "- Arenas cannot free objects one by one: they are sent whole, and dropped or reset by the "
      "worker. The `Vec` limit is one allocation per loop.\n"
      "- glibc gives the top of its heap back to the OS when more than 128 KiB is free there "
      "(`M_TRIM_THRESHOLD`), so a loop that frees more than that at once (256-byte objects from "
      "N = 1024, larger N at any size) page-faults its memory in again on the next round: the "
      "large 256-byte figures of glibc-backed strategies. That is glibc's default and is left in.")
    for scen, title in SCENARIOS.items():
        if any(d.counts(f"{scen}/{s}B") for s in (16, 64, 256)):
            w(f"### {title}", matrix(d, scen))
    if "scenarios_64B.png" in pngs:
        w(f"![ns per object against N, 64-byte objects, three scenarios]({rel}/scenarios_64B.png)")
    if memory:
        rows = []
        for size in (16, 64):
            glibc = mem_median(memory, "system", "box", size)
            for key, label in MEMORY_LABEL.items():
                if mm := mem_median(memory, *key, size):
                    rows.append([f"{size} B", html(label), f"{mm['per_object']:.1f}",
                                 f"{100 * mm['objects'] / glibc['objects']:.0f}%" if glibc else "–",
                                 *(f"{mm[k] / 2**20:.1f} MiB" for k in ("rss_live", "hwm")),
                                 f"{mm['rss_after'] / 2**20:.1f} MiB (start {mm['rss_start'] / 2**20:.1f})"])
        w("## Memory",
          f"1,000,000 live objects, one process per row (median of {mem_median(memory, 'system', 'box', 16)['reps']}"
          " processes). *Per object*: resident memory the objects added, divided by their number (the "
          "list of pointers to them is made and touched before the first reading). *Process*: `VmRSS` "
          "with the objects alive; *peak*: `VmHWM`; *after drop*: `VmRSS` once the objects and the "
          "list are dropped, with the process's start-up resident size beside it. A batch slot has no "
          "per-object header: glibc adds 8 bytes to each block and rounds to 16.",
          table(["size", "allocation", "bytes per object", "objects vs glibc Box::new", "process", "peak",
                 "after drop"], rows, ["---", "---"] + ["---:"] * 5))
    if callgrind:
        lo, hi = callgrind[0]["reps"]
        names = {"batch_system": "BatchAlloc<System>", "batch_mimalloc": "BatchAlloc<MiMalloc>"}
        rows = [[(f"`Box::new` through `{names[r['binary']]}`" if r["strategy"] == "box" else f"`{r['strategy']}`")
                 + (", no thread ever spawned" if r["no_spawn"] else ""),
                 *(f"{r[k]:.1f}" for k in ("total", "fill", "release")),
                 ANCHORS.get(r["strategy"], "–"),
                 f"{r['total'] - ANCHORS[r['strategy']]:+.1f}" if r["strategy"] in ANCHORS else "–"]
                for r in callgrind]
        w("## Instructions per object (callgrind)",
          f"The headline case (64-byte objects, N = {callgrind[0]['n']}, allocate then drop), the same "
          f"code as the bench, under `valgrind --tool=callgrind` with {lo} and {hi} repetitions; the "
          "difference divided by the objects added is the cost per object, free of start-up. The halves "
          "come from the same runs with `--toggle-collect` on the strategy's `fill` (allocating, "
          "including making the value and storing the pointer) and `release` (dropping). *Issue "
          "anchor*: the figure issue 4 quotes for this machine, measured in a process that never had a "
          "second thread (every suite binary spawns one before measuring: the no-spawn rows); the "
          "harness's own share is what the `Vec` row costs.",
          table(["strategy", "instructions per object", "allocating", "dropping", "issue anchor",
                 "vs anchor"], rows))
    progs = [p for p in PROGRAMS if any(k.startswith(f"programs/{p}/") for k in d.crit)]
    if progs:
        cgp = {(r["program"], BINARY_ALLOCATOR[r["binary"]], r["variant"]): r
               for r in results.get("callgrind_programs") or []}
        reps = CALLGRIND_PROGRAM_REPS[1]
        rows = []
        for p in progs:
            ref = d.median(f"programs/{p}", "glibc", "plain")
            for a, label in ALLOCATORS.items():
                x, y = d.rounds(f"programs/{p}", a, "plain"), d.rounds(f"programs/{p}", a, "attr")
                if not x or not y:
                    continue
                items = d.crit[f"programs/{p}/{a}/plain"]["items"]
                ip, ia = cgp.get((p, a, "plain")), cgp.get((p, a, "attr"))
                served = ia and ia.get("served", ia.get("batched_boxes"))
                rows.append([p, html(label), fmt_ns(statistics.median(x)), fmt_ns(statistics.median(y)),
                             fmt_ratio(ratio(x, y)),
                             f"{fmt_ns(statistics.median(x) * items)} → {fmt_ns(statistics.median(y) * items)}",
                             f"{ref / statistics.median(y):.2f}x",
                             f"{ip['per_box']:.0f} → {ia['per_box']:.0f}" if ip and ia else "–",
                             f"{served / (reps * ia['boxes_per_run']):.2f}" if served else "–"])
        w("## Real programs",
          "Each program is compiled twice from one source, as written and under `#[batch_alloc]`, and "
          "runs in every binary. Median ns per box the program makes (the run's time divided by its "
          "boxes), and the run's time. Where `BatchAlloc` is not installed the attribute's boxes are "
          "plain `Box::new`: those rows show what the attribute costs when it cannot help. "
          + "; ".join(f"*{p}*: {PROGRAMS[p]}" for p in progs) + ".",
          table(["program", "allocator", "as written", "#[batch_alloc]", "speed-up", "run time",
                 "speed-up over glibc as written", "instructions per box", "served per box"], rows,
                ["---", "---"] + ["---:"] * 7),
          "*Instructions per box*: callgrind, the program's instructions divided by its boxes, as "
          "written → under the attribute, at a smaller size ("
          + ", ".join(sorted({f"{r['program']} {r['size']}" for r in cgp.values()}))
          + "; tree depth, records, statements). *Served per box*: the allocations batch-alloc served "
          "under the attribute (boxes, strings, vectors: everything a scope served), per box the "
          "program makes.")
    loads = sorted(l[0] for l in results.get("load_during") or [] if l)
    w("## Machine, toolchain and noise",
      table(["", ""], machine_rows(results, [["criterion", f"{cfg['samples']} samples, {cfg['warm_up']} s "
                                                          f"warm-up, {cfg['measure']} s measurement per "
                                                          f"bench, {cfg['rounds']} rounds"]]), ["---"] * 2),
      "The machine has 2 cores shared with other work, so times are noisy. The suite fights that "
      "three ways: every figure is the median of rounds; in each round every chunk of benches (one "
      "object size and count of one scenario, or one program) runs in all five binaries back to "
      "back, in an order that rotates each round; and the headline instruction counts, which noise "
      "does not move, stand beside the times. Every binary spawns and joins a thread before "
      "measuring, since glibc runs slower once a process has had a second thread and the "
      "cross-thread benches need one.",
      spread_text({k: e["rounds"] for k, e in d.crit.items()}, "benches")
      + (f" Load average (1 min) during the rounds: min {loads[0]:.1f}, median "
         f"{statistics.median(loads):.1f}, max {loads[-1]:.1f}; at the start {results['load_start'][0]:.1f}, "
         f"at the end {results['load_end'][0]:.1f}." if loads else ""))
    with open(doc, "w") as f:
        f.write("\n".join(out).rstrip() + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("--doc", default="docs/benchmarks.md")
    ap.add_argument("--img", default="docs/img")
    args = ap.parse_args()
    write(load_results(args.results, args.doc, "benchmarks.json"), args.doc, args.img)


if __name__ == "__main__":
    main()
