#!/usr/bin/env python3
"""Writes docs/programs.md (the real-programs table) from a programs.py run.

    programs_report.py RESULTS_JSON [--doc docs/programs.md]

RESULTS_JSON is target/programs/<run>/results.json or a copy of it; the
page keeps a copy beside itself (docs/programs.json), so
`benches/suite/programs.sh --report-only docs/programs.json` rewrites it.
It writes the page whole and touches no other file (the README links to
the page, it carries no figures). A variant the page does not name in
VARIANT (`per_site`, the per-site form measured by runs before it was
removed) is left out of every table. Standard library only.
"""
import argparse
import os
import shlex
import statistics

from report import load_results, machine_rows, spread_text, straddle, table, verdict_at_least

ALLOCATOR = {
    "system": "glibc",
    "mimalloc": "mimalloc",
    "jemalloc": "jemalloc",
    "batch_system": "BatchAlloc&lt;System>",
    "batch_mimalloc": "BatchAlloc&lt;MiMalloc>",
}
# What each wrapped binary wraps: the allocator its figures are compared with.
INNER = {"batch_system": "system", "batch_mimalloc": "mimalloc"}
WRAPPED = ["batch_system", "batch_mimalloc"]
# The allocators a user could switch to instead of annotating.
SWITCH = ["mimalloc", "jemalloc"]
VARIANT = {"plain": "as written", "attr": "`#[batch_alloc]`",
           "scoped_boxes": "`#[batch_alloc]`, `Capture::Boxes`"}
# Short names for the main tables' headers (the legend above them explains).
SHORT = {"plain": "as written", "attr": "`#[batch_alloc]`",
         "scoped_boxes": "`Capture::Boxes`"}
PLAIN = "plain"
# The twin whose figures the targets and the main tables show first:
# the attribute as shipped (capturing scopes).
DEFAULT = "attr"

# Issue 12's targets, for annotated code: which programs each speaks of.
# They speak of the table's first six programs only: the programs added
# later have targets of their own (reach_targets).
ISSUE12 = ["records", "tree", "expr", "linked_list", "binary_trees", "stmt"]
DESERIALIZERS = ["records", "tree"]
PARSERS = ["expr", "stmt"]

# The reach programs: code shaped unlike the examples the attribute was
# built on, each with the sentence the page adds to its description.
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
# `derive` is the `records` export without the hand-written visitors: it
# must keep this share of their speed-up.
VISITORS = {"derive": "records"}
SHARE = 0.9
# The rayon program at each pool size.
THREADS = {"par_derive_1t": 1, "par_derive_2t": 2}


RUNNING = """\
benches/suite/programs.sh            # full: 5 rounds of 3 runs per process, callgrind (about 20 to 35 minutes on 2 cores, three quarters of it callgrind; plus the build)
benches/suite/programs.sh --quick    # 2 rounds of 2 runs, no callgrind (about 2 minutes, plus the build; writes docs/programs.md unless given --doc)
benches/suite/programs.sh --programs expr,stmt --allocators system,mimalloc,batch_system --quick
benches/suite/programs.sh --size stmt=1000000 --rounds 3 --skip-callgrind
benches/suite/programs.sh --report-only docs/programs.json   # rewrite this page from the run's copy of the results\
"""


