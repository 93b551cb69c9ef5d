#!/usr/bin/env python3
"""Measures the real-programs table and writes docs/programs.md.

    benches/suite/programs.sh                      # full: 5 rounds of 3 runs per process, callgrind
    benches/suite/programs.sh --quick              # 2 rounds of 2 runs, no callgrind
    benches/suite/programs.sh --programs expr,stmt --allocators system,batch_system
    benches/suite/programs.sh --report-only docs/programs.json   # rewrite the page from a run

Every program of benches/suite/real.rs, each compiled from one source as
written (`plain`) and under `#[batch_alloc]` (`attr`), runs in each of the
five suite binaries (glibc, mimalloc, jemalloc, BatchAlloc<System>,
BatchAlloc<MiMalloc>); `scoped_boxes`, the `attr` twin in a process that
calls `set_capture(Capture::Boxes)` first, runs in the wrapped binaries
only (`program list` names such variants). A cell is one (program,
allocator, variant).

1. Build once (suite.py's build).
2. Rounds: each round runs every cell in a fresh process
   (`suite_BINARY program NAME VARIANT REPS`), REPS runs each; the programs
   in an order that rotates each round, the cells of a program shuffled
   afresh each round (seeded), so that cells compared run seconds apart.
   A cell's time for a round is the median of its process's runs; the page
   gives the median over rounds and the range. Every cell must compute the
   same check value.
3. Instructions: `valgrind --tool=callgrind`, one run of each cell: the
   count of a process that makes one run less that of a process that
   builds the input and makes none.

Why its own rounds rather than hyperfine, which benches/crates/run.sh uses:
a cell's process first builds the program's input (up to a third of its
time), then times only its runs, in process, less the time the thread
waited for a CPU; it reads its own peak RSS after resetting it once the
input is built, and reports the check value and capture setting the driver
verifies. hyperfine would time the input's construction with the program.

Results: target/programs/<stamp>/results.json (target/programs/latest
points at it), kept as docs/programs.json beside the page. Standard
library only; valgrind optional.
"""
import argparse
import datetime
import json
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import time

import suite
from suite import load_results, log, machine_rows, ratio, spread_text, table, verdict

FULL = dict(rounds=5, reps=3, callgrind=True)
QUICK = dict(rounds=2, reps=2, callgrind=False)
# The cells' environment: capture is the variant's to choose, not the caller's.
ENV = {k: v for k, v in os.environ.items() if k != "BATCH_ALLOC_CAPTURE"}

ALLOCATOR = {"system": "glibc", "mimalloc": "mimalloc", "jemalloc": "jemalloc",
             "batch_system": "BatchAlloc&lt;System>", "batch_mimalloc": "BatchAlloc&lt;MiMalloc>"}
# What each wrapped binary wraps: the allocator its figures are compared with.
INNER = {"batch_system": "system", "batch_mimalloc": "mimalloc"}
# The allocators a user could switch to instead of annotating.
SWITCH = ["mimalloc", "jemalloc"]
# The variants the page shows (runs before the per-site form was removed have `per_site`).
VARIANT = {"plain": "as written", "attr": "`#[batch_alloc]`",
           "scoped_boxes": "`#[batch_alloc]`, `Capture::Boxes`"}