class Run:
    """The figures of one programs.py run."""

    def __init__(self, results):
        self.r = results
        self.cells = results["cells"]
        self.cg = results.get("callgrind") or {}
        self.programs = [p["name"] for p in results["programs"]]
        self.variants = [v for v in results["variants"] if v in VARIANT]
        self.annotated = [v for v in self.variants if v != PLAIN]
        self.default = DEFAULT if DEFAULT in self.annotated else (self.annotated or [None])[0]
        self.binaries = list(results["binaries"])
        self.wrapped = [b for b in WRAPPED if b in self.binaries]

    def each_cell(self):
        return [(p, b, v) for p in self.programs for b in self.binaries for v in self.variants]

    def rows(self, p, b, v):
        return (self.cells.get(p, {}).get(b, {}).get(v)) or []

    def times(self, p, b, v):
        """Per round: the median of the process's runs, in ms."""
        return [statistics.median(r["times_ms"]) for r in self.rows(p, b, v)]

    def first(self, p, b, v):
        return [r["times_ms"][0] for r in self.rows(p, b, v)]

    def time(self, p, b, v):
        t = self.times(p, b, v)
        return statistics.median(t) if t else None

    def peak(self, p, b, v):
        peaks = [r["peak_first_kib"] for r in self.rows(p, b, v) if r.get("peak_first_kib")]
        return statistics.median(peaks) if peaks else None

    def rss_before(self, p, b, v):
        rss = [r["rss_before_kib"] for r in self.rows(p, b, v) if r.get("rss_before_kib")]
        return statistics.median(rss) if rss else None

    def instructions(self, p, b, v):
        return self.cg.get(p, {}).get(b, {}).get(v)

    def counters(self, p, b, v):
        """The runtime's counters per run (stats() after less before, over
        the runs): allocations served from scopes, boxes from batches,
        refills."""
        rows = self.rows(p, b, v)
        if not rows:
            return {}
        row = rows[0]
        reps = max(1, row["reps"])
        keep = ("scoped_allocations", "batched_boxes", "reserve_calls")
        return {k: (row["stats_after"][k] - row["stats_before"].get(k, 0)) / reps
                for k in keep if k in row["stats_after"]}

    def boxes(self, p):
        for b in self.binaries:
            for v in self.variants:
                for r in self.rows(p, b, v):
                    return r["boxes"]
        return None

    def speedup(self, p, base, new):
        """How many times faster `new` (binary, variant) runs than `base`:
        median over rounds of base / median of new, and the lowest and
        highest of the per-round ratios (a round runs both minutes apart
        at most)."""
        tb, tn = self.times(p, *base), self.times(p, *new)
        if not tb or not tn:
            return None
        per = [b / n for b, n in zip(tb, tn)]
        return statistics.median(tb) / statistics.median(tn), min(per), max(per)

    def fewer(self, p, base, new):
        """base's instructions over new's."""
        ib, i_n = self.instructions(p, *base), self.instructions(p, *new)
        return ib / i_n if ib and i_n else None

    def more_pct(self, p, base, new, of):
        """How much more `new` has than `base`, in %, of a measure."""
        a, b = of(p, *base), of(p, *new)
        return 100 * (b / a - 1) if a and b else None

    def twins(self, b):
        """The variants measured in binary `b`, in the run's order."""
        return [v for v in self.variants if any(self.rows(p, b, v) for p in self.programs)]


class Metric:
    """One main table's measure: the baseline's absolute figure
    (`value`, shown with `fmt_value`) and how `new` compares with `base`
    (`ratio`: a speedup, fewer instructions, or a percentage of memory),
    shown with `fmt_ratio`; `better` says which way is better (max or min)."""

    def __init__(self, title, value, fmt_value, ratio, fmt_ratio, better, sign):
        self.title, self.value, self.fmt_value = title, value, fmt_value
        self.ratio, self.fmt_ratio, self.better, self.sign = ratio, fmt_ratio, better, sign


def metrics(run):
    """The three measures of the main tables, those the run has."""
    out = [Metric("Time", run.time, fmt_ms,
                  lambda p, base, new: (run.speedup(p, base, new) or (None,))[0],
                  fmt_x, max, "×")]
    if run.cg:
        out.append(Metric("Instructions", run.instructions, fmt_mi, run.fewer, fmt_x, max, "÷"))
    out.append(Metric("Peak resident memory", run.peak, fmt_mib,
                      lambda p, base, new: run.more_pct(p, base, new, run.peak),
                      fmt_pct, min, "%"))
    return out


def geomean(values, pct=False):
    """The geometric mean of ratios (of 1 + x/100 for percentages)."""
    known = [1 + x / 100 if pct else x for x in values if x is not None]
    if not known or len(known) < len(values):
        return None
    g = statistics.geometric_mean(known)
    return 100 * (g - 1) if pct else g


def fmt_ms(ms):
    return "–" if ms is None else f"{ms:.1f} ms" if ms < 100 else f"{ms:.0f} ms"


def fmt_x(r, ranges=True):
    if r is None:
        return "–"
    if isinstance(r, tuple):
        text = f"{r[0]:.2f}x"
        return f"{text} ({r[1]:.2f}–{r[2]:.2f})" if ranges else text
    return f"{r:.2f}x"


def fmt_pct(x):
    return "–" if x is None else f"{x:+.1f}%"


def fmt_mi(n):
    return "–" if n is None else f"{n / 1e6:,.0f} M" if n >= 1e8 else f"{n / 1e6:,.1f} M"


def fmt_mib(kib):
    return "–" if kib is None else f"{kib / 1024:.1f} MiB"


def columns(run):
    """The main tables' columns after the program's: (header, base cell,
    cell, group), each cell (binary, variant); `group` gathers the twins of
    one wrapper, among which the best is shown in bold."""
    cols = [(f"{ALLOCATOR[b]}, as written", ("system", PLAIN), (b, PLAIN), None)
            for b in SWITCH if b in run.binaries]
    for b in run.wrapped:
        base = (INNER[b], PLAIN)
        against = "" if INNER[b] == "system" else f" (vs {ALLOCATOR[INNER[b]]})"
        cols += [(f"{ALLOCATOR[b]}, {SHORT.get(v, v)}{against}", base, (b, v), b)
                 for v in run.twins(b)]
    return cols


def main_table(run, metric):
    """One row per program: the baseline's figure (glibc as written), then
    every other allocator and twin against the allocator it stands in for
    or wraps; a last row of geometric means over the programs."""
    cols = columns(run)
    header = ["program", "glibc, as written"] + [c[0] for c in cols]
    pct = metric.sign == "%"
    rows = []
    for p in run.programs:
        ratios = [metric.ratio(p, base, cell) for _, base, cell, _ in cols]
        rows.append([p, metric.fmt_value(metric.value(p, "system", PLAIN))]
                    + bold_best(ratios, cols, metric.better, metric.fmt_ratio))
    means = [geomean([metric.ratio(p, base, cell) for p in run.programs], pct)
             for _, base, cell, _ in cols]
    rows.append(["*geometric mean*", ""] + bold_best(means, cols, metric.better, metric.fmt_ratio))
    return table(header, rows)


def bold_best(values, cols, better, fmt):
    """`values` formatted, the best of each wrapper's group in bold (all
    of them where they print the same)."""
    out = [fmt(x) for x in values]
    groups = {}
    for i, (_, _, _, group) in enumerate(cols):
        if group and values[i] is not None:
            groups.setdefault(group, []).append(i)
    for members in groups.values():
        best = fmt(better(values[i] for i in members))
        for i in members:
            if out[i] == best and len(members) > 1:
                out[i] = f"**{out[i]}**"
    return out


def choice_table(run, b):
    """For wrapper `b`: each twin over every program, against the wrapped
    allocator as written: geometric means, the worst program, and the
    programs where it is the best twin by instructions."""
    base = (INNER[b], PLAIN)
    twins = run.twins(b)
    ms = metrics(run)
    header = ["twin"] + [f"{m.title.lower()}, geometric mean ({m.sign})" for m in ms] + [
        "worst program" + (" (instructions)" if run.cg else " (time)"),
        "best twin in" + (" (instructions)" if run.cg else " (time)")]
    key = ms[1] if run.cg else ms[0]
    best_in = {v: [] for v in twins}
    for p in run.programs:
        scores = {v: key.ratio(p, base, (b, v)) for v in twins}
        known = {v: x for v, x in scores.items() if x is not None}
        if known:
            best_in[max(known, key=known.get)].append(p)
    rows = []
    for v in twins:
        means = [m.fmt_ratio(geomean([m.ratio(p, base, (b, v)) for p in run.programs],
                                     m.sign == "%")) for m in ms]
        per = [(key.ratio(p, base, (b, v)), p) for p in run.programs]
        known = [x for x in per if x[0] is not None]
        worst = f"{min(known)[1]} {key.fmt_ratio(min(known)[0])}" if known else "–"
        rows.append([VARIANT.get(v, v)] + means + [worst, ", ".join(best_in[v]) or "–"])
    return table(header, rows, ["---"] + ["---:"] * (len(header) - 2) + ["---"])


def input_text(run, p):
    for b in run.binaries:
        for v in run.variants:
            for r in run.rows(p, b, v):
                return f"{r['input_bytes'] / 1e6:.1f} MB" if r["input_bytes"] else "none"
    return "–"


def wrapper_table(run):
    header = ["program", "instructions: BatchAlloc&lt;System> vs glibc",
              "BatchAlloc&lt;MiMalloc> vs mimalloc", "time: BatchAlloc&lt;System> vs glibc",
              "BatchAlloc&lt;MiMalloc> vs mimalloc"]
    rows = []
    for p in run.programs:
        rows.append([p] + [
            fmt_pct(run.more_pct(p, (INNER[b], PLAIN), (b, PLAIN), run.instructions))
            for b in ("batch_system", "batch_mimalloc")] + [
            fmt_pct(run.more_pct(p, (INNER[b], PLAIN), (b, PLAIN), run.time))
            for b in ("batch_system", "batch_mimalloc")])
    return table(header, rows)


def detail_table(run, p):
    header = ["allocator", "variant", "time (median)", "range over rounds", "first run",
              "instructions", "peak RSS", "RSS before the run", "served by batch-alloc per run"]
    rows = []
    for b in run.binaries:
        for v in run.variants:
            t = run.times(p, b, v)
            if not t:
                continue
            rows.append([ALLOCATOR[b], VARIANT.get(v, v), fmt_ms(statistics.median(t)),
                         f"{fmt_ms(min(t))} – {fmt_ms(max(t))}",
                         fmt_ms(statistics.median(run.first(p, b, v))),
                         fmt_mi(run.instructions(p, b, v)), fmt_mib(run.peak(p, b, v)),
                         fmt_mib(run.rss_before(p, b, v)), served_text(run.counters(p, b, v))])
    return table(header, rows, ["---", "---"] + ["---:"] * (len(header) - 2))