SHORT = dict(VARIANT, scoped_boxes="`Capture::Boxes`")
PLAIN, DEFAULT = "plain", "attr"
# Issue 12's targets speak of the first six programs; the reach programs,
# shaped unlike the examples the attribute was built on, have their own.
ISSUE12 = ["records", "tree", "expr", "linked_list", "binary_trees", "stmt"]
DESERIALIZERS, PARSERS = ["records", "tree"], ["expr", "stmt"]
REACH = {
    "derive": "No hand-written visitor anywhere: the types only derive `Deserialize`, so "
              "serde's generated code does every loop and the annotation can only be a "
              "`batch_alloc::scope` around the `serde_json::from_str` call.",
    "chains": "Idiomatic adapters (`lines`, `filter_map`, `fold`, `collect`) and not one `for`, "
              "so every loop the attribute meets is a closure inside an iterator chain "
              "(`parse_line`, a leaf, runs in `analyse`'s scope).",
    "par_derive_1t": "Rayon with per-thread scopes: each task parses one document inside a "
                     "`batch_alloc::scope` on the thread that runs it; here a pool of 1 thread.",
    "par_derive_2t": "Rayon with per-thread scopes, as `par_derive_1t` but on a pool of 2 threads "
                     "(the machine's two cores).",
}
# `derive` is `records` without the hand-written visitors: it must keep
# this share of their speed-up.
VISITORS, SHARE = {"derive": "records"}, 0.9
RUNNING = """\
benches/suite/programs.sh            # full: 5 rounds of 3 runs per process, callgrind (about 20 to 35 minutes on 2 cores, three quarters of it callgrind; plus the build)
benches/suite/programs.sh --quick    # 2 rounds of 2 runs, no callgrind (about 2 minutes, plus the build; writes docs/programs.md unless given --doc)
benches/suite/programs.sh --programs expr,stmt --allocators system,mimalloc,batch_system --quick
benches/suite/programs.sh --size stmt=1000000 --rounds 3 --skip-callgrind
benches/suite/programs.sh --report-only docs/programs.json   # rewrite this page from the run's copy of the results"""


# ---- measuring -------------------------------------------------------------


def run_cell(path, program, variant, reps, size):
    return suite.last_json([path, "program", program, variant, str(reps), str(size)], env=ENV)


def cells_of(binaries, variants, wrapped_only):
    return [(b, v) for b in binaries for v in variants if v not in wrapped_only or b in INNER]


def rounds(paths, programs, binaries, variants, wrapped_only, cfg):
    """{program: {binary: {variant: [one JSON line per round]}}}"""
    cells = {p["name"]: {b: {v: [] for v in variants} for b in binaries} for p in programs}
    for r in range(cfg["rounds"]):
        k = r % len(programs)
        for p in programs[k:] + programs[:k]:
            order = cells_of(binaries, variants, wrapped_only)
            random.Random(f"{r}:{p['name']}").shuffle(order)
            for b, v in order:
                row = run_cell(paths[b], p["name"], v, cfg["reps"], p["size"])
                cells[p["name"]][b][v].append(dict(row, round=r, load=suite.loadavg()))
        log(f"round {r + 1}/{cfg['rounds']} done")
    return cells


def check(cells):
    """Every cell of a program computes the same value and builds the same
    boxes; BatchAlloc is active exactly in the wrapped binaries."""
    problems = []
    for program, by_binary in cells.items():
        seen = {(row["check"], row["boxes"]) for rows in by_binary.values()
                for rs in rows.values() for row in rs}
        if len(seen) > 1:
            problems.append(f"{program}: cells disagree: {seen}")
        for b, by_variant in by_binary.items():
            for v, rows in by_variant.items():
                for row in rows:
                    if row["batch_active"] != (b in INNER):
                        problems.append(f"{program} {b}: BatchAlloc active = {row['batch_active']}")
    if problems:
        sys.exit("programs.py: " + "; ".join(problems))


def callgrind(paths, programs, binaries, variants, wrapped_only):
    """{program: {binary: {variant: instructions of one run, "baseline": ..}}}"""
    out = {}
    for p in programs:
        for b in binaries:
            counts = {}
            mine = [v for _, v in cells_of([b], variants, wrapped_only)]
            for v, reps in [(variants[0], 0)] + [(v, 1) for v in mine]:
                err = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                                      paths[b], "program", p["name"], v, str(reps), str(p["size"])],
                                     text=True, capture_output=True, cwd=suite.ROOT, env=ENV,
                                     check=True).stderr
                counts[v if reps else "baseline"] = int(err.split("Collected : ")[1].split()[0])
            out.setdefault(p["name"], {})[b] = dict(
                {v: counts[v] - counts["baseline"] for v in mine}, baseline=counts["baseline"])
        log(f"callgrind {p['name']}: done")
    return out


# ---- the page --------------------------------------------------------------


def med(values):
    values = [x for x in values if x is not None]
    return statistics.median(values) if values else None


def fmt_ms(ms):
    return "–" if ms is None else f"{ms:.1f} ms" if ms < 100 else f"{ms:.0f} ms"


def fmt_x(r):
    return "–" if r is None else f"{r:.2f}x"


def fmt_pct(x):
    return "–" if x is None else f"{x:+.1f}%"


def fmt_mi(n):
    return "–" if n is None else f"{n / 1e6:,.0f} M" if n >= 1e8 else f"{n / 1e6:,.1f} M"


def fmt_mib(kib):
    return "–" if kib is None else f"{kib / 1024:.1f} MiB"


class Run:
    """The figures of one run; a cell is (program, binary, variant)."""

    def __init__(self, results):
        self.r, self.cells, self.cg = results, results["cells"], results.get("callgrind") or {}
        self.programs = [p["name"] for p in results["programs"]]
        self.variants = [v for v in results["variants"] if v in VARIANT]
        self.default = DEFAULT if DEFAULT in self.variants else None
        self.binaries = list(results["binaries"])
        self.wrapped = [b for b in INNER if b in self.binaries]

    def each_cell(self):
        return [(p, b, v) for p in self.programs for b in self.binaries for v in self.variants]

    def rows(self, p, b, v):
        return self.cells.get(p, {}).get(b, {}).get(v) or []

    def times(self, p, b, v):
        """Per round: the median of the process's runs, in ms."""
        return [statistics.median(r["times_ms"]) for r in self.rows(p, b, v)]

    def time(self, p, b, v):
        return med(self.times(p, b, v))

    def peak(self, p, b, v):
        return med(r.get("peak_first_kib") for r in self.rows(p, b, v))

    def instructions(self, p, b, v):
        return self.cg.get(p, {}).get(b, {}).get(v)

    def speedup(self, p, base, new):
        """base's time over new's, with the lowest and highest within a round."""
        return ratio(self.times(p, *base), self.times(p, *new))

    def fewer(self, p, base, new):
        ib, i_n = self.instructions(p, *base), self.instructions(p, *new)
        return ib / i_n if ib and i_n else None

    def more_pct(self, p, base, new, of):
        a, b = of(p, *base), of(p, *new)
        return 100 * (b / a - 1) if a and b else None

    def twins(self, b):
        return [v for v in self.variants if any(self.rows(p, b, v) for p in self.programs)]

    def first_row(self, p):
        return next((r for b in self.binaries for v in self.variants for r in self.rows(p, b, v)), None)

    def served(self, p, b, v):
        """What batch-alloc served in one run (stats() after less before)."""
        rows = self.rows(p, b, v)
        if not rows:
            return "–"
        row = rows[0]
        c = {k: (row["stats_after"][k] - row["stats_before"].get(k, 0)) / max(1, row["reps"])
             for k in ("scoped_allocations", "batched_boxes", "reserve_calls") if k in row["stats_after"]}
        parts = [f"{c[k]:,.0f} {what}" for k, what in (("scoped_allocations", "from scopes"),
                                                         ("batched_boxes", "boxes from batches")) if c.get(k)]
        return ", ".join(parts) + f"; {c.get('reserve_calls', 0):,.0f} refills" if parts else "–"


def metrics(run):
    """The main tables: (title, the baseline's figure, its format, how a
    cell compares with its baseline, that comparison's format, which is
    better, the note under the title)."""
    out = [("Time", run.time, fmt_ms, lambda p, base, new: (run.speedup(p, base, new) or [None])[0],
            fmt_x, max, "Speed-ups (above 1: faster). Per-round ranges are under Every cell.")]
    if run.cg:
        out.append(("Instructions", run.instructions, fmt_mi, run.fewer, fmt_x, max,
                    "Times fewer instructions (above 1: fewer); one run, by callgrind."))
    out.append(("Peak resident memory", run.peak, fmt_mib,
                lambda p, base, new: run.more_pct(p, base, new, run.peak), fmt_pct, min,
                "Peak RSS more (+) or less (−) than the baseline's; one run in a fresh process, "
                "the input text included (its size: Method)."))
    return out