def served_text(counters):
    """What batch-alloc served in one run: from scopes, from batches, and
    the refills that made the runs and batches."""
    scoped, batched = counters.get("scoped_allocations", 0), counters.get("batched_boxes", 0)
    if not scoped and not batched:
        return "–"
    parts = [f"{scoped:,.0f} from scopes"] if scoped else []
    parts += [f"{batched:,.0f} boxes from batches"] if batched else []
    return ", ".join(parts) + f"; {counters.get('reserve_calls', 0):,.0f} refills"


class Targets:
    """The rows of a target table, each (target, measured, verdict, met by
    every program)."""

    def __init__(self, run):
        self.run = run
        self.rows = []

    def speedups(self, base, new, programs):
        """[(program, speedup, its per-round range)], `base` and `new` as
        (binary, variant)."""
        split = lambda r: (r[0], r[1:]) if r else (None, None)
        return [(p, *split(self.run.speedup(p, base, new))) for p in programs]

    def at_least(self, label, values, target, fmt=fmt_x):
        """A row: every program's value must be `target` or more."""
        known = [(x, p, rounds) for p, x, rounds in values if x is not None]
        if not known:
            verdict = "not measured"
        else:
            x, p, rounds = min(known)
            met = sum(y >= target for y, _, _ in known)
            verdict = (f"{met} of {len(known)} programs; worst {p}: "
                       + verdict_at_least(x, target, "x", rounds))
        self.rows.append([label, "; ".join(f"{p} {fmt(x)}" for p, x, _ in values), verdict,
                          bool(known) and all(x is not None and x >= target for _, x, _ in values)])

    def at_most_pct(self, label, values, target):
        """A row: no program's increase may pass `target` percent."""
        known = [(x, p) for p, x in values if x is not None]
        if not known:
            verdict = "not measured"
        else:
            x, p = max(known)
            met = sum(y <= target for y, _ in known)
            verdict = f"{met} of {len(known)} programs; worst {p}: " + (
                f"**met**: {x:+.1f}% (target ≤ +{target:g}%)" if x <= target else
                f"**missed**: {x:+.1f}% (target ≤ +{target:g}%; {x - target:.1f} points over)")
        self.rows.append([label, "; ".join(f"{p} {fmt_pct(x)}" for p, x in values), verdict,
                          bool(known) and all(x is not None and x <= target for _, x in values)])


def targets(run):
    """Issue 12's targets for the default twin, over the programs it
    speaks of, each with its figures and a verdict; rows of (target,
    measured, verdict, met by every program)."""
    if not run.default:
        return []
    v = run.default
    bs, bm = ("batch_system", v), ("batch_mimalloc", v)
    t = Targets(run)
    programs = [p for p in run.programs if p in ISSUE12]
    t.at_least("never slower than as written, on BatchAlloc&lt;System>: time",
               t.speedups(("batch_system", PLAIN), bs, programs), 1.0)
    t.at_least("… instructions",
               [(p, run.fewer(p, ("batch_system", PLAIN), bs), None) for p in programs], 1.0)
    for group, what, target, than in ((DESERIALIZERS, "the deserializers", 1.6, "faster than"),
                                      (PARSERS, "the parsers", 1.3, "no slower than")):
        progs = [p for p in group if p in programs]
        if progs:
            t.at_least(f"{what} ({', '.join(progs)}) ≥ {target}x faster than glibc as written",
                       t.speedups(("system", PLAIN), bs, progs), target)
            t.at_least(f"… {than} plain mimalloc",
                       t.speedups(("mimalloc", PLAIN), bs, progs), 1.0)
    progs = [p for p in DESERIALIZERS + PARSERS if p in programs]
    t.at_least(f"on BatchAlloc&lt;MiMalloc>: ≥ 1.25x faster than plain mimalloc "
               f"({', '.join(progs)})", t.speedups(("mimalloc", PLAIN), bm, progs), 1.25)
    for b in ("batch_system", "batch_mimalloc"):
        t.at_most_pct(f"the wrapper, no attribute: {ALLOCATOR[b]} as written ≤ +3% instructions "
                      f"over {ALLOCATOR[INNER[b]]}",
                      [(p, run.more_pct(p, (INNER[b], PLAIN), (b, PLAIN), run.instructions))
                       for p in programs], 3.0)
    peak_rss_targets(t, run, v, programs, ("batch_system", "batch_mimalloc"))
    return t.rows


def peak_rss_targets(t, run, v, progs, wrappers):
    """For each of `wrappers`, the row: peak RSS of twin `v` on it at most
    10% over the allocator it wraps, as written."""
    for b in wrappers:
        t.at_most_pct(f"peak RSS, {ALLOCATOR[b]} annotated, ≤ +10% over {ALLOCATOR[INNER[b]]} "
                      "as written",
                      [(p, run.more_pct(p, (INNER[b], PLAIN), (b, v), run.peak))
                       for p in progs], 10.0)