def main_table(run, value, fmt_value, compare, fmt, better):
    """One row per program: the baseline's figure (glibc as written), then
    every other allocator and twin against the allocator it stands in for
    or wraps (the best twin of each wrapper in bold); then the geometric
    means over the programs."""
    cols = [(f"{ALLOCATOR[b]}, as written", ("system", PLAIN), (b, PLAIN), None)
            for b in SWITCH if b in run.binaries]
    cols += [(f"{ALLOCATOR[b]}, {SHORT[v]}" + ("" if INNER[b] == "system" else f" (vs {ALLOCATOR[INNER[b]]})"),
              (INNER[b], PLAIN), (b, v), b) for b in run.wrapped for v in run.twins(b)]
    pct = fmt is fmt_pct

    def geomean(values):
        if not values or None in values:
            return None
        g = statistics.geometric_mean([1 + x / 100 if pct else x for x in values])
        return 100 * (g - 1) if pct else g

    def bold(values):
        out = [fmt(x) for x in values]
        for group in {c[3] for c in cols if c[3]}:
            members = [i for i, c in enumerate(cols) if c[3] == group and values[i] is not None]
            best = fmt(better(values[i] for i in members)) if len(members) > 1 else None
            out = [f"**{s}**" if i in members and s == best else s for i, s in enumerate(out)]
        return out

    rows = [[p, fmt_value(value(p, "system", PLAIN))] + bold([compare(p, c[1], c[2]) for c in cols])
            for p in run.programs]
    rows.append(["*geometric mean*", ""] + bold([geomean([compare(p, c[1], c[2]) for p in run.programs])
                                                for c in cols]))
    return table(["program", "glibc, as written"] + [c[0] for c in cols], rows)


def target_row(label, values, target, at_least=True, fmt=fmt_x):
    """[target, measured, verdict, met by every program]; `values` are
    (program, value) and every program's must reach `target`."""
    known = [(x, p) for p, x in values if x is not None]
    if not known:
        return [label, "–", "not measured", False]
    x, p = min(known) if at_least else max(known)
    met = sum(y >= target if at_least else y <= target for y, _ in known)
    return [label, "; ".join(f"{p} {fmt(x)}" for p, x in values),
            f"{met} of {len(known)} programs; worst {p}: "
            + verdict(x, target, at_least, *(("%", True) if fmt is fmt_pct else ("x", False))),
            met == len(values)]


def targets(run, programs, reach):
    """Issue 12's targets (`reach` False) or the reach programs' for the
    default twin, over `programs`."""
    v = run.default
    bs, bm, glibc, mi = ("batch_system", v), ("batch_mimalloc", v), ("system", PLAIN), ("mimalloc", PLAIN)
    speed = lambda base, new, progs=programs: [(p, (run.speedup(p, base, new) or [None])[0]) for p in progs]
    fewer = lambda base, new: [(p, run.fewer(p, base, new)) for p in programs]
    more = lambda base, new, of: [(p, run.more_pct(p, base, new, of)) for p in programs]
    rows = []
    if not reach:
        rows += [target_row("never slower than as written, on BatchAlloc&lt;System>: time",
                            speed(("batch_system", PLAIN), bs), 1),
                 target_row("… instructions", fewer(("batch_system", PLAIN), bs), 1)]
        for group, what, target, than in ((DESERIALIZERS, "the deserializers", 1.6, "faster than"),
                                          (PARSERS, "the parsers", 1.3, "no slower than")):
            if progs := [p for p in group if p in programs]:
                rows += [target_row(f"{what} ({', '.join(progs)}) ≥ {target}x faster than glibc as written",
                                    speed(glibc, bs, progs), target),
                         target_row(f"… {than} plain mimalloc", speed(mi, bs, progs), 1)]
        progs = [p for p in DESERIALIZERS + PARSERS if p in programs]
        rows.append(target_row(f"on BatchAlloc&lt;MiMalloc>: ≥ 1.25x faster than plain mimalloc "
                               f"({', '.join(progs)})", speed(mi, bm, progs), 1.25))
        rows += [target_row(f"the wrapper, no attribute: {ALLOCATOR[b]} as written ≤ +3% instructions "
                            f"over {ALLOCATOR[INNER[b]]}",
                            more((INNER[b], PLAIN), (b, PLAIN), run.instructions), 3, False, fmt_pct)
                 for b in INNER]
    else:
        rows += [target_row("on BatchAlloc&lt;System>: ≥ 1.5x faster than glibc as written", speed(glibc, bs), 1.5),
                 target_row("… at least as fast as plain mimalloc as written", speed(mi, bs), 1),
                 target_row("on BatchAlloc&lt;MiMalloc>: ≥ 1.25x faster than plain mimalloc as written",
                            speed(mi, bm), 1.25)]
        for b in INNER:
            rows += [target_row(f"never slower than as written on the allocator it wraps: {ALLOCATOR[b]} "
                                f"annotated vs {ALLOCATOR[INNER[b]]} as written: time",
                                speed((INNER[b], PLAIN), (b, v)), 1),
                     target_row("… instructions", fewer((INNER[b], PLAIN), (b, v)), 1)]
        rows += [share_row(run, p, of, glibc, bs) for p, of in VISITORS.items()
                 if p in programs and of in run.programs]
    rows += [target_row(f"peak RSS, {ALLOCATOR[b]} annotated, ≤ +10% over {ALLOCATOR[INNER[b]]} as written",
                        more((INNER[b], PLAIN), (b, v), run.peak), 10, False, fmt_pct) for b in INNER]
    return rows


def share_row(run, p, of, base, new):
    """`p`'s speed-up (base to new) as a share of `of`'s (target: SHARE)."""
    label = (f"{p} (derived `Deserialize`) keeps ≥ {100 * SHARE:.0f}% of the speed-up of {of} "
             f"(hand-written visitors): {ALLOCATOR[new[0]]} annotated over {ALLOCATOR[base[0]]} as written")
    sp, so = run.speedup(p, base, new), run.speedup(of, base, new)
    if not sp or not so:
        return [label, "–", "not measured", False]
    kept = sp[0] / so[0]
    same = len({(r["size"], r["input_bytes"], r["boxes"], r["check"]) for q in (p, of)
                for c in run.each_cell() if c[0] == q for r in run.rows(*c)}) == 1
    measured = (f"{p} {fmt_x(sp[0])}; {of} {fmt_x(so[0])}; share {100 * kept:.0f}%"
                + (f" (of the gain above 1x: {100 * (sp[0] - 1) / (so[0] - 1):.0f}%)" if so[0] > 1 else ""))
    if (ip := run.fewer(p, base, new)) and (io := run.fewer(of, base, new)):
        measured += f"; by instructions: {p} {fmt_x(ip)}, {of} {fmt_x(io)}, share {100 * ip / io:.0f}%"
    measured += ("; same input (size, bytes, boxes and check value)" if same else "; **not the same input**")
    return [label, measured, verdict(100 * kept, 100 * SHARE, unit="%"), kept >= SHARE]


def detail_table(run, p):
    rows = []
    for b in run.binaries:
        for v in run.variants:
            if t := run.times(p, b, v):
                rows.append([ALLOCATOR[b], VARIANT[v], fmt_ms(statistics.median(t)),
                             f"{fmt_ms(min(t))} – {fmt_ms(max(t))}",
                             fmt_ms(med(r["times_ms"][0] for r in run.rows(p, b, v))),
                             fmt_mi(run.instructions(p, b, v)), fmt_mib(run.peak(p, b, v)),
                             fmt_mib(med(r.get("rss_before_kib") for r in run.rows(p, b, v))),
                             run.served(p, b, v)])
    return table(["allocator", "variant", "time (median)", "range over rounds", "first run", "instructions",
                  "peak RSS", "RSS before the run", "served by batch-alloc per run"], rows,
                 ["---", "---"] + ["---:"] * 7)


def input_text(run, p):
    row = run.first_row(p)
    return "–" if not row else f"{row['input_bytes'] / 1e6:.1f} MB" if row["input_bytes"] else "none"