def same_input(run, a, b):
    """Whether programs `a` and `b` read the same input: the same size,
    input bytes, boxes and check value in every cell; None where either
    was not measured."""
    def seen(p):
        return {(r["size"], r["input_bytes"], r["boxes"], r["check"])
                for c in run.each_cell() if c[0] == p for r in run.rows(*c)}
    sa, sb = seen(a), seen(b)
    if not sa or not sb:
        return None
    return sa == sb


def share(run, p, of, base, new):
    """`p`'s speed-up (base to new) over that of `of`: the share it keeps,
    and its lowest and highest within one round; None if not measured."""
    rp, ro = run.speedup(p, base, new), run.speedup(of, base, new)
    if not rp or not ro:
        return None
    tb, tn = run.times(p, *base), run.times(p, *new)
    ob, on = run.times(of, *base), run.times(of, *new)
    per = [(b / n) / (c / m) for b, n, c, m in zip(tb, tn, ob, on)]
    return rp[0] / ro[0], min(per), max(per), rp[0], ro[0]


def reach_targets(run):
    """The reach programs' targets for the default twin: rows as
    `targets`'s."""
    progs = [p for p in REACH if p in run.programs]
    if not run.default or not progs:
        return []
    v = run.default
    bs, bm = ("batch_system", v), ("batch_mimalloc", v)
    t = Targets(run)
    t.at_least("on BatchAlloc&lt;System>: ≥ 1.5x faster than glibc as written",
               t.speedups(("system", PLAIN), bs, progs), 1.5)
    t.at_least("… at least as fast as plain mimalloc as written",
               t.speedups(("mimalloc", PLAIN), bs, progs), 1.0)
    t.at_least("on BatchAlloc&lt;MiMalloc>: ≥ 1.25x faster than plain mimalloc as written",
               t.speedups(("mimalloc", PLAIN), bm, progs), 1.25)
    for b in ("batch_system", "batch_mimalloc"):
        base = (INNER[b], PLAIN)
        t.at_least(f"never slower than as written on the allocator it wraps: {ALLOCATOR[b]} "
                   f"annotated vs {ALLOCATOR[INNER[b]]} as written: time",
                   t.speedups(base, (b, v), progs), 1.0)
        t.at_least("… instructions", [(p, run.fewer(p, base, (b, v)), None) for p in progs], 1.0)
    for p, of in VISITORS.items():
        if p in progs and of in run.programs:
            t.rows.append(share_row(run, p, of, ("system", PLAIN), bs))
    peak_rss_targets(t, run, v, progs, ("batch_mimalloc", "batch_system"))
    return t.rows


def share_row(run, p, of, base, new):
    """The row of `p`'s share of `of`'s speed-up (target: SHARE or more)."""
    label = (f"{p} (derived `Deserialize`) keeps ≥ {100 * SHARE:.0f}% of the speed-up of {of} "
             f"(hand-written visitors): {ALLOCATOR[new[0]]} annotated over "
             f"{ALLOCATOR[base[0]]} as written")
    s = share(run, p, of, base, new)
    same = same_input(run, p, of)
    if s is None:
        return [label, "–", "not measured", False]
    kept, low, high, sp, so = s
    gain = f"{100 * (sp - 1) / (so - 1):.0f}%" if so > 1 else "–"
    measured = (f"{p} {fmt_x(sp)}; {of} {fmt_x(so)}; share {100 * kept:.0f}% (of the gain "
                f"above 1x: {gain})")
    ip, io = run.fewer(p, base, new), run.fewer(of, base, new)
    if ip and io:
        measured += (f"; by instructions: {p} {fmt_x(ip)}, {of} {fmt_x(io)}, "
                     f"share {100 * ip / io:.0f}%")
    measured += "; same input" if same else "; **not the same input**"
    note = (f"; single rounds fall on both sides ({100 * low:.0f}–{100 * high:.0f}%)"
            if straddle((low, high), SHARE) else "")
    verdict = (f"**met**: {100 * kept:.0f}% (target ≥ {100 * SHARE:.0f}%; "
               f"{100 * (kept / SHARE - 1):.0f}% above{note})" if kept >= SHARE else
               f"**missed**: {100 * kept:.0f}% (target ≥ {100 * SHARE:.0f}%; "
               f"{100 * (1 - kept / SHARE):.0f}% short{note})")
    return [label, measured, verdict, kept >= SHARE]