def write(results, doc):
    run = Run(results)
    cfg, m, secs = results["config"], results["machine"], results.get("seconds", {})
    loads = sorted(r["load"][0] for c in run.each_cell() for r in run.rows(*c) if r.get("load"))
    out = []
    w = lambda *blocks: out.extend(x for block in blocks if block for x in (block, ""))
    command = results["command"]
    if results.get("note"):  # shown below the command, in full
        command = command.replace(shlex.quote(results["note"]), "NOTE").replace(results["note"], "NOTE")
    w("# The real-programs table",
      "<!-- Generated by benches/suite/programs.py; do not edit: rerun the command below. -->",
      f"Generated by **`{command}`** ({results['mode']} run: {cfg['rounds']} rounds of {cfg['reps']} runs "
      f"per process{', callgrind' if run.cg else ', no callgrind'}; "
      f"{round((secs.get('rounds', 0) + secs.get('callgrind', 0)) / 60)} minutes measuring after "
      f"{secs.get('build', 0)} s building; started {results['started']}, commit {m['git']}). The raw "
      "figures are in [`programs.json`](programs.json); `benches/suite/programs.sh --report-only "
      "docs/programs.json` rewrites this page from them.",
      results.get("note") and f"**{results['note']}**")
    if loads and statistics.median(loads) > (m.get("cpus") or 1):
        w(f"*Other work kept this machine busy while the times were measured (load average "
          f"{statistics.median(loads):.1f} on {m.get('cpus')} CPUs, median over the rounds): times "
          "spread widely from round to round (see the ranges, and Machine and noise); the instruction "
          "counts are not affected, so compare them first.*")
    w("The question: a user with a real program, who can annotate it with `#[batch_alloc]` and install "
      "`BatchAlloc`, or switch the global allocator instead, which is faster, by how much, at what "
      "memory? And should the attribute's scopes capture every allocation they can by default, or only "
      "its boxes? Each program is compiled from one source twice (as written; with `#[batch_alloc]` "
      "where its example puts it) and runs under five global allocators. Under `BatchAlloc` that gives "
      "three ways to run it:",
      table(["twin", "what serves the program's allocations"], [
          [VARIANT["plain"], "the wrapped allocator (the wrapper checks that no scope is open)"],
          [VARIANT["attr"] + " (the default)", "while an annotated function runs, the thread's batch scope: "
           "the annotated `Box::new`s and every other allocation it can serve (capture)"],
          [VARIANT["scoped_boxes"], "the same binary with `batch_alloc::set_capture(Capture::Boxes)` at "
           "the start: scopes open, but serve only the annotated `Box::new`s"]], ["---", "---"]),
      "Without `BatchAlloc` the last is the `#[batch_alloc]` program again (no scope, plain boxes), so "
      "it runs in the two wrapped binaries only.")
    for i, (title, value, fmt_value, compare, fmt, better, note) in enumerate(metrics(run)):
        w(f"## {title}", i == 0 and (
            "One row per program; every figure compares a cell with what its user would otherwise run: "
            "glibc as written for mimalloc, jemalloc and BatchAlloc&lt;System>; mimalloc as written for "
            "BatchAlloc&lt;MiMalloc>, which wraps it. Twins: as written, `#[batch_alloc]` (the default: "
            "capturing scopes), `Capture::Boxes` (the same with capture off). In bold, the best twin on "
            "each wrapper; the last row is the geometric mean over the programs, across the three "
            "tables the measurement that chose the default (issue 12, point 5)."),
          note, main_table(run, value, fmt_value, compare, fmt, better))
    if run.default:
        reach = [p for p in REACH if p in run.programs]
        for title, progs, text in (
                ("Targets (issue 12)", [p for p in run.programs if p in ISSUE12],
                 f"For `{run.default}` (the attribute as shipped: capturing scopes) over the programs issue "
                 "12 speaks of" + (" (the programs added since have targets of their own: "
                                    "[The reach programs](#the-reach-programs))" if reach else "")),
                ("The reach programs", reach,
                 "Programs added after issue 12, each shaped unlike the examples the attribute was built "
                 "on:\n\n" + "\n".join(f"- `{p}`: {REACH[p]}" for p in reach) + f"\n\nTheir targets, for "
                 f"`{run.default}` (in `derive` and the rayon programs, `batch_alloc::scope` around "
                 "`serde_json::from_str`; in `chains`, `#[batch_alloc]` on every fn; the rayon programs' "
                 "clock, which leaves out the time the measuring thread waited for a CPU, counts its "
                 "waits for the pool, so their times carry more of the machine's other load)")):
            if progs:
                rows = targets(run, progs, reach=progs is reach)
                w(f"## {title}", f"{text}. {sum(r[3] for r in rows)} of {len(rows)} targets met for every "
                  "program.", table(["target", "measured", "verdict"], [r[:3] for r in rows], ["---"] * 3))
    if len(run.wrapped) == 2:
        w("## The wrapper alone: `BatchAlloc` under code as written",
          "What installing `BatchAlloc` costs a program that has no annotation: as written on the "
          "wrapper against as written on the allocator it wraps (target: at most +3% instructions).",
          table(["program", "instructions: BatchAlloc&lt;System> vs glibc", "BatchAlloc&lt;MiMalloc> vs "
                 "mimalloc", "time: BatchAlloc&lt;System> vs glibc", "BatchAlloc&lt;MiMalloc> vs mimalloc"],
                [[p] + [fmt_pct(run.more_pct(p, (INNER[b], PLAIN), (b, PLAIN), of))
                        for of in (run.instructions, run.time) for b in INNER] for p in run.programs]))
    w("## Every cell")
    for p in results["programs"]:
        row = run.first_row(p["name"])
        w(f"### {p['name']}: {p['about']}",
          row and f"Size {p['size']:,} {p['unit']}; input {input_text(run, p['name'])}; "
                  f"{row['boxes']:,} boxes per run.", detail_table(run, p["name"]))
    w("*First run*: the median over rounds of each process's first run (a fresh heap). *RSS before the "
      "run*: resident memory once the input is built. *Served by batch-alloc*: per run, from "
      "`batch_alloc::stats()`: allocations served from scopes (`scoped_allocations`), boxes from "
      "batches (`batched_boxes`), and the refills that made the scopes' runs and the batches "
      "(`reserve_calls`).",
      "## Method",
      f"Each cell (program, allocator, variant) runs in a fresh process of the suite binary that installs "
      f"its allocator (`suite_BINARY program NAME VARIANT REPS`): the process builds the program's input, "
      f"then makes {cfg['reps']} runs, each the program's whole work (build, use, drop). A round runs "
      "every cell once: the programs in an order that rotates each round, the cells of a program in an "
      "order shuffled afresh each round, so that cells compared with each other run seconds apart and "
      f"none always follows the same neighbour; {cfg['rounds']} rounds. *Time*: per round, the median of "
      "the process's runs (wall-clock time less the time the thread waited for a CPU, as the examples "
      "measure); the tables give the median over rounds and ratios are of those medians. "
      "*Instructions*: `valgrind --tool=callgrind`, one run: the count of a process that makes one run "
      "less that of a process that only builds the input (all threads). *Peak RSS*: VmHWM after the "
      "first run, reset (`/proc/self/clear_refs`) once the input is built, so it counts the input held "
      "and the program's own peak; median over rounds. Every cell computes the same check value from "
      "what it built, and the driver refuses a run where they differ. Where `BatchAlloc` is not "
      "installed the attribute's boxes are plain `Box::new`. The `scoped_boxes` process calls "
      "`batch_alloc::set_capture(Capture::Boxes)` before it builds its input; the driver takes "
      "`BATCH_ALLOC_CAPTURE` out of every cell's environment and refuses a run where a cell's capture "
      "(`batch_alloc::capture()`, in its JSON line) is not its variant's.",
      "Programs and sizes (`suite_system program list`; another size with `--size NAME=N`):",
      table(["program", "size", "input", "what one run does"],
            [[p["name"], f"{p['size']:,} {p['unit']}", input_text(run, p["name"]),
              p["about"] + (f". {REACH[p['name']]}" if p["name"] in REACH else "")] for p in results["programs"]],
            ["---", "---:", "---:", "---"]),
      "## Running it", f"```sh\n{RUNNING}\n```",
      "A cell by hand: `target/release/deps/suite_batch_system-* program stmt attr 3` prints its JSON "
      "line; `program list` the programs, sizes and variants. The variants are `benches/suite/real.rs`'s "
      "`Variant`; the driver and this page take the list from `program list` and give each its columns.",
      "## Machine and noise", table(["", ""], machine_rows(results), ["---", "---"]),
      "The machine has 2 cores shared with other work. "
      + spread_text({"/".join(c): run.times(*c) for c in run.each_cell()}, "cells")
      + " Instruction counts do not move with load.",
      loads and f"Load average (1 min) during the rounds: min {loads[0]:.1f}, median "
                f"{statistics.median(loads):.1f}, max {loads[-1]:.1f}.")
    with open(doc, "w") as f:
        f.write("\n".join(out).rstrip() + "\n")