def rayon_table(run):
    """The rayon program at each pool size against the same program under
    plain mimalloc: time and peak RSS of mimalloc as written, and glibc
    as written and the default twin on each wrapper against it."""
    v = run.default
    base = ("mimalloc", PLAIN)
    cells = [("glibc, as written", ("system", PLAIN))] + [
        (f"{ALLOCATOR[b]}, {SHORT.get(v, v)}", (b, v)) for b in run.wrapped]
    header = ["threads", "mimalloc as written: time", "peak RSS"]
    for name, _ in cells:
        header += [f"{name}: time vs mimalloc", "peak RSS vs mimalloc"]
    rows = []
    for p in THREADS:
        if p not in run.programs:
            continue
        row = [f"{THREADS[p]} (`{p}`)", fmt_ms(run.time(p, *base)), fmt_mib(run.peak(p, *base))]
        for _, cell in cells:
            row += [fmt_x(run.speedup(p, base, cell)),
                    fmt_pct(run.more_pct(p, base, cell, run.peak))]
        rows.append(row)
    return table(header, rows)


def scaling_text(run):
    """How much faster each allocator's rayon program runs on 2 threads
    than on 1, in a sentence; None without both."""
    progs = [p for p in THREADS if p in run.programs]
    if len(progs) != 2 or not run.default:
        return None
    one, two = progs
    v = run.default
    cells = [("mimalloc as written", ("mimalloc", PLAIN)),
             ("glibc as written", ("system", PLAIN))] + [
        (f"{ALLOCATOR[b]} {SHORT.get(v, v)}", (b, v)) for b in run.wrapped]
    parts = []
    for name, cell in cells:
        a, b = run.time(one, *cell), run.time(two, *cell)
        if a and b:
            parts.append(f"{name} {fmt_x(a / b)}")
    return ("From 1 thread to 2 (medians over rounds; a machine of 2 cores shared with other "
            "work): " + ", ".join(parts) + ".") if parts else None


def loads(run):
    """The 1-minute load average beside every process of the rounds."""
    return sorted(r["load"][0] for c in run.each_cell() for r in run.rows(*c) if r.get("load"))


def busy_note(run):
    """A warning where other work kept the machine's CPUs busy during the
    rounds (median load above the CPUs): times then move far more than
    instruction counts do."""
    cpus = run.r["machine"].get("cpus") or 1
    during = loads(run)
    if not during or statistics.median(during) <= cpus:
        return None
    return (f"*Other work kept this machine busy while the times were measured (load average "
            f"{statistics.median(during):.1f} on {cpus} CPUs, median over the rounds): times "
            "spread widely from round to round (see the ranges, and Machine and noise); the "
            "instruction counts are not affected, so compare them first.*")


def method(run):
    cfg = run.r["config"]
    return (
        f"Each cell (program, allocator, variant) runs in a fresh process of the suite binary that "
        f"installs its allocator (`suite_BINARY program NAME VARIANT REPS`): the process builds "
        f"the program's input, then makes {cfg['reps']} runs, each the program's whole work "
        "(build, use, drop). A round runs every cell once: the programs in an order that rotates "
        "each round, the cells of a program in an order shuffled afresh each round, so that "
        "cells compared with each other run seconds apart and none always follows the same "
        f"neighbour; {cfg['rounds']} rounds. *Time*: per round, the median of the process's runs "
        "(wall-clock time less the time the thread waited for a CPU, as the examples measure); "
        "the tables give the median over rounds and ratios are of those medians (the targets "
        "add, in brackets, the lowest and highest ratio within one round). *Instructions*: "
        "`valgrind --tool=callgrind`, one run: the count of a process that makes one run less "
        "that of a process that only builds the input (all threads). *Peak RSS*: VmHWM after "
        "the first run, reset (`/proc/self/clear_refs`) once the input is built, so it counts "
        "the input held and the program's own peak; median over rounds. Every cell computes "
        "the same check value from what it built, and the driver refuses a run where they "
        "differ. Where `BatchAlloc` is not installed the attribute's boxes are plain "
        "`Box::new` (the detail tables show what the annotation costs there). The "
        "`scoped_boxes` process calls `batch_alloc::set_capture(Capture::Boxes)` before it "
        "builds its input; the driver takes `BATCH_ALLOC_CAPTURE` out of every cell's "
        "environment and refuses a run where a cell's capture (`batch_alloc::capture()`, in "
        "its JSON line) is not its variant's. `scoped_boxes` runs in the wrapped "
        "binaries only.")


def write_reach(run, reach, w):
    """The reach programs' section: what each adds, their targets, and
    the rayon program against plain mimalloc."""
    w("## The reach programs")
    w("")
    w("Programs added after issue 12, each shaped unlike the examples the attribute was "
      "built on:")
    w("")
    for p in reach:
        w(f"- `{p}`: {REACH[p]}")
    w("")
    rows = reach_targets(run)
    met = sum(r[3] for r in rows)
    w(f"Their targets, for `{run.default}` (in `derive` and the rayon programs, "
      "`batch_alloc::scope` around `serde_json::from_str`; in `chains`, `#[batch_alloc]` on "
      f"every fn). {met} of {len(rows)} targets met for every program.")
    w("")
    w(table(["target", "measured", "verdict"], [r[:3] for r in rows], ["---", "---", "---"]))
    w("")
    for p, of in VISITORS.items():
        if p not in reach or of not in run.programs:
            continue
        same = same_input(run, p, of)
        if same:
            w(f"`{of}` and `{p}` read the same input: the demonstration's generator "
              f"(`generate::json`) at the same size ({input_text(run, p)}), and every cell of "
              "both builds the same boxes and computes the same check value, so the share "
              "compares the two deserializers alone.")
        elif same is False:
            w(f"**`{of}` and `{p}` do not read the same input in this run** (their sizes, "
              "input bytes, boxes or check values differ): the share compares speed-ups over "
              "different inputs.")
        w("")
    if any(p in THREADS for p in reach):
        w("### The rayon program against plain mimalloc")
        w("")
        w("`par_derive` at 1 and 2 threads: mimalloc as written, and each other cell against "
          "it (×: times faster; %: peak RSS more or less). Per-round ranges in brackets.")
        w("")
        w(rayon_table(run))
        w("")
        scaling = scaling_text(run)
        if scaling:
            w(scaling)
            w("")
        w("The clock leaves out the time the measuring thread waited for a CPU; in the rayon "
          "programs that thread waits for the pool, whose threads' waits are counted, so "
          "these times carry more of the machine's other load than the others do.")
        w("")