def pick(names, known, what):
    if not names:
        return list(known)
    if unknown := [n for n in names.split(",") if n not in known]:
        sys.exit(f"programs.py: unknown {what} {unknown}; known: {list(known)}")
    return [n for n in known if n in names.split(",")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--quick", action="store_true", help="2 rounds of 2 runs per process, no callgrind")
    ap.add_argument("--rounds", type=int, help="rounds (default 5, quick 2)")
    ap.add_argument("--reps", type=int, help="runs per process (default 3, quick 2)")
    ap.add_argument("--programs", metavar="A,B", help="only these programs (default all)")
    ap.add_argument("--allocators", metavar="A,B",
                    help=f"only these binaries, of {','.join(suite.BINARIES)} (default all)")
    ap.add_argument("--variants", metavar="A,B", help="only these variants (default all)")
    ap.add_argument("--size", action="append", default=[], metavar="PROGRAM=N",
                    help="another size for a program (its unit: `program list`)")
    ap.add_argument("--skip-callgrind", action="store_true")
    ap.add_argument("--note", help="a sentence for the top of the page (what this run is for)")
    ap.add_argument("--report-only", metavar="RESULTS", help="rewrite the page from a results.json "
                    "(or a run directory)")
    ap.add_argument("--doc", help="the page to write (default docs/programs.md; for a run of a subset, "
                    "--programs, --allocators or --variants, the run's directory)")
    args = ap.parse_args()
    os.chdir(suite.ROOT)
    if args.report_only:
        doc = args.doc or "docs/programs.md"
        return write(load_results(args.report_only, doc, "programs.json"), doc)

    cfg = dict(QUICK if args.quick else FULL)
    cfg.update({k: getattr(args, k) for k in ("rounds", "reps") if getattr(args, k)})
    cfg["callgrind"] = cfg["callgrind"] and not args.skip_callgrind and bool(shutil.which("valgrind"))
    binaries = pick(args.allocators, suite.BINARIES, "allocators")
    started = time.time()
    paths = suite.build(binaries)
    built = time.time()
    known = suite.last_json([paths[binaries[0]], "program", "list"])
    variants = pick(args.variants, known["variants"], "variants")
    wrapped_only = [v for v in known.get("wrapped_only", []) if v in variants]
    names = pick(args.programs, [p["name"] for p in known["programs"]], "programs")
    programs = [dict(p) for p in known["programs"] if p["name"] in names]
    sizes = dict(s.split("=", 1) for s in args.size)
    for p in programs:
        p["size"] = int(sizes.pop(p["name"], p["size"]))
    if sizes:
        sys.exit(f"programs.py: --size for no selected program: {sorted(sizes)}")
    mode = "quick" if args.quick else "full"
    out = suite.run_dir("programs", mode)
    # A subset is an experiment: it leaves the committed page alone unless told otherwise.
    subset = args.programs or args.allocators or args.variants
    doc = args.doc or (os.path.join(out, "programs.md") if subset else "docs/programs.md")
    results = {"mode": mode, "command": "benches/suite/programs.sh " + shlex.join(sys.argv[1:]),
               "note": args.note, "config": cfg,
               "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
               "machine": suite.machine(), "load_start": suite.loadavg(),
               "binaries": {b: suite.last_json([paths[b], "info"]) for b in binaries},
               "programs": programs, "variants": variants, "wrapped_only": wrapped_only}
    results["command"] = results["command"].strip()
    log(f"results in {out}")
    results["cells"] = rounds(paths, programs, binaries, variants, wrapped_only, cfg)
    check(results["cells"])
    measured = time.time()
    if cfg["callgrind"]:
        results["callgrind"] = callgrind(paths, programs, binaries, variants, wrapped_only)
    results.update(load_end=suite.loadavg(), seconds={
        "build": round(built - started), "rounds": round(measured - built),
        "callgrind": round(time.time() - measured)})
    path = os.path.join(out, "results.json")
    with open(path, "w") as f:
        json.dump(results, f, indent=1)
    write(load_results(path, doc, "programs.json"), doc)
    log(f"wrote {doc}")


if __name__ == "__main__":
    main()