def write(results, doc):
    run = Run(results)
    m = results["machine"]
    cfg = results["config"]
    out = []
    w = out.append
    w("# The real-programs table")
    w("")
    w("<!-- Generated by benches/suite/programs_report.py; do not edit: rerun the command below. -->")
    w("")
    secs = results.get("seconds", {})
    command = results["command"]
    if results.get("note"):
        # The note is shown below the command, in full.
        command = command.replace(shlex.quote(results["note"]), "NOTE").replace(
            results["note"], "NOTE")
    w(f"Generated by **`{command}`** ({results['mode']} run: {cfg['rounds']} rounds of "
      f"{cfg['reps']} runs per process{', callgrind' if results.get('callgrind') else ', no callgrind'}; "
      f"{round((secs.get('rounds', 0) + secs.get('callgrind', 0)) / 60)} minutes measuring after "
      f"{secs.get('build', 0)} s building; started {results['started']}, commit {m['git']}). "
      "The raw figures are in [`programs.json`](programs.json); "
      "`benches/suite/programs.sh --report-only docs/programs.json` rewrites this page from them.")
    w("")
    if results.get("note"):
        w(f"**{results['note']}**")
        w("")
    busy = busy_note(run)
    if busy:
        w(busy)
        w("")
    w("The question: a user with a real program, who can annotate it with `#[batch_alloc]` and "
      "install `BatchAlloc`, or switch the global allocator instead, which is faster, by how "
      "much, at what memory? And should the attribute's scopes capture every allocation they "
      "can by default, or only its boxes? Each program is compiled from one source twice (as "
      "written; with `#[batch_alloc]` where its example puts it) and runs under five global "
      "allocators. Under `BatchAlloc` that gives three ways to run it:")
    w("")
    w(table(["twin", "what serves the program's allocations"], [
        [VARIANT["plain"], "the wrapped allocator (the wrapper checks that no scope is open)"],
        [VARIANT["attr"] + " (the default)", "while an annotated loop runs, the thread's batch "
         "scope: the annotated `Box::new`s and every other allocation it can serve (capture)"],
        [VARIANT["scoped_boxes"], "the same binary with "
         "`batch_alloc::set_capture(Capture::Boxes)` at the start: scopes open, but serve "
         "only the annotated `Box::new`s"],
    ], ["---", "---"]))
    w("")
    w("Without `BatchAlloc` the last is the `#[batch_alloc]` program again (no scope, "
      "plain boxes), so it runs in the two wrapped binaries only.")
    w("")
    if run.wrapped and len(run.annotated) > 1:
        w("## Choosing the default (issue 12, point 5)")
        w("")
        w("Each twin over every program, against the allocator `BatchAlloc` wraps, as written "
          "(× and ÷: times faster and times fewer instructions, above 1 better; %: peak RSS "
          "more or less). *Best twin in*: the programs where it ran the fewest instructions "
          "of the twins." if run.cg else "Each twin over every program, against the allocator "
          "`BatchAlloc` wraps, as written (× times faster; %: peak RSS). *Best twin in*: the "
          "programs where it was the fastest of the twins.")
        w("")
        for b in run.wrapped:
            w(f"**{ALLOCATOR[b]}** (against {ALLOCATOR[INNER[b]]} as written):")
            w("")
            w(choice_table(run, b))
            w("")
    ms = metrics(run)
    for m in ms:
        w(f"## {m.title}")
        w("")
        if m is ms[0]:
            w("One row per program; every figure compares a cell with what its user would "
              "otherwise run: glibc as written for mimalloc, jemalloc and "
              "BatchAlloc&lt;System>; mimalloc as written for BatchAlloc&lt;MiMalloc>, which "
              "wraps it. Twins: as written, `#[batch_alloc]` (the default: capturing scopes), "
              "`Capture::Boxes` (the same with capture off). In bold, the best twin on each wrapper; "
              "the last row is the geometric mean over the programs.")
            w("")
        w({"×": "Speedups (above 1: faster). Per-round ranges are under Every cell.",
           "÷": "Times fewer instructions (above 1: fewer); one run, by callgrind.",
           "%": "Peak RSS more (+) or less (−) than the baseline's; one run in a fresh "
                "process, the input text included (its size: Method)."}[m.sign])
        w("")
        w(main_table(run, m))
        w("")
    w("## Targets (issue 12)")
    w("")
    rows = targets(run)
    met = sum(r[3] for r in rows)
    reach = [p for p in REACH if p in run.programs]
    over = ""
    if reach:
        over = (f" over the programs issue 12 speaks of "
                f"({', '.join(p for p in run.programs if p in ISSUE12) or 'none in this run'}; "
                "the programs added since have targets of their own: "
                "[The reach programs](#the-reach-programs))")
    w(f"For `{run.default or '–'}` (the attribute as shipped: capturing scopes){over}. "
      f"{met} of {len(rows)} targets met for every program.")
    w("")
    w(table(["target", "measured", "verdict"], [r[:3] for r in rows], ["---", "---", "---"]))
    w("")
    if reach:
        write_reach(run, reach, w)
    w("## The wrapper alone: `BatchAlloc` under code as written")
    w("")
    w("What installing `BatchAlloc` costs a program that has no annotation: as written on the "
      "wrapper against as written on the allocator it wraps (target: at most +3% instructions).")
    w("")
    w(wrapper_table(run))
    w("")
    w("## Every cell")
    w("")
    for p in results["programs"]:
        boxes = run.boxes(p["name"])
        w(f"### {p['name']}: {p['about']}")
        w("")
        w(f"Size {p['size']:,} {p['unit']}; input {input_text(run, p['name'])}; "
          f"{boxes:,} boxes per run." if boxes is not None else "")
        w("")
        w(detail_table(run, p["name"]))
        w("")
    w("*First run*: the median over rounds of each process's first run (a fresh heap). "
      "*RSS before the run*: resident memory once the input is built. *Served by "
      "batch-alloc*: per run, from `batch_alloc::stats()`: allocations served from scopes "
      "(`scoped_allocations`), boxes from batches (`batched_boxes`), and the refills that "
      "made the scopes' runs and the batches (`reserve_calls`).")
    w("")
    w("## Method")
    w("")
    w(method(run))
    w("")
    w("Programs and sizes (`suite_system program list`; another size with "
      "`--size NAME=N`):")
    w("")
    w(table(["program", "size", "input", "what one run does"],
            [[p["name"], f"{p['size']:,} {p['unit']}", input_text(run, p["name"]),
              p["about"] + (f". {REACH[p['name']]}" if p["name"] in REACH else "")]
             for p in results["programs"]],
            ["---", "---:", "---:", "---"]))
    w("")
    w("## Running it")
    w("")
    w("```sh")
    w(RUNNING)
    w("```")
    w("")
    w("A cell by hand: `target/release/deps/suite_batch_system-* program stmt attr 3` prints "
      "its JSON line; `program list` the programs, sizes and variants. The variants are "
      "`benches/suite/real.rs`'s `Variant`: another is a variant there, a module where each "
      "program's source writes out its twins (if it is a twin of its own), and an arm in each "
      "program's `run`; the driver and this page take the list from `program list` and give "
      "each its columns.")
    w("")
    w("## Machine and noise")
    w("")
    w(table(["", ""], machine_rows(results), ["---", "---"]))
    w("")
    spreads = spread_text({f"{p}/{b}/{v}": run.times(p, b, v) for p, b, v in run.each_cell()},
                          "cells")
    w("The machine has 2 cores shared with other work. "
      + (spreads + " " if spreads else "") + "Instruction counts do not move with load.")
    w("")
    during = loads(run)
    if during:
        w(f"Load average (1 min) during the rounds: min {during[0]:.1f}, median "
          f"{statistics.median(during):.1f}, max {during[-1]:.1f}.")
        w("")
    with open(doc, "w") as f:
        f.write("\n".join(out).rstrip() + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--doc", default="docs/programs.md")
    args = ap.parse_args()
    results = load_results(args.results, args.doc, "programs.json")
    write(results, args.doc)


if __name__ == "__main__":
    main()
